// Whether the processes of a communicator's ranks still exist. Two sources
// tell: this rank watches the peers it can see itself (the same kernel and
// PID namespace, i.e. the same node) through /proc; every other peer's
// endpoints use UCX's peer error handling, whose callback reports the peer
// gone (report_gone) when its connection breaks. Waits that depend on a
// peer check dead_peer() now and then, so a rank that died (kill -9, a
// crash, the OOM killer) ends them with an error naming it, not a hang,
// even when mpirun lets the job go on (--enable-recovery).
#pragma once

#include <mpi.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace mpidsm::detail {

class PeerLiveness {
 public:
  // Collective: learns which peers' processes this rank can see.
  void exchange(MPI_Comm comm, int rank);
  // Whether this rank watches `peer`'s process itself (false for itself).
  bool watched(int peer) const { return pids_[static_cast<std::size_t>(peer)] != 0; }
  // `peer` is gone, as another source found (UCX's error callback): no
  // allocation, no lock, callable from any thread.
  void report_gone(int peer) noexcept;
  // Where peers write the rank they found gone (+ 1), read by every look.
  void hear_from(const std::uint64_t* told) noexcept { told_ = told; }
  // The first rank found gone, or -1. Looks (a system call per watched
  // peer) at most every 100 ms; cheap otherwise. Thread-safe.
  int dead_peer();
  // The first rank found gone so far, or -1, without looking.
  int first_gone() const { return dead_.load(std::memory_order_relaxed); }
  bool known_gone(int peer) const {
    return gone_[static_cast<std::size_t>(peer)].load(std::memory_order_relaxed);
  }
  // dead_peer() without waiting for the next look: for errors, which
  // should name a peer that died just now.
  int look_now();
  // Every rank known gone, for an error message: "rank 2 is gone (its
  // process died)", "ranks 0 and 2 are gone (their processes died)".
  // Survivors that leave once they see the first death die too, and a
  // rank that looks late sees them all; naming every one keeps the first.
  std::string describe_gone() const;

 private:
  std::vector<std::int64_t> pids_;             // per rank: its pid when visible here, else 0
  std::unique_ptr<std::atomic<bool>[]> gone_;  // per rank
  std::atomic<std::uint64_t> next_look_ns_{0};
  std::atomic<int> dead_{-1};  // the first rank found gone
  const std::uint64_t* told_ = nullptr;
  // A rank a peer told of counts as gone, before any it found itself: the
  // peer that told then closed its endpoints, which only looks like a death.
  void take_told() noexcept;
  void mark_gone(int peer) noexcept;
};

// The argument of UCX's error callback on the endpoints to `rank`.
struct PeerWatch {
  PeerLiveness* liveness;
  int rank;
};

}  // namespace mpidsm::detail
