// Without a signal context to detour, the fault servicer hands faults from
// signal handlers to its own thread.
#include "dsm/fault/fault_servicer.hpp"

#include <gtest/gtest.h>
#include <pthread.h>
#include <signal.h>

#include <atomic>
#include <cstdint>
#include <thread>
#include <vector>

namespace mpidsm::detail {
namespace {

// Resolves a fault as `resolved` when the address is even, counts the
// faults it saw in the caller's state and records the thread it ran on.
struct Recorder {
  std::atomic<std::uint64_t> served{0};
  std::atomic<bool> ran_on_a_caller{false};
};
thread_local bool is_caller = false;

FaultOutcome record(void* owner, void* address, FaultAccess, void* caller_state) noexcept {
  auto& recorder = *static_cast<Recorder*>(owner);
  if (is_caller) recorder.ran_on_a_caller = true;
  ++*static_cast<std::uint64_t*>(caller_state);
  recorder.served.fetch_add(1);
  return reinterpret_cast<std::uintptr_t>(address) % 2 == 0 ? FaultOutcome::resolved
                                                            : FaultOutcome::not_ours;
}

TEST(FaultServicer, ResolvesEveryPostedFaultOnItsOwnThreadWithTheCallersState) {
  Recorder recorder;
  FaultServicer servicer(&record, &recorder);
  constexpr int kThreads = 4;
  constexpr std::uint64_t kFaults = 5000;
  std::vector<std::uint64_t> seen(kThreads, 0);
  std::vector<std::uint64_t> wrong(kThreads, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      is_caller = true;
      for (std::uint64_t i = 0; i < kFaults; ++i) {
        auto* address = reinterpret_cast<void*>(static_cast<std::uintptr_t>(i + t));
        const FaultOutcome expected =
            (i + t) % 2 == 0 ? FaultOutcome::resolved : FaultOutcome::not_ours;
        wrong[t] += servicer.resolve(address, FaultAccess::read, &seen[t], nullptr) != expected;
      }
    });
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(recorder.served.load(), kThreads * kFaults);
  EXPECT_FALSE(recorder.ran_on_a_caller.load());
  for (int t = 0; t < kThreads; ++t) {
    EXPECT_EQ(seen[t], kFaults) << "thread " << t;
    EXPECT_EQ(wrong[t], 0u) << "thread " << t;
  }
}

FaultServicer* servicer_for_signal = nullptr;
std::uint64_t handled_in_signal = 0;
FaultOutcome outcome_in_signal = FaultOutcome::already_accessible;

void on_usr1(int) {
  outcome_in_signal = servicer_for_signal->resolve(reinterpret_cast<void*>(2), FaultAccess::write,
                                                   &handled_in_signal, nullptr);
}

TEST(FaultServicer, ResolvesAFaultPostedFromASignalHandler) {
  Recorder recorder;
  FaultServicer servicer(&record, &recorder);
  servicer_for_signal = &servicer;
  struct sigaction action {
  }, previous{};
  action.sa_handler = on_usr1;
  ASSERT_EQ(sigaction(SIGUSR1, &action, &previous), 0);
  ASSERT_EQ(pthread_kill(pthread_self(), SIGUSR1), 0);  // delivered before it returns
  sigaction(SIGUSR1, &previous, nullptr);
  EXPECT_EQ(outcome_in_signal, FaultOutcome::resolved);
  EXPECT_EQ(handled_in_signal, 1u);
  EXPECT_EQ(recorder.served.load(), 1u);
}

TEST(FaultServicer, StopsWhenIdle) {
  Recorder recorder;
  { FaultServicer servicer(&record, &recorder); }
  EXPECT_EQ(recorder.served.load(), 0u);
}

}  // namespace
}  // namespace mpidsm::detail
