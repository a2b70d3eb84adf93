// How a wait gives its CPU away while nothing happens, where ranks
// outnumber the cores (Transport::yield_when_idle): it yields at first,
// and a wait that stays idle for many yields sleeps instead.
//
// Why not yield throughout: under Linux's EEVDF scheduler (6.6 on), each
// sched_yield() moves the caller's virtual deadline one time slice later,
// and the moves add up while the thread keeps running briefly between them.
// A rank that yielded its way through a long wait (a barrier that others
// reach after ms of computing) then loses every pick to the ranks that
// computed, and waits for a CPU until the next tick (4 ms at HZ=250) once
// its wait is over. A yielding waiter still takes its fair share of a core
// too, which the ranks still computing lack. A sleep gives the core away
// outright, and the thread gets a fresh deadline when it wakes.
//
// Measured on jia_lu across 1+1+1 simulated hosts (three ranks, two cores;
// docs/progress.md): the ranks left a barrier up to 4 ms apart. With sleeps
// after 64 yields, the mean spread between the first and the last rank out
// of the barrier after each panel fell from 0.53-0.65 ms to 0.32-0.41 ms,
// and spreads over 1 ms from 24-30 to 5-10 of 160 barriers (three runs
// each). Short waits (a round trip to a peer whose core is busy, 0.1-0.3
// ms) end within their yields, since a sleep would add up to its length to
// each.
#pragma once

#include <sched.h>
#include <time.h>

#include <chrono>

namespace mpidsm::detail {

class IdleBackoff {
 public:
  static constexpr unsigned kYieldsBeforeSleep = 64;
  static constexpr std::chrono::microseconds kSleep{100};

  // Something happened: the wait is busy again, and its next idle yields.
  void progressed() noexcept { yields_ = 0; }
  // Nothing happened for a while: yield, or sleep once the yields are spent.
  void idle() noexcept {
    if (!sleeps_next()) {
      ++yields_;
      sched_yield();
      return;
    }
    timespec pause{0, std::chrono::nanoseconds(kSleep).count()};
    nanosleep(&pause, nullptr);
  }
  bool sleeps_next() const noexcept { return yields_ >= kYieldsBeforeSleep; }

 private:
  unsigned yields_ = 0;
};

}  // namespace mpidsm::detail
