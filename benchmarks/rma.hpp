// The one-sided benchmarks: put/get latency (one operation then completion)
// and put/get bandwidth (a window of operations, one completion).
#pragma once

namespace mpidsm::bench {

enum class Direction { put, get };

// Latency: mpidsm put+quiet / get against MPI_Put / MPI_Get + MPI_Win_flush.
int rma_latency(int argc, char** argv, Direction direction);
// Bandwidth: -W non-blocking operations + quiet against -W MPI ops + MPI_Win_flush.
int rma_bandwidth(int argc, char** argv, Direction direction);

}  // namespace mpidsm::bench
