// How a wait gives its CPU away while nothing happens, where ranks
// outnumber the cores (Transport::yield_when_idle): it yields at first,
// and a wait that stays idle for a millisecond sleeps instead.
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
// in long waits, the mean spread between the first and the last rank out
// of the barrier after each panel fell from 0.53-0.65 ms to 0.32-0.41 ms.
//
// Why a wait turns to sleeping after a time rather than a count of yields:
// a yield returns at once where nothing else is runnable on the CPU, so 64
// of them (the first rule) passed in 0.1 ms or less, and round trips to a
// peer whose core is busy (0.1-0.3 ms: jia_water's lock acquires) slept
// 100 us plus the timer's slack, leaving a core idle meanwhile (a quarter
// of both cores during jia_water's DSM phase across 1+1+1). A wait idle
// for 1 ms waits for a peer that computes, not for a round trip.
#pragma once

#include <sched.h>
#include <time.h>

#include <chrono>

namespace mpidsm::detail {

class IdleBackoff {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr std::chrono::microseconds kYieldFor{1000};
  static constexpr std::chrono::microseconds kSleep{100};

  // Something happened: the wait is busy again, and its next idle yields.
  void progressed() noexcept { idle_ = false; }
  // Nothing happened for a while: yield, or sleep once the wait has been
  // idle for kYieldFor. (`now` is a parameter for the tests' sake.)
  void idle() noexcept { idle(Clock::now()); }
  void idle(Clock::time_point now) noexcept {
    if (!sleeps_next(now)) {
      if (!idle_) idle_since_ = now;
      idle_ = true;
      sched_yield();
      return;
    }
    timespec pause{0, std::chrono::nanoseconds(kSleep).count()};
    nanosleep(&pause, nullptr);
  }
  bool sleeps_next(Clock::time_point now) const noexcept {
    return idle_ && now - idle_since_ >= kYieldFor;
  }

 private:
  bool idle_ = false;
  Clock::time_point idle_since_{};
};

}  // namespace mpidsm::detail
