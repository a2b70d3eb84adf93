// The tagged-messaging benchmarks: ping-pong latency and windowed bandwidth,
// mpidsm Messaging against MPI_Send/MPI_Recv and MPI_Isend/MPI_Irecv.
#pragma once

namespace mpidsm::bench {

int tagged_latency(int argc, char** argv);
int tagged_bandwidth(int argc, char** argv);

}  // namespace mpidsm::bench
