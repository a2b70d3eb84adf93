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
#include <utility>

#include "mpidsm/transport.hpp"

namespace mpidsm::detail {

// Spins until `done()`, yielding the CPU when the transport says waits
// should (more ranks than cores), and checking now and then that every peer
// still lives (a dead one ends the wait with an error naming `operation`).
// It never sleeps, unlike the transport's waits (IdleBackoff): the word it
// watches changes with no message to wake it, so a sleep can delay the
// exit by its whole length after each signal. Sleeps after 64 yields made
// jia_lu's DSM phase slower on one node with 4 ranks on 2 cores: median of
// 5 interleaved runs 0.271 s (0.209-0.285) against 0.235 s (0.185-0.268).
template <class Done>
void spin_until(Transport& transport, Done&& done, const char* operation) {
  for (unsigned spins = 1; !done(); ++spins) {
    if (spins % 64 == 0 && transport.yield_when_idle()) sched_yield();
    if (spins % 1024 == 0) transport.check_peers(operation);
  }
}

// `epoch`: the barriers so far, this one included (1 for the first).
// `word(member, round)`: that member's counter for that round, mapped here
// (rounds below 64); members are numbered 0 to `members` - 1, this rank
// being `me` (a team's own numbering, or the transport's ranks).
template <class Word>
void dissemination_barrier(Transport& transport, int me, int members, std::uint64_t epoch,
                           Word&& word, const char* operation) {
  std::size_t round = 0;
  for (int distance = 1; distance < members; distance *= 2, ++round) {
    std::atomic_ref<std::uint64_t>(word((me + distance) % members, round))
        .fetch_add(1, std::memory_order_release);
    std::atomic_ref<std::uint64_t> mine(word(me, round));
    spin_until(
        transport, [&] { return mine.load(std::memory_order_acquire) >= epoch; }, operation);
  }
}

// Over every rank of the transport.
template <class Word>
void dissemination_barrier(Transport& transport, std::uint64_t epoch, Word&& word,
                           const char* operation) {
  dissemination_barrier(transport, transport.rank(), transport.size(), epoch,
                        std::forward<Word>(word), operation);
}

}  // namespace mpidsm::detail
