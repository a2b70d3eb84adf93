// The threading rules of docs/threading.md: collective calls need a thread MPI
// lets call it (checked with MPI_Query_thread), one-sided calls and messages
// run on any thread, and with MPIDSM_PROGRESS_THREAD=off a second thread
// inside mpidsm is reported by mpidsm instead of corrupting UCX's worker.
// Run at MPI_THREAD_SERIALIZED and, with --thread-level=funneled, at
// MPI_THREAD_FUNNELED; each test asserts what its level implies.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <optional>
#include <thread>

#include "mpi_test_support.hpp"
#include "mpidsm/mpidsm.hpp"

namespace mpidsm {
namespace {

int provided_level() {
  int provided = 0;
  MPI_Query_thread(&provided);
  return provided;
}

// Runs `body` on a new thread and returns the mpidsm::Error it threw, if any.
template <class Body>
std::optional<Error> error_on_another_thread(Body body) {
  std::optional<Error> error;
  std::thread([&] {
    try {
      body();
    } catch (const Error& e) {
      error = e;
    }
  }).join();
  return error;
}

// A collective made off MPI's main thread: fine from MPI_THREAD_SERIALIZED
// up, below it Errc::mpi naming the level and the operation.
void expect_allowed_only_from_serialized(const std::optional<Error>& error, const char* operation) {
  if (provided_level() >= MPI_THREAD_SERIALIZED) {
    EXPECT_FALSE(error.has_value()) << error->what();
    return;
  }
  ASSERT_TRUE(error.has_value());
  EXPECT_EQ(error->code(), Errc::mpi);
  EXPECT_NE(error->message().find("MPI_THREAD_FUNNELED"), std::string::npos) << error->what();
  EXPECT_NE(error->message().find(operation), std::string::npos) << error->what();
}

class Threading : public testing::WorldRuntimeTest<> {};

TEST_F(Threading, CollectivesOffTheMainThreadNeedSerialized) {
  Pgas pgas(*runtime_);
  expect_allowed_only_from_serialized(error_on_another_thread([&] { pgas.barrier(); }),
                                      "Pgas::barrier");
  // Either way the runtime goes on: the main thread's barrier works.
  pgas.barrier();
}

TEST_F(Threading, RuntimeCreationOffTheMainThreadNeedsSerialized) {
  expect_allowed_only_from_serialized(
      error_on_another_thread([] { Runtime other(MPI_COMM_WORLD); }), "Runtime creation");
}

// Non-collective calls never call MPI: any thread may make them at any level.
TEST_F(Threading, OneSidedCallsAndMessagesRunOnAnyThread) {
  Pgas pgas(*runtime_);
  Transport& t = runtime_->transport();
  const int me = t.rank(), n = t.size();
  const int to = (me + 1) % n, from = (me + n - 1) % n;
  auto word = pgas.allocate<std::uint64_t>(1);
  word[0] = 0;
  pgas.barrier();
  auto error = error_on_another_thread([&] {
    const std::uint64_t value = 100 + me;
    pgas.put(word.at(to), &value, 1);
    pgas.quiet();
    const int out = me;
    int in = -1;
    t.send(to, 5, &out, sizeof out);
    t.recv(from, 5, &in, sizeof in);
    EXPECT_EQ(in, from);
  });
  EXPECT_FALSE(error.has_value()) << error->what();
  pgas.barrier();
  EXPECT_EQ(word[0], std::uint64_t(100 + from));
  pgas.free(word);
}

// A thread blocked in recv is inside mpidsm; a second thread's call is
// reported when the worker is single-threaded (MPIDSM_PROGRESS_THREAD=off),
// and simply runs otherwise. Rank 1 sends the message that ends rank 0's
// receive once rank 0 has seen the outcome, signalled through plain MPI.
TEST_F(Threading, ASecondThreadInsideMpidsmIsReportedWhenProgressIsOff) {
  Transport& t = runtime_->transport();
  if (t.size() < 2) GTEST_SKIP() << "needs a second rank to end the receive";
  const bool single_threaded_worker = runtime_->config().progress_thread == ProgressMode::off;
  if (t.rank() == 0) {
    std::atomic<bool> receiving{false};
    int word = 0;
    std::thread receiver([&] {
      receiving = true;
      // The main thread's probe may take the worker first; then this thread
      // is the second one inside, and tries again until it is the first.
      for (bool received = false; !received;) {
        try {
          t.recv(1, 61, &word, sizeof word);
          received = true;
        } catch (const Error& e) {
          if (!single_threaded_worker || e.code() != Errc::invalid_state) throw;
        }
      }
    });
    while (!receiving) std::this_thread::yield();
    // Keep calling in until the receiver is surely inside recv.
    std::optional<Error> seen;
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (!seen && std::chrono::steady_clock::now() < give_up) {
      try {
        t.probe(1, 62);
      } catch (const Error& e) {
        seen = e;
      }
      if (!single_threaded_worker &&
          std::chrono::steady_clock::now() + std::chrono::seconds(4) > give_up)
        break;  // a multi-threaded worker takes both threads: a second is enough
    }
    int token = 1;
    MPI_Send(&token, 1, MPI_INT, 1, 0, MPI_COMM_WORLD);
    receiver.join();
    EXPECT_EQ(word, 4242);
    if (single_threaded_worker) {
      ASSERT_TRUE(seen.has_value());
      EXPECT_EQ(seen->code(), Errc::invalid_state);
      EXPECT_NE(seen->message().find("probe"), std::string::npos) << seen->what();
      EXPECT_NE(seen->message().find("(recv)"), std::string::npos) << seen->what();
      EXPECT_NE(seen->message().find("MPIDSM_PROGRESS_THREAD=off"), std::string::npos)
          << seen->what();
    } else {
      EXPECT_FALSE(seen.has_value()) << seen->what();
    }
  } else if (t.rank() == 1) {
    int token = 0;
    MPI_Recv(&token, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    const int word = 4242;
    t.send(0, 61, &word, sizeof word);
  }
  t.barrier();
}

// With MPIDSM_PROGRESS_THREAD=off and peers that need this rank's progress
// (tcp), Open MPI's progress loop borrows the single-threaded worker while
// the main thread is blocked in MPI; another thread's calls meanwhile wait
// for that poll instead of being reported as a second thread inside.
TEST_F(Threading, CallsBesideAThreadBlockedInMpiRunWhenProgressIsOff) {
  Transport& t = runtime_->transport();
  if (t.size() < 2) GTEST_SKIP() << "needs a second rank to end the MPI receive";
  MemoryRegion region = t.allocate(64);  // unmappable over tcp: peers need our progress
#ifdef OPEN_MPI
  if (runtime_->config().progress_thread == ProgressMode::off && testing::tcp_only()) {
    EXPECT_TRUE(runtime_->progress_in_mpi()) << "MPI's loop is the only one serving peers";
  }
#endif
  if (t.rank() == 0) {
    std::atomic<bool> stop{false};
    std::optional<Error> seen;
    long calls = 0;
    std::thread caller([&] {
      while (!stop) {
        try {
          t.probe(1, 62);
          ++calls;
        } catch (const Error& e) {
          seen = e;
          return;
        }
      }
    });
    int token = 0;
    MPI_Recv(&token, 1, MPI_INT, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    stop = true;
    caller.join();
    EXPECT_FALSE(seen.has_value()) << seen->what();
    EXPECT_GT(calls, 0);
  } else if (t.rank() == 1) {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    const int token = 1;
    MPI_Send(&token, 1, MPI_INT, 0, 0, MPI_COMM_WORLD);
  }
  t.barrier();
  t.deregister(region);
}

}  // namespace
}  // namespace mpidsm
