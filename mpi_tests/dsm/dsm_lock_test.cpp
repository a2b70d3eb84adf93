// DSM locks under mpirun: message passing through a lock, an exact counter,
// lock scope (writes under a lock are seen by its next holder, without any
// barrier), lock objects, and misuse reported on the right ranks.
#include <gtest/gtest.h>

#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <mutex>
#include <thread>

#include "dsm_fixture.hpp"

namespace mpidsm {
namespace {

using testing::DsmTest;

TEST_F(DsmTest, MessagePassingThroughALock) {
  Dsm& d = *dsm_;
  const int me = runtime_->rank(), n = runtime_->size();
  constexpr std::size_t kWords = 3000;  // spans pages
  struct Mailbox {
    std::uint64_t ready;
    std::uint64_t words[kWords];
  };
  auto* box = d.allocate<Mailbox>(1, Placement::on(n - 1));
  d.barrier();
  constexpr std::size_t kLock = 7;
  if (me == 0) {
    d.lock(kLock);
    for (std::size_t i = 0; i < kWords; ++i) box->words[i] = i * i + 11;
    box->ready = 1;
    d.unlock(kLock);
  } else {
    for (bool seen = false; !seen;) {
      d.lock(kLock);
      seen = box->ready == 1;
      if (seen) {
        for (std::size_t i = 0; i < kWords; ++i) ASSERT_EQ(box->words[i], i * i + 11) << i;
      }
      d.unlock(kLock);
    }
  }
  d.barrier();
  d.free(box);
}

TEST_F(DsmTest, CounterIncrementedUnderALockByEveryRankEndsExact) {
  Dsm& d = *dsm_;
  const int n = runtime_->size();
  constexpr int kIncrements = 300;
  // One counter homed on rank 0, one on the last rank, with lock ids past
  // 1024 to show ids are not a small fixed table.
  auto* counters =
      d.allocate<std::int64_t>(d.page_size() / sizeof(std::int64_t) * 2, Placement::cyclic(1));
  std::int64_t* first = counters;
  std::int64_t* second = counters + d.page_size() / sizeof(std::int64_t) * (n > 1 ? 1 : 0);
  DsmMutex guard_first(d, 2000), guard_second(d, d.lock_count() - 1);
  d.barrier();
  for (int i = 0; i < kIncrements; ++i) {
    {
      std::lock_guard<DsmMutex> hold(guard_first);
      *first += 1;
    }
    std::lock_guard<DsmMutex> hold(guard_second);
    *second += 2;
  }
  d.barrier();
  const std::int64_t expected_second = (first == second ? 3 : 2) * kIncrements * n;
  EXPECT_EQ(*second, expected_second);
  if (first != second) {
    EXPECT_EQ(*first, std::int64_t{kIncrements} * n);
  }
  const DsmStats stats = d.stats();
  EXPECT_GE(stats.lock_acquires, 2u * kIncrements);
  d.barrier();
  d.free(counters);
}

TEST_F(DsmTest, WritesUnderALockAreSeenByItsNextHolderWithoutABarrier) {
  Dsm& d = *dsm_;
  const int me = runtime_->rank(), n = runtime_->size();
  constexpr std::size_t kLock = 42;
  constexpr int kRounds = 4;
  // A turn counter and a log of entries on different pages and homes; each
  // holder appends only in its turn, then checks everything written before.
  const std::size_t per_page = d.page_size() / sizeof(std::int64_t);
  auto* shared = d.allocate<std::int64_t>(per_page * (1 + kRounds * n), Placement::cyclic(1));
  std::int64_t* turn = shared;
  auto entry = [&](std::int64_t k) { return shared + per_page * (1 + k); };
  d.barrier();
  // Every rank caches every page first, so a missed invalidation reads stale zeros.
  std::int64_t sum = *turn;
  for (std::int64_t k = 0; k < kRounds * n; ++k) sum += *entry(k);
  ASSERT_EQ(sum, 0);
  MPI_Barrier(MPI_COMM_WORLD);  // every rank has cached every page before the first write
  for (int done = 0; done < kRounds;) {
    d.lock(kLock);
    const std::int64_t t = *turn;
    if (t % n == me) {
      for (std::int64_t k = 0; k < t; ++k) ASSERT_EQ(*entry(k), 1000 + k) << "entry " << k;
      *entry(t) = 1000 + t;
      *turn = t + 1;
      ++done;
    }
    d.unlock(kLock);
  }
  d.barrier();
  for (std::int64_t k = 0; k < kRounds * n; ++k) EXPECT_EQ(*entry(k), 1000 + k);
  d.barrier();
  d.free(shared);
}

// Where locks are acquired and released through calls to their homes (tcp
// between nodes), the diffs for the lock's own home ride in the release
// call: no diff message of their own, and the next holder still sees them.
// One writer, so that no acquire drops its copy (the uncount at the home
// then needs a flush, and the diffs go as before).
TEST_F(DsmTest, DiffsForTheLocksHomeRideInItsReleaseCall) {
  Dsm& d = *dsm_;
  const int me = runtime_->rank(), n = runtime_->size();
  const int home = n - 1;
  const std::size_t lock = static_cast<std::size_t>(home + 5 * n);  // homed on `home`
  constexpr int kIncrements = 50;
  // Twins and diffs whatever MPIDSM_COHERENCE says (single_writer sends
  // whole pages, each a put of its own).
  auto* counter = d.allocate<std::int64_t>(d.page_size() / sizeof(std::int64_t),
                                           Placement::on(home), Coherence::adaptive);
  d.barrier();
  const DsmStats before = d.stats();
  if (me == 0)
    for (int i = 0; i < kIncrements; ++i) {
      d.lock(lock);
      *counter += 1;
      d.unlock(lock);
    }
  const DsmStats after = d.stats();
  MPI_Barrier(MPI_COMM_WORLD);
  d.lock(lock);  // the next holders, without a barrier
  EXPECT_EQ(*counter, kIncrements) << "rank " << me;
  d.unlock(lock);
  bool all_through_messages = true;
  for (int peer = 0; peer < n; ++peer)
    if (peer != me) all_through_messages &= runtime_->transport().rma_through_messages(peer);
  // Otherwise the diffs go as puts or messages of their own (shared memory
  // or RDMA), or are stores into a mapped home: nothing to count here.
  if (all_through_messages) {
    EXPECT_EQ(after.diff_messages, before.diff_messages) << "rank " << me;
  }
  d.barrier();
  d.free(counter);
}

// A copy written in every critical section stays writable between them:
// its first two writes fault (a miss, then a write to the read-only copy a
// lock's release left), later ones do not, and each release still carries
// its changes. A critical section that leaves it alone, or a barrier, makes
// it read-only again: the next write faults.
TEST_F(DsmTest, ACopyRewrittenUnderALockStaysWritableUntilAReleaseFindsItUnchanged) {
  Dsm& d = *dsm_;
  const int me = runtime_->rank(), n = runtime_->size();
  if (n < 2) GTEST_SKIP() << "needs a copy of a page homed on another rank";
  const std::size_t lock = 11;
  constexpr std::uint64_t kSections = 40;
  // Twins and diffs whatever MPIDSM_COHERENCE says.
  auto* words = d.allocate<std::uint64_t>(d.page_size() / sizeof(std::uint64_t),
                                          Placement::on(n - 1), Coherence::adaptive);
  d.barrier();
  auto write_faults = [&] { return d.stats().write_faults; };
  auto section = [&](std::uint64_t value) {
    d.lock(lock);
    if (value != 0) words[0] = value;
    d.unlock(lock);
  };
  if (me == 0) {
    const std::uint64_t start = write_faults(), diffs = d.stats().diffs;
    for (std::uint64_t i = 1; i <= kSections; ++i) section(i);
    EXPECT_EQ(write_faults() - start, 2u);
    EXPECT_EQ(d.stats().diffs - diffs, kSections);
    section(0);  // left alone: read-only again
    section(kSections + 1);
    EXPECT_EQ(write_faults() - start, 3u);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  d.lock(lock);  // every next holder, without a barrier
  EXPECT_EQ(words[0], kSections + 1) << "rank " << me;
  d.unlock(lock);
  MPI_Barrier(MPI_COMM_WORLD);          // every rank has checked before the next write
  if (me == 0) section(kSections + 2);  // writable again (its second written section)
  d.barrier();
  if (me == 0) {
    const std::uint64_t start = write_faults();
    words[1] = 7;  // after the barrier: faults
    EXPECT_EQ(write_faults() - start, 1u);
  }
  d.barrier();
  EXPECT_EQ(words[0], kSections + 2) << "rank " << me;
  EXPECT_EQ(words[1], 7u) << "rank " << me;
  d.barrier();
  d.free(words);
}

// A copy kept writable under one lock and left alone under the next, whose
// home is another rank, is found unchanged there: it sends its home nothing
// (an empty diff would cost a message and a flush at every such release,
// as jia_water's page-by-page locks did across hosts).
TEST_F(DsmTest, ACopyFoundUnchangedSendsItsHomeNothing) {
  Dsm& d = *dsm_;
  const int me = runtime_->rank(), n = runtime_->size();
  if (n < 2) GTEST_SKIP() << "needs a copy of a page homed on another rank";
  const int home = n - 1;
  const std::size_t writing_lock = static_cast<std::size_t>(home + 3 * n);  // homed on `home`
  const std::size_t other_lock = static_cast<std::size_t>(2 * n);           // homed on rank 0
  auto* words = d.allocate<std::uint64_t>(d.page_size() / sizeof(std::uint64_t),
                                          Placement::on(home), Coherence::adaptive);
  d.barrier();
  if (me == 0) {
    for (std::uint64_t i = 1; i <= 4; ++i) {  // from the second on, the copy stays writable
      d.lock(writing_lock);
      words[0] = i;
      d.unlock(writing_lock);
    }
    const DsmStats before = d.stats();
    d.lock(other_lock);
    d.unlock(other_lock);  // finds the copy unchanged
    const DsmStats after = d.stats();
    bool all_through_messages = true;
    for (int peer = 1; peer < n; ++peer)
      all_through_messages &= runtime_->transport().rma_through_messages(peer);
    // Otherwise diffs are stores into a mapped home or puts: no message.
    if (all_through_messages) {
      EXPECT_EQ(after.diff_messages, before.diff_messages) << "to home " << home;
    }
  }
  d.barrier();
  EXPECT_EQ(words[0], 4u) << "rank " << me;
  d.barrier();
  d.free(words);
}

// A copy kept writable across a lock's releases is written by a second
// thread of the rank meanwhile, without the lock, each word once: every
// write reaches the home by the next barrier, none lost between a
// release's snapshot of the page and its new twin (a word written there
// would never differ from the twin again).
TEST_F(DsmTest, AnotherThreadsWritesToACopyKeptWritableAreNotLost) {
  Dsm& d = *dsm_;
  const int me = runtime_->rank(), n = runtime_->size();
  const std::size_t lock = 12, words_per_page = d.page_size() / sizeof(std::uint64_t);
  auto* words =
      d.allocate<std::uint64_t>(words_per_page, Placement::on(n - 1), Coherence::adaptive);
  for (std::uint64_t round = 1; round <= 4; ++round) {
    const std::uint64_t base = round * words_per_page;
    d.barrier();
    if (me == 0) {
      std::atomic<bool> done{false};
      std::thread other([&] {
        for (std::size_t k = 1; k < words_per_page; ++k) {
          std::atomic_ref<std::uint64_t>(words[k]).store(base + k, std::memory_order_relaxed);
          for (int pause = 0; pause < 3000; ++pause)
            std::atomic_signal_fence(std::memory_order_seq_cst);
        }
        done = true;
      });
      for (std::uint64_t i = 1; !done.load(); ++i) {
        d.lock(lock);
        words[0] = i;
        d.unlock(lock);
      }
      other.join();
    }
    d.barrier();
    for (std::size_t k = 1; k < words_per_page; ++k)
      ASSERT_EQ(words[k], base + k) << "rank " << me << ", round " << round;
  }
  d.barrier();
  d.free(words);
}

TEST_F(DsmTest, NestedLocksCarryTheInnerWritesToTheOuterLock) {
  Dsm& d = *dsm_;
  const int me = runtime_->rank(), n = runtime_->size();
  auto* value = d.allocate<std::int64_t>(1, Placement::on(0));
  d.barrier();
  ASSERT_EQ(*value, 0);         // cached everywhere: the turns must invalidate it
  MPI_Barrier(MPI_COMM_WORLD);  // every rank has cached it before the first write
  // Each rank in turn (outer lock 3) writes inside an inner lock 4; the next
  // holder of lock 3 alone must see it.
  for (int r = 0; r < n; ++r) {
    if (r == me) {
      d.lock(3);
      EXPECT_EQ(*value, r);
      d.lock(4);
      *value = r + 1;
      d.unlock(4);
      d.unlock(3);
    }
    MPI_Barrier(MPI_COMM_WORLD);  // orders the turns only; no DSM synchronisation
  }
  d.barrier();
  EXPECT_EQ(*value, n);
  d.barrier();
  d.free(value);
}

TEST_F(DsmTest, WaitersGetTheLockInTheOrderTheyQueued) {
  Dsm& d = *dsm_;
  const int me = runtime_->rank(), n = runtime_->size();
  if (n < 3) GTEST_SKIP() << "needs two waiters";
  constexpr std::size_t kLock = 900;
  auto* order = d.allocate<int>(static_cast<std::size_t>(n) + 1, Placement::on(0));
  d.barrier();
  // Rank 0 holds the lock while ranks n-1, n-2, ..., 1 queue one after the
  // other, 100 ms apart (the opposite of rank order, so rank order cannot
  // pass by chance). Each holder appends its rank.
  if (me == 0) d.lock(kLock);
  MPI_Barrier(MPI_COMM_WORLD);
  if (me != 0) usleep(static_cast<useconds_t>(100000 * (n - me)));
  if (me == 0) usleep(static_cast<useconds_t>(100000 * n));
  if (me != 0) d.lock(kLock);
  order[1 + order[0]] = me;
  order[0] += 1;
  d.unlock(kLock);
  d.barrier();
  ASSERT_EQ(order[0], n);
  EXPECT_EQ(order[1], 0);
  for (int k = 1; k < n; ++k) EXPECT_EQ(order[1 + k], n - k) << "position " << k;
  d.barrier();
  d.free(order);
}

// The holder takes `lock`, gives the waiter time to queue, writes 42 into
// `*word` and unlocks; the waiter's lock() takes it over and must see the
// write. The messages the waiter sent inside its lock() (0 on other ranks).
std::uint64_t hand_over(Dsm& d, Runtime& runtime, std::size_t lock, int holder, int waiter,
                        std::int64_t* word) {
  const int me = runtime.rank();
  if (me == holder) d.lock(lock);
  MPI_Barrier(MPI_COMM_WORLD);
  std::uint64_t messages = 0;
  if (me == holder) {
    usleep(200000);  // the waiter queues meanwhile
    *word = 42;
    d.unlock(lock);
  }
  if (me == waiter) {
    const TransportTraffic before = runtime.transport().traffic();
    d.lock(lock);
    messages = runtime.transport().traffic().messages - before.messages;
    EXPECT_EQ(*word, 42);
    d.unlock(lock);
  }
  return messages;
}

// A lock handed over from a queue, homed on a rank reached through
// messages: its new holder reads the lock's log in one answered call. It
// sends four messages in all: its acquiring call, the link to its
// predecessor, that call, and the drop of its copy's count at the page's
// home (the log names the page). Where the home keeps the queue, the
// home's grant answers the acquiring call with the log: two (no link, no
// call for the log); one where fetches are calls too, as the drop then
// waits for the holder's release, with any others
// (SharingRecord::send_drops). Reading the log's header and then its
// entries took one more. It still sees the predecessor's write.
TEST_F(DsmTest, AHandedOverLockCostsItsNewHolderAtMostOneCallForTheLog) {
  Dsm& d = *dsm_;
  const int me = runtime_->rank(), n = runtime_->size();
  constexpr int kHolder = 0, kWaiter = 1;
  const std::size_t lock = static_cast<std::size_t>(kHolder + 7 * n);  // homed on the holder
  const bool queued_at_home = testing::homes_keep_lock_queues(*runtime_);
  const bool drops_by_call = queued_at_home && runtime_->config().fetch_by_call;
  auto* word = d.allocate<std::int64_t>(d.page_size() / sizeof(std::int64_t),
                                        Placement::on(kHolder), Coherence::adaptive);
  d.barrier();
  // A copy at the waiter, so that the holder's write is noticed in the log.
  if (me == kWaiter) {
    EXPECT_EQ(*word, 0);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  const std::uint64_t messages = hand_over(d, *runtime_, lock, kHolder, kWaiter, word);
  if (me == kWaiter && runtime_->transport().rma_through_messages(kHolder)) {
    EXPECT_EQ(messages, drops_by_call ? 1u : queued_at_home ? 2u : 4u);
  }
  d.barrier();
  d.free(word);
}

// Where homes keep the queues, a lock handed from one remote rank to
// another at its home costs the waiter its acquiring call alone: the home
// answers it with the grant and the log when the holder's release arrives
// (it used to answer "queued" at once, put a grant word, and answer a call
// for the log: two messages from the waiter). The waiter still sees the
// holder's write.
TEST_F(DsmTest, ALockHandedOverAtItsHomeCostsTheWaiterOnlyItsAcquiringCall) {
  Dsm& d = *dsm_;
  const int me = runtime_->rank(), n = runtime_->size();
  if (n < 3) GTEST_SKIP() << "needs a home apart from the holder and the waiter";
  constexpr int kHolder = 0, kWaiter = 1, kHome = 2;
  const std::size_t lock = static_cast<std::size_t>(kHome + 5 * n);
  const bool queued_at_home = testing::homes_keep_lock_queues(*runtime_);
  auto* word = d.allocate<std::int64_t>(d.page_size() / sizeof(std::int64_t), Placement::on(kHome));
  d.barrier();
  const std::uint64_t messages = hand_over(d, *runtime_, lock, kHolder, kWaiter, word);
  if (me == kWaiter && queued_at_home) {
    EXPECT_EQ(messages, 1u);
  }
  d.barrier();
  d.free(word);
}

TEST_F(DsmTest, ACriticalSectionWritingMorePagesThanTheLogKeepsIsStillSeen) {
  Dsm& d = *dsm_;
  const int me = runtime_->rank(), n = runtime_->size();
  // 200 pages written under one lock: more notices than a lock's ring keeps,
  // so the next holder must drop its whole cache, and still read right.
  const std::size_t per_page = d.page_size() / sizeof(int), pages = 200;
  int* data = d.allocate<int>(per_page * pages, Placement::on(n - 1));
  constexpr std::size_t kLock = 11;
  long sum = 0;
  for (std::size_t p = 0; p < pages; ++p) sum += data[p * per_page];  // cached everywhere
  ASSERT_EQ(sum, 0);
  MPI_Barrier(MPI_COMM_WORLD);
  const DsmStats before = d.stats();
  if (me == 0) {
    d.lock(kLock);
    for (std::size_t p = 0; p < pages; ++p) data[p * per_page] = static_cast<int>(p) + 1;
    d.unlock(kLock);
  }
  MPI_Barrier(MPI_COMM_WORLD);  // orders the critical sections only
  if (me != 0) {
    d.lock(kLock);
    for (std::size_t p = 0; p < pages; ++p)
      ASSERT_EQ(data[p * per_page], static_cast<int>(p) + 1) << "page " << p;
    d.unlock(kLock);
    EXPECT_GT(d.stats().lock_log_overflows, before.lock_log_overflows);
  }
  d.barrier();
  d.free(data);
}

TEST_F(DsmTest, LockMisuseIsAClearErrorAndLeavesTheDsmUsable) {
  Dsm& d = *dsm_;
  const int me = runtime_->rank();
  EXPECT_MPIDSM_ERROR(d.unlock(5), Errc::invalid_state, "lock 5 is not held by this rank");
  EXPECT_MPIDSM_ERROR(d.lock(d.lock_count()), Errc::out_of_range, "MPIDSM_LOCKS");
  d.lock(5);
  EXPECT_MPIDSM_ERROR(d.lock(5), Errc::invalid_state, "not recursive");
  d.unlock(5);
  d.barrier();  // every rank is done with lock 5 before rank 0 misuses a lock
  // A barrier inside a critical section on rank 0: every rank gets the error.
  if (me == 0) d.lock(6);
  EXPECT_MPIDSM_ERROR(d.barrier(), Errc::invalid_state, "rank 0 called it while holding");
  if (me == 0) d.unlock(6);
  auto* data = d.allocate<int>(16, Placement::on(0));
  data[me] = me + 1;
  d.barrier();
  for (int r = 0; r < runtime_->size(); ++r) EXPECT_EQ(data[r], r + 1);
  d.barrier();
  d.free(data);
}

// JIAJIA's mistake on every rank: lock, then barrier. One rank holds the
// lock in the barrier, the others wait for the lock: each gets the error
// (from barrier() or from lock()), nobody hangs, and once the holder
// unlocks the abandoned waits pass the lock on.
TEST_F(DsmTest, EveryRankLockingThenEnteringABarrierIsAnErrorOnEveryRank) {
  Dsm& d = *dsm_;
  const int n = runtime_->size();
  auto* data = d.allocate<int>(2, Placement::on(0));
  bool held = false;
  try {
    d.lock(6);
    held = true;
    data[0] += 1;
    d.barrier();
    ADD_FAILURE() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::invalid_state) << e.what();
    EXPECT_NE(e.message().find("called it while holding a DSM lock"), std::string::npos)
        << e.what();
    EXPECT_NE(e.message().find(held ? "Dsm::barrier" : "Dsm::lock: lock 6 was not granted"),
              std::string::npos)
        << e.what();
  }
  if (held) d.unlock(6);
  d.barrier();
  EXPECT_EQ(data[0], 1);  // the holder's write was released by its unlock
  for (int round = 0; round < 3; ++round) {
    d.lock(6);
    data[1] += 1;
    d.unlock(6);
  }
  d.barrier();
  EXPECT_EQ(data[1], 3 * n);
  d.barrier();
  d.free(data);
}

}  // namespace
}  // namespace mpidsm
