// Whether the processes of a communicator's ranks still exist, for the peers
// this rank can see (the same kernel and PID namespace, i.e. the same node).
// Waits that depend on a peer check it now and then, so a rank that died
// (kill -9, a crash, the OOM killer) ends them with an error naming it, not
// a hang, even when mpirun lets the job go on (--enable-recovery).
#pragma once

#include <mpi.h>

#include <atomic>
#include <cstdint>
#include <vector>

namespace mpidsm::detail {

class PeerLiveness {
 public:
  // Collective: learns which peers' processes this rank can see.
  void exchange(MPI_Comm comm, int rank);
  // The first rank whose process is gone, or -1. Looks (a system call per
  // visible peer) at most every 100 ms; cheap otherwise. Thread-safe.
  int dead_peer();

 private:
  int look();

  std::vector<std::int64_t> pids_;  // per rank: its pid when visible here, else 0
  std::atomic<std::uint64_t> next_look_ns_{0};
  std::atomic<int> dead_{-1};
};

}  // namespace mpidsm::detail
