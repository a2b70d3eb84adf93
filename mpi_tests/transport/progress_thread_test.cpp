// Target-side progress where UCX emulates RMA and atomics with active
// messages (run with UCX_TLS=tcp,self): rank 0 puts, gets and updates atomics
// on every other rank while those ranks sit in calls that never enter mpidsm,
// or wait inside mpidsm (which then drives UCX while the thread stays parked),
// or drive UCX themselves.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "mpi_test_support.hpp"
#include "mpidsm/runtime.hpp"
#include "transport/library_messaging.hpp"
#include "transport/progress/progress_control.hpp"
#include "transport/progress/scheduler_slice.hpp"

namespace mpidsm {
namespace {

using detail::DrivingProgress;
using detail::ProgressControl;
using testing::fill_pattern;
using testing::first_mismatch;

constexpr std::size_t kBytes = 256 << 10;

// MPIDSM_PROGRESS_THREAD=off (the .nothread variant): only waits inside
// mpidsm and MPI's progress loop serve peers.
bool threadless(const Runtime& rt) {
  return rt.config().progress_thread == ProgressMode::off;
}

// Rank 0 drives a put/get/atomic exchange with every other rank, once per
// `idle_wait`, in one Runtime; they wait in it meanwhile, then check what
// arrived.
template <class... IdleWaits>
void exchange_while_targets_idle(IdleWaits... idle_waits) {
  Runtime rt(MPI_COMM_WORLD);
  Transport& t = rt.transport();
  ASSERT_TRUE(testing::tcp_only()) << "this test is meant for UCX_TLS=tcp,self";
  MemoryRegion region = t.allocate(kBytes + 64);
  ASSERT_EQ(rt.size() > 1 && !threadless(rt), rt.progress_thread_running())
      << "auto mode starts the progress thread once a peer's memory is unmappable";
  auto* local = static_cast<std::uint8_t*>(region.local_base());
  auto exchange = [&](auto idle_wait) {
    fill_pattern(local, t.rank(), 0, kBytes);
    *reinterpret_cast<std::uint64_t*>(local + kBytes) = 0;
    t.barrier();
    if (t.rank() == 0) {
      std::vector<std::uint8_t> buffer(kBytes);
      for (int peer = 1; peer < t.size(); ++peer) {
        t.get(peer, region, 0, buffer.data(), kBytes);
        EXPECT_EQ(first_mismatch(buffer.data(), peer, 0, kBytes), kBytes) << "get from " << peer;
        fill_pattern(buffer.data(), 0, peer, kBytes);
        t.put(peer, region, 0, buffer.data(), kBytes);
        for (int i = 0; i < 100; ++i)
          EXPECT_EQ(t.atomic_fetch<std::uint64_t>(AtomicOp::add, peer, region, kBytes, 2),
                    std::uint64_t(2 * i));
        EXPECT_EQ(
            t.atomic_fetch<std::uint64_t>(AtomicOp::compare_swap, peer, region, kBytes, 7, 200),
            200u);
      }
      for (int peer = 1; peer < t.size(); ++peer)
        MPI_Send(nullptr, 0, MPI_BYTE, peer, 0, MPI_COMM_WORLD);
    } else {
      idle_wait(t);
      EXPECT_EQ(first_mismatch(local, 0, t.rank(), kBytes), kBytes);
      EXPECT_EQ(*reinterpret_cast<std::uint64_t*>(local + kBytes), 7u);
    }
    t.barrier();
  };
  (exchange(idle_waits), ...);
  t.deregister(region);
}

// Sleeps until rank 0's message is there, never calling into mpidsm.
void sleep_until_rank0_is_done(Transport&) {
  int arrived = 0;
  while (!arrived) {
    usleep(20000);
    MPI_Iprobe(0, 0, MPI_COMM_WORLD, &arrived, MPI_STATUS_IGNORE);
  }
  MPI_Recv(nullptr, 0, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}

TEST(ProgressThread, TargetsBlockedInMpiRecv) {
  exchange_while_targets_idle(
      [](Transport&) { MPI_Recv(nullptr, 0, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE); });
}

// The targets' own wait serves rank 0's operations; the exchange ends only if
// it does (and the barrier before it, also a wait inside mpidsm, must have
// left the thread free to serve the MPI_Recv tests).
// A target blocked in MPI is served by MPI's own progress loop (Open MPI's
// progress hook, MPIDSM_PROGRESS_IN_MPI), not only by its woken thread;
// without a thread (MPIDSM_PROGRESS_THREAD=off), by that loop alone.
TEST(ProgressThread, TargetsBlockedInMpiAreServedByMpisProgressLoop) {
  Runtime probe(MPI_COMM_WORLD);
  // Starts the progress thread, as peers cannot map the region.
  MemoryRegion region = probe.transport().allocate(64);
  ASSERT_TRUE(probe.progress_thread_running() != threadless(probe) || probe.size() == 1);
#ifdef OPEN_MPI
  const bool expected = probe.size() > 1 && probe.config().progress_in_mpi;
#else
  const bool expected = false;  // the hook is Open MPI's
#endif
  EXPECT_EQ(probe.progress_in_mpi(), expected);
  std::uint64_t served = 0;
  bool oversubscribed = false;
  exchange_while_targets_idle([&](Transport& t) {
    const std::uint64_t before = ProgressControl(t).progressed_from_mpi();
    MPI_Recv(nullptr, 0, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    served = ProgressControl(t).progressed_from_mpi() - before;
    oversubscribed = t.yield_when_idle();
  });
  if (probe.rank() != 0) {
    // With more ranks than cores, Open MPI's wait yields its core at every
    // idle round, and the woken thread may serve every operation itself.
    if (expected && (!oversubscribed || threadless(probe))) {
      EXPECT_GT(served, 0u) << "rank 0's operations all waited for the progress thread";
    }
    if (!expected) {
      EXPECT_EQ(served, 0u);
    }
  }
  probe.transport().deregister(region);
}

// `count` gets of the page at the start of `peer`'s `region`.
void get_page(Transport& t, int peer, const MemoryRegion& region, int count) {
  std::vector<std::uint8_t> buffer(4096);
  for (int i = 0; i < count; ++i) t.get(peer, region, 0, buffer.data(), buffer.size());
}

// While MPI's loop serves a target blocked in MPI, the worker's fd is muted
// for the sleeping thread, which would otherwise wake for requests the loop
// serves anyway (across two hosts with no CPU to spare, a DSM read miss from
// a home in MPI_Barrier took 29-31 us that way, 23-24 us muted).
TEST(ProgressThread, MpisLoopServingATargetMutesItsThread) {
  Runtime rt(MPI_COMM_WORLD);
  Transport& t = rt.transport();
  ASSERT_TRUE(testing::tcp_only()) << "this test is meant for UCX_TLS=tcp,self";
  MemoryRegion region = t.allocate(4096);
  t.barrier();
  if (t.rank() == 0) {
    for (int peer = 1; peer < t.size(); ++peer) {
      get_page(t, peer, region, 200);
      MPI_Send(nullptr, 0, MPI_BYTE, peer, 0, MPI_COMM_WORLD);
    }
  } else {
    const std::uint64_t served = ProgressControl(t).progressed_from_mpi();
    MPI_Recv(nullptr, 0, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (ProgressControl(t).progressed_from_mpi() > served) {
      EXPECT_GT(ProgressControl(t).mpi_serving_episodes(), 0u)
          << "MPI's loop served without muting the thread";
    }
  }
  t.barrier();
  t.deregister(region);
}

// Once the rank has left MPI, its thread serves again: here the target,
// first blocked in MPI while rank 0's gets are served from MPI's loop, then
// spins on its own memory, calling neither MPI nor mpidsm, until rank 0's
// put ends the spin. Rank 0's gets meanwhile complete only if the thread
// watches the worker again.
TEST(ProgressThread, ATargetThatLeftMpiIsServedByItsThreadAgain) {
  Runtime rt(MPI_COMM_WORLD);
  Transport& t = rt.transport();
  ASSERT_TRUE(testing::tcp_only()) << "this test is meant for UCX_TLS=tcp,self";
  MemoryRegion region = t.allocate(4096);
  auto* done = static_cast<volatile std::uint64_t*>(region.local_base());
  *done = 0;
  t.barrier();
  if (t.rank() == 0) {
    for (int peer = 1; peer < t.size(); ++peer) {
      get_page(t, peer, region, 100);
      MPI_Sendrecv(nullptr, 0, MPI_BYTE, peer, 0, nullptr, 0, MPI_BYTE, peer, 0, MPI_COMM_WORLD,
                   MPI_STATUS_IGNORE);
      get_page(t, peer, region, 100);
      const std::uint64_t one = 1;
      t.put(peer, region, 0, &one, sizeof one);
    }
  } else {
    MPI_Recv(nullptr, 0, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    const std::uint64_t helped = ProgressControl(t).progressed_as_helper();
    MPI_Send(nullptr, 0, MPI_BYTE, 0, 0, MPI_COMM_WORLD);  // rank 0's second round starts
    while (*done == 0) {
    }
    EXPECT_GT(ProgressControl(t).progressed_as_helper(), helped)
        << "the thread served the spinning target";
  }
  t.barrier();
  t.deregister(region);
}

TEST(ProgressThread, TargetsWaitingInsideMpidsm) {
  exchange_while_targets_idle([](Transport& t) {
    MPI_Request request;
    MPI_Irecv(nullptr, 0, MPI_BYTE, 0, 0, MPI_COMM_WORLD, &request);
    t.wait_mpi(request, "the test's receive");
  });
}

TEST(ProgressThread, TargetsAsleep) {
  exchange_while_targets_idle(sleep_until_rank0_is_done);
}

// The thread id of this process's progress thread (named "mpidsm-progress"),
// or 0 while there is none.
int progress_thread_id() {
  for (const auto& task : std::filesystem::directory_iterator("/proc/self/task")) {
    std::string name;
    std::getline(std::ifstream(task.path() / "comm"), name);
    if (name == "mpidsm-progress") return std::stoi(task.path().filename().string());
  }
  return 0;
}

// The thread runs with the slice MPIDSM_PROGRESS_SLICE_US names
// (scheduler_slice.hpp), or with 0 the kernel's default, which this test's
// thread has. It asks for it as it starts, so the test looks for up to 10 s.
TEST(ProgressThread, RunsWithTheConfiguredSchedulingSlice) {
  using std::chrono::microseconds;
  Runtime rt(MPI_COMM_WORLD);
  ASSERT_TRUE(testing::tcp_only()) << "this test is meant for UCX_TLS=tcp,self";
  // Memory peers cannot map starts the thread (as in exchange_while_targets_idle).
  MemoryRegion region = rt.transport().allocate(64);
  ASSERT_EQ(rt.size() > 1 && !threadless(rt), rt.progress_thread_running());
  if (!rt.progress_thread_running()) GTEST_SKIP() << "no progress thread runs";
  const microseconds default_slice = detail::scheduler_slice_of(0);
  if (default_slice.count() == 0)
    GTEST_SKIP() << "this kernel reports no scheduling slices (Linux 6.12 and later do)";
  const std::size_t configured = rt.config().progress_slice_us;
  if (configured != 0) {
    // A seccomp filter (a container's) may refuse sched_setattr.
    bool granted = false;
    std::thread([&] {
      granted = detail::request_scheduler_slice(microseconds(configured)) &&
                detail::scheduler_slice_of(0) == microseconds(configured);
    }).join();
    if (!granted) GTEST_SKIP() << "this system refuses a thread's request for its own slice";
  }
  const microseconds wanted = configured != 0 ? microseconds(configured) : default_slice;
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  int thread = 0;
  microseconds slice{};
  while (std::chrono::steady_clock::now() < give_up) {
    thread = progress_thread_id();
    slice = thread != 0 ? detail::scheduler_slice_of(thread) : microseconds{};
    if (slice == wanted) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  EXPECT_NE(thread, 0) << "rank " << rt.rank() << ": no thread named mpidsm-progress";
  EXPECT_EQ(slice.count(), wanted.count()) << "rank " << rt.rank() << ", progress thread " << thread
                                           << ", MPIDSM_PROGRESS_SLICE_US=" << configured;
  rt.transport().barrier();
  rt.transport().deregister(region);
}

// A thread driving progress (Transport::Driving, as a DSM barrier does across
// nodes) keeps the progress thread out, so only its own calls serve rank 0;
// once the scope ends, the progress thread serves the targets asleep again.
// The first round, served by the progress thread, makes sure it runs.
TEST(ProgressThread, TargetsDrivingTheirOwnProgress) {
  exchange_while_targets_idle(
      sleep_until_rank0_is_done,
      [](Transport& t) {
        DrivingProgress driving(t);
        EXPECT_TRUE(ProgressControl(t).others_progressing())
            << "the progress thread would enter the worker";
        for (int arrived = 0; !arrived;) {
          t.progress();
          MPI_Iprobe(0, 0, MPI_COMM_WORLD, &arrived, MPI_STATUS_IGNORE);
        }
        MPI_Recv(nullptr, 0, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      },
      [](Transport& t) {
        EXPECT_FALSE(ProgressControl(t).others_progressing());
        sleep_until_rank0_is_done(t);
      });
}

constexpr int kMessageTag = 7;

// Rank 0 sends each peer a message large enough for rendezvous, whose bytes
// leave only as rank 0 progresses, then waits for something else
// (`sender_waits`) while the peers wait for the message: that wait must
// drive the message too. Each peer then runs `after_receiving`.
template <class SenderWaits, class AfterReceiving>
void isend_then_wait_elsewhere(Transport& t, SenderWaits sender_waits,
                               AfterReceiving after_receiving) {
  constexpr std::size_t bytes = 4 << 20;
  std::vector<std::uint8_t> buffer(bytes);
  if (t.rank() == 0) {
    fill_pattern(buffer.data(), 0, 0, bytes);
    std::vector<Request> sends;
    for (int peer = 1; peer < t.size(); ++peer)
      sends.push_back(t.isend(peer, kMessageTag, buffer.data(), bytes));
    sender_waits();
    for (Request& r : sends) r.wait();
  } else {
    EXPECT_EQ(t.recv(0, kMessageTag, buffer.data(), bytes).size, bytes);
    EXPECT_EQ(first_mismatch(buffer.data(), 0, 0, bytes), bytes);
    after_receiving();
  }
}

void mpi_barrier() {
  MPI_Barrier(MPI_COMM_WORLD);
}

// A program that only sends messages starts no progress thread, yet a
// sender blocked in MPI moves its rendezvous on, as MPI's own MPI_Isend
// would: MPI's loop drives the messaging worker once the rank has used
// messaging (with Open MPI and MPIDSM_PROGRESS_IN_MPI, the default).
TEST(MessagesOnly, AnIsendMovesOnWhileItsSenderIsBlockedInMpi) {
  Runtime rt(MPI_COMM_WORLD);
  Transport& t = rt.transport();
  ASSERT_TRUE(testing::tcp_only()) << "this test is meant for UCX_TLS=tcp,self";
  isend_then_wait_elsewhere(t, mpi_barrier, mpi_barrier);
  EXPECT_FALSE(rt.progress_thread_running());
#ifdef OPEN_MPI
  EXPECT_TRUE(rt.progress_in_mpi());
#endif
  t.barrier();
}

// Messages beside one-sided operations over tcp: a runtime whose region
// peers cannot map (auto mode starts the progress thread, and MPI's progress
// hook), its first word zero on every rank before the test body runs.
class MessagesOverTcp : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(testing::tcp_only()) << "this test is meant for UCX_TLS=tcp,self";
    region = t.allocate(4096);
    word().store(0);
    t.barrier();
  }
  void TearDown() override {
    t.barrier();
    t.deregister(region);
  }
  std::atomic_ref<std::uint64_t> word() {
    return std::atomic_ref<std::uint64_t>(*static_cast<std::uint64_t*>(region.local_base()));
  }

  Runtime rt{MPI_COMM_WORLD};
  Transport& t = rt.transport();
  MemoryRegion region;
};

// A target waiting for a message serves rank 0's one-sided operations
// meanwhile: messages have a worker of their own, and the wait leaves the
// other to the progress thread or, without one, drives it too. Rank 0's
// message comes only after its gets and atomics have completed.
TEST_F(MessagesOverTcp, TargetsWaitingInsideMpidsmForAMessage) {
  constexpr std::uint64_t rounds = 50;
  if (t.rank() == 0) {
    for (int peer = 1; peer < t.size(); ++peer) {
      get_page(t, peer, region, 10);
      for (std::uint64_t i = 0; i < rounds; ++i)
        EXPECT_EQ(t.atomic_fetch<std::uint64_t>(AtomicOp::add, peer, region, 0, 1), i);
      t.send(peer, kMessageTag, nullptr, 0);
    }
  } else {
    EXPECT_EQ(t.recv(0, kMessageTag, nullptr, 0).size, 0u);
    EXPECT_EQ(word().load(), rounds);
  }
}

// Rank 0 polls each peer's word with remote atomics (waits inside mpidsm
// that call no MPI) until the peer, having received its message, sets it.
TEST_F(MessagesOverTcp, AnIsendMovesOnWhileItsSenderIsWaitingInsideMpidsm) {
  isend_then_wait_elsewhere(
      t,
      [&] {
        for (int peer = 1; peer < t.size(); ++peer)
          while (t.atomic_fetch<std::uint64_t>(AtomicOp::add, peer, region, 0, 0) == 0) {
          }
      },
      [&] { word().store(1); });
}

TEST_F(MessagesOverTcp, AnIsendMovesOnWhileItsSenderIsBlockedInMpi) {
  isend_then_wait_elsewhere(t, mpi_barrier, mpi_barrier);
}

// A ping-pong of tagged messages between ranks on different nodes (tcp)
// makes no system call to keep the progress thread asleep: before messages
// had a worker of their own, each remote wait muted and unmuted the
// worker's fd in the thread's epoll set, which cost a tagged 8-byte
// ping-pong across two hosts 1.1 us of its 5.3 (docs/progress.md).
TEST_F(MessagesOverTcp, WaitsForMessagesLeaveTheSleepingThreadAlone) {
  ASSERT_EQ(rt.progress_thread_running(), rt.size() > 1);
  // First, one-sided waits on a remote peer do mute the thread, once it has
  // made its first call (until then there is nothing to mute).
  const int next = (t.rank() + 1) % t.size();
  std::uint64_t value = 0;
  const std::uint64_t before_gets = ProgressControl(t).progress_thread_mutes();
  for (int i = 0; i < 100'000 && ProgressControl(t).progress_thread_mutes() == before_gets; ++i)
    t.get(next, region, 0, &value, sizeof value);
  EXPECT_GT(ProgressControl(t).progress_thread_mutes(), before_gets)
      << "one-sided waits never muted the thread";
  t.barrier();
  const std::uint64_t mutes = ProgressControl(t).progress_thread_mutes();
  value = 0;
  for (int i = 0; i < 200; ++i) {
    if (t.rank() == 0) {
      for (int peer = 1; peer < t.size(); ++peer) {
        t.send(peer, kMessageTag, &value, sizeof value);
        t.recv(peer, kMessageTag, &value, sizeof value);
      }
    } else {
      t.recv(0, kMessageTag, &value, sizeof value);
      ++value;
      t.send(0, kMessageTag, &value, sizeof value);
    }
  }
  EXPECT_EQ(ProgressControl(t).progress_thread_mutes(), mutes)
      << "waits for messages muted the thread";
  if (t.rank() == 0) {
    EXPECT_EQ(value, std::uint64_t(200 * (t.size() - 1)));
  }
}

// An agreed message through the worker wakes a peer's sleeping progress
// thread, which takes it in; one through the messaging lane (the DSM
// barrier's records, whose receiver will wait for them) leaves it asleep.
// Rank 0 sends while its peers sleep outside mpidsm and MPI, then the peers
// receive both.
TEST_F(MessagesOverTcp, AgreedMessagesOnTheMessagesLaneWakeNoSleepingThread) {
  using Lane = detail::LibraryMessaging::Lane;
  ASSERT_EQ(rt.progress_thread_running(), rt.size() > 1);
  detail::LibraryMessaging messaging(t);
  for (const Lane lane : {Lane::worker, Lane::messages}) {
    const bool wakes = lane == Lane::worker;
    const std::uint32_t key = wakes ? 11 : 12;
    std::vector<std::uint64_t> out(static_cast<std::size_t>(t.size()));
    std::vector<Request> sends;
    MPI_Barrier(MPI_COMM_WORLD);
    usleep(20'000);  // MPI's loop no longer serves the peers: their threads sleep unmuted
    const std::uint64_t helped = ProgressControl(t).progressed_as_helper();
    if (t.rank() == 0) {
      usleep(20'000);  // the peers have looked at their threads' count
      for (int peer = 1; peer < t.size(); ++peer) {
        out[static_cast<std::size_t>(peer)] = 1000 + static_cast<std::uint64_t>(peer) + key;
        sends.push_back(messaging.send_agreed(peer, key, &out[static_cast<std::size_t>(peer)],
                                              sizeof(std::uint64_t), lane));
      }
    } else {
      usleep(100'000);  // the message arrives meanwhile
      const std::uint64_t woken = ProgressControl(t).progressed_as_helper() - helped;
      if (wakes) {
        EXPECT_GT(woken, 0u) << "a message through the worker left the thread asleep";
      } else {
        EXPECT_EQ(woken, 0u) << "a message through the messaging lane woke the thread";
      }
      std::uint64_t in = 0;
      Request receive = messaging.receive_agreed(0, key, &in, sizeof in, lane);
      detail::LibraryMessaging::wait_serving_peers(receive);
      EXPECT_EQ(in, 1000 + static_cast<std::uint64_t>(t.rank()) + key);
    }
    for (Request& send : sends) detail::LibraryMessaging::wait_serving_peers(send);
  }
}

}  // namespace
}  // namespace mpidsm
