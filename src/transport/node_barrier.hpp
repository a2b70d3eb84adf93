// A dissemination barrier on words every rank maps (all ranks on one node):
// in round k this rank signals rank (me + 2^k) % n and waits for the signal
// of rank (me - 2^k) % n, so every rank has heard from every other after
// ceil(log2 n) rounds. Each round's word counts the signals its rank
// received, so a barrier waits for the count to reach the number of
// barriers so far (no reset, no race with a rank already in the next
// barrier). Release and acquire order each signal after what a rank stored
// before it. Faster than MPI_Barrier on one node (no MPI progress, no
// request), and a wait that can end with an error: a spinning rank notices
// a peer whose process is gone.
#pragma once

#include <sched.h>

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "mpidsm/transport.hpp"

namespace mpidsm::detail {

// `epoch`: the barriers so far, this one included (1 for the first).
// `word(rank, round)`: that rank's counter for that round, mapped here
// (rounds below 64).
template <class Word>
void dissemination_barrier(Transport& transport, std::uint64_t epoch, Word&& word,
                           const char* operation) {
  const int ranks = transport.size(), me = transport.rank();
  std::size_t round = 0;
  for (int distance = 1; distance < ranks; distance *= 2, ++round) {
    std::atomic_ref<std::uint64_t>(word((me + distance) % ranks, round))
        .fetch_add(1, std::memory_order_release);
    std::atomic_ref<std::uint64_t> mine(word(me, round));
    for (unsigned spins = 1; mine.load(std::memory_order_acquire) < epoch; ++spins) {
      if (spins % 64 == 0 && transport.yield_when_idle()) sched_yield();
      if (spins % 1024 == 0) transport.check_peers(operation);
    }
  }
}

}  // namespace mpidsm::detail
