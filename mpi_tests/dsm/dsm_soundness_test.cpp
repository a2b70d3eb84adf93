// The DSM outside the happy path: transfers in flight while twins, cache
// slots and mappings run short, synchronisation that fails on one rank,
// faults no protection explains, DSM memory handed to the kernel and MPI,
// and a home that stops faulting once nobody else holds its page.
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "dsm/fault/engine_lock.hpp"
#include "dsm/test_hooks.hpp"
#include "dsm_fixture.hpp"
#include "mpidsm/pgas.hpp"

namespace mpidsm {
namespace {

using testing::DsmTest;

std::uint8_t byte_of(std::size_t index, int salt) {
  return static_cast<std::uint8_t>(index * 31 + static_cast<std::size_t>(salt) * 7 + 1);
}

// A Dsm with its own settings next to the suite's.
std::unique_ptr<Dsm> make_dsm(Runtime& runtime, std::size_t cache_pages, std::size_t size = 0,
                              std::size_t prefetch_pages = 2) {
  DsmSettings settings = DsmSettings::from(runtime.config());
  settings.cache_pages = cache_pages;
  settings.prefetch_pages = prefetch_pages;
  if (size) settings.size = size;
  return std::make_unique<Dsm>(runtime, settings);
}

// A receive posted into a remote DSM page, then more dirty remote pages than
// the old twin pool (1024): the pages of the receive must stay writable.
TEST_F(DsmTest, AReceivePostedBeforeManyWritesLandsIntact) {
  Dsm& d = *dsm_;
  Transport& t = runtime_->transport();
  const int me = runtime_->rank(), n = runtime_->size();
  if (n < 2) GTEST_SKIP() << "needs a peer";
  const std::size_t page = d.page_size(), written = 1100, bytes = 2 * page + 64;
  const int peer = (me + 1) % n, from = (me + n - 1) % n;
  auto* grid = d.allocate<std::uint8_t>(page * written * n);  // block: slab r homed on r
  const std::size_t slice = 3 * page;  // slice r homed on r; this rank receives into the next
  auto* inbox = d.allocate<std::uint8_t>(slice * n, Placement::cyclic(3));
  std::uint8_t* mine = inbox + slice * peer;
  Request receive = t.irecv(from, 21, mine, bytes);
  std::uint8_t* slab = grid + page * written * peer;  // homed on the next rank
  for (std::size_t p = 0; p < written; ++p) slab[p * page + static_cast<std::size_t>(me)] = 7;
  MPI_Barrier(MPI_COMM_WORLD);
  std::vector<std::uint8_t> message(bytes);
  for (std::size_t i = 0; i < bytes; ++i) message[i] = byte_of(i, peer);
  t.send(peer, 21, message.data(), bytes);
  receive.wait();
  for (std::size_t i = 0; i < bytes; ++i) ASSERT_EQ(mine[i], byte_of(i, me)) << "byte " << i;
  d.barrier();
  const std::uint8_t* own = grid + page * written * me;
  for (std::size_t p = 0; p < written; ++p)
    ASSERT_EQ(own[p * page + static_cast<std::size_t>(from)], 7) << "page " << p;
  for (int r = 0; r < n; ++r)
    for (std::size_t i = 0; i < bytes; ++i)
      ASSERT_EQ(inbox[slice * r + i], byte_of(i, (r + n - 1) % n))
          << "slice " << r << " byte " << i;
  d.barrier();
  d.free(inbox);
  d.free(grid);
}

// Rank 0 homes x; rank 1 caches it. Rank 0's write must reach rank 1
// through lock 7 even though the barrier in between failed.
TEST_F(DsmTest, AFailedBarrierLosesNoLockNotice) {
  Dsm& d = *dsm_;
  const int me = runtime_->rank(), n = runtime_->size();
  if (n < 2) GTEST_SKIP() << "needs a peer";
  int* x = d.allocate<int>(1, Placement::on(0));
  d.barrier();
  if (me == 1) {  // cached on rank 1
    EXPECT_EQ(*x, 0);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (me == 0) *x = 42;
  if (me == 1) d.lock(5);
  EXPECT_MPIDSM_ERROR(d.barrier(), Errc::invalid_state, "holding a DSM lock");
  if (me == 1) d.unlock(5);
  MPI_Barrier(MPI_COMM_WORLD);
  if (me == 0) {
    d.lock(7);
    d.unlock(7);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (me == 1) {
    d.lock(7);
    EXPECT_EQ(*x, 42);
    d.unlock(7);
  }
  d.barrier();
  d.free(x);
}

class DsmPinTest : public DsmTest {
 protected:
  void SetUp() override {
    if (runtime_->size() < 2) GTEST_SKIP() << "needs a peer";
    small_ = make_dsm(*runtime_, 8);
  }
  void TearDown() override { small_.reset(); }
  std::unique_ptr<Dsm> small_;
};

// Completed blocking transfers give their cache slots back: with all 8
// slots once used by finished gets, later read misses still find room.
TEST_F(DsmPinTest, CompletedTransfersHoldNoCacheSlot) {
  Dsm& d = *small_;
  Transport& t = runtime_->transport();
  const int me = runtime_->rank(), n = runtime_->size(), peer = (me + 1) % n;
  const std::size_t page = d.page_size(), pages = 24;
  auto* data = d.allocate<std::uint8_t>(page * pages * n);  // slab r homed on r
  std::uint8_t* own = data + page * pages * me;
  for (std::size_t i = 0; i < page * pages; ++i) own[i] = byte_of(i, me);
  MemoryRegion window = t.allocate(64);
  std::memset(window.local_base(), 0x5A, 64);
  d.barrier();
  std::uint8_t* remote = data + page * pages * peer;
  for (std::size_t p = 0; p < 8; ++p)
    t.get(peer, window, 0, remote + p * page, 16);  // every slot once
  for (std::size_t p = 0; p < pages; ++p)
    for (std::size_t i = 16; i < page; i += 97)
      ASSERT_EQ(remote[p * page + i], byte_of(p * page + i, peer)) << "page " << p;
  d.barrier();
  t.deregister(window);
  d.free(data);
}

// Pages homed here take no cache slot, however many a transfer uses.
TEST_F(DsmPinTest, HomePagesOfATransferTakeNoCacheSlot) {
  Dsm& d = *small_;
  Transport& t = runtime_->transport();
  const int me = runtime_->rank(), n = runtime_->size(), peer = (me + 1) % n;
  const std::size_t bytes = d.page_size() * 16;
  auto* data = d.allocate<std::uint8_t>(bytes * n);  // slab r homed on r
  std::uint8_t* own = data + bytes * me;
  for (std::size_t i = 0; i < bytes; ++i) own[i] = byte_of(i, me);
  MemoryRegion window = t.allocate(bytes);
  t.put(peer, window, 0, own, bytes);
  t.barrier();
  const auto* got = static_cast<const std::uint8_t*>(window.local_base());
  const int from = (me + n - 1) % n;
  for (std::size_t i = 0; i < bytes; ++i) ASSERT_EQ(got[i], byte_of(i, from)) << "byte " << i;
  t.deregister(window);
  d.barrier();
  d.free(data);
}

// Dsm::prefetch sizes its batches by the room pinned pages leave, and
// leaves nothing half-fetched behind: every page reads right afterwards.
TEST_F(DsmPinTest, PrefetchLeavesRoomForPinnedPages) {
  Dsm& d = *small_;
  Transport& t = runtime_->transport();
  const int me = runtime_->rank(), n = runtime_->size(), peer = (me + 1) % n;
  const int from = (me + n - 1) % n;
  const std::size_t page = d.page_size(), pages = 30;
  auto* data = d.allocate<std::uint8_t>(page * pages * n);
  std::uint8_t* own = data + page * pages * me;
  for (std::size_t i = 0; i < page * pages; ++i) own[i] = byte_of(i, me);
  auto* inbox = d.allocate<std::uint8_t>(page * 6 * n, Placement::on(0));
  d.barrier();
  std::uint8_t* mine = inbox + page * 6 * me;
  Request receive = t.irecv(from, 22, mine, page * 6);  // up to 6 of 8 slots pinned
  std::uint8_t* remote = data + page * pages * peer;
  d.prefetch(remote, page * pages);
  for (std::size_t i = 0; i < page * pages; i += 61)
    ASSERT_EQ(remote[i], byte_of(i, peer)) << "byte " << i;
  MPI_Barrier(MPI_COMM_WORLD);
  std::vector<std::uint8_t> message(page * 6, 0xA5);
  t.send(peer, 22, message.data(), message.size());
  receive.wait();
  for (std::size_t i = 0; i < page * 6; ++i) ASSERT_EQ(mine[i], 0xA5) << "byte " << i;
  d.barrier();
  d.free(inbox);
  d.free(data);
}

TEST_F(DsmPinTest, PinningEveryCacheSlotIsAClearError) {
  Dsm& d = *small_;
  const int me = runtime_->rank(), n = runtime_->size(), peer = (me + 1) % n;
  const std::size_t page = d.page_size();
  auto* data = d.allocate<std::uint8_t>(page * 8 * n);
  std::uint8_t* remote = data + page * 8 * peer;
  EXPECT_MPIDSM_ERROR(auto access = d.make_accessible(remote, page * 8, Access::read),
                      Errc::no_memory, "MPIDSM_CACHE_PAGES");
  {
    DsmAccess access = d.make_accessible(remote, page * 7, Access::read);  // one slot left
    EXPECT_EQ(remote[page * 6], 0);
    EXPECT_EQ(remote[page * 7], 0);  // the slot left serves faults
  }
  d.barrier();
  d.free(data);
}

// Lines of /proc/self/maps: the mappings this process holds.
std::size_t process_mappings() {
  std::ifstream maps("/proc/self/maps");
  std::size_t lines = 0;
  for (std::string line; std::getline(maps, line);) ++lines;
  return lines;
}

std::size_t max_map_count() {
  std::ifstream in("/proc/sys/vm/max_map_count");
  std::size_t value = 65530;
  in >> value;
  return value;
}

// Every page of the default region homed round-robin, each written by its
// home and read by everyone: one protection change per page would need
// more mappings than the kernel allows.
// The region must sit at one address on every rank. Here the other ranks
// hold a large mapping around the next range rank 0's kernel would hand out
// (as another rank's heap or UCX pool may, each process's layout being at
// its own random base); rank 0 must then look elsewhere, not just below.
TEST_F(DsmTest, ARegionIsPlacedEvenWhereOtherRanksHoldRankZerosNextRange) {
  const int me = runtime_->rank();
  if (runtime_->size() < 2) GTEST_SKIP() << "needs a peer";
  constexpr std::size_t region = 1 << 20, blocked = 64 << 20;
  std::uint64_t next = 0;
  if (me == 0) {
    void* probe = mmap(nullptr, region, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ASSERT_NE(probe, MAP_FAILED);
    munmap(probe, region);
    next = reinterpret_cast<std::uint64_t>(probe);
  }
  MPI_Bcast(&next, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
  // Half above and half below rank 0's next range, if this rank has it free.
  void* blocker = nullptr;
  if (me != 0) {
    void* at = reinterpret_cast<void*>(next + region - blocked / 2);
    blocker = mmap(at, blocked, PROT_NONE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED_NOREPLACE, -1, 0);
    if (blocker != at) {
      if (blocker != MAP_FAILED) munmap(blocker, blocked);
      blocker = nullptr;
    }
  }
  int placed = me == 0 || blocker != nullptr, all = 0;
  MPI_Allreduce(&placed, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (all) {
    std::unique_ptr<Dsm> d;
    EXPECT_NO_THROW(d = make_dsm(*runtime_, 8, region));
    if (d) {
      int* word = d->allocate<int>(1, Placement::on(0));
      if (me == 0) *word = 7;
      d->barrier();
      EXPECT_EQ(*word, 7);
      d->barrier();
      d->free(word);
    }
  }
  if (blocker) munmap(blocker, blocked);
  if (!all) GTEST_SKIP() << "some rank holds rank 0's next range already";
}

TEST_F(DsmTest, ACyclicOnePageAllocationOfTheWholeRegionWorks) {
  auto owned = make_dsm(*runtime_, 16384, 0, 16);
  Dsm& d = *owned;
  const int me = runtime_->rank(), n = runtime_->size();
  const std::size_t page = d.page_size(), pages = d.size() / page;
  auto* data = d.allocate<std::uint8_t>(d.size(), Placement::cyclic(1));
  for (std::size_t p = static_cast<std::size_t>(me); p < pages; p += static_cast<std::size_t>(n))
    data[p * page + p % page] = byte_of(p, 3);
  d.barrier();
  std::size_t wrong = 0;
  for (std::size_t p = 0; p < pages; ++p) wrong += data[p * page + p % page] != byte_of(p, 3);
  EXPECT_EQ(wrong, 0u);
  EXPECT_LT(process_mappings(), max_map_count() / 2 + 2000);
  d.barrier();
  d.free(data);
}

// 70,000 scattered read misses on one rank, then a barrier on every rank.
TEST_F(DsmTest, SeventyThousandStridedReadsThenABarrier) {
  const int me = runtime_->rank(), n = runtime_->size();
  auto owned = make_dsm(*runtime_, 16384, std::size_t{1} << 30, 16);
  Dsm& d = *owned;
  const std::size_t page = d.page_size(), pages = 140000;
  auto* data = d.allocate<std::uint8_t>(page * pages, Placement::on(n - 1));
  if (me == n - 1)
    for (std::size_t p = 0; p < pages; p += 2) data[p * page] = byte_of(p, 5);
  d.barrier();
  std::size_t wrong = 0;
  if (me == 0)
    for (std::size_t p = 0; p < pages; p += 2) wrong += data[p * page] != byte_of(p, 5);
  EXPECT_EQ(wrong, 0u);
  d.barrier();
  d.free(data);
}

// The error a collective reports when rank `bad` failed locally: that
// rank's own, the others' naming it, all carrying the cause.
void expect_failure_from(const Error& e, int me, int bad, const std::string& cause) {
  EXPECT_EQ(e.code(), Errc::no_memory) << e.what();
  EXPECT_NE(e.message().find(cause), std::string::npos) << e.what();
  if (me != bad) {
    EXPECT_NE(e.message().find("failed on rank " + std::to_string(bad)), std::string::npos)
        << e.what();
  }
}

template <class F>
void expect_collective_failure(F&& operation, int me, int bad, const std::string& cause) {
  try {
    operation();
    ADD_FAILURE() << "expected an error from every rank";
  } catch (const Error& e) {
    expect_failure_from(e, me, bad, cause);
  }
}

// Same value on every rank.
bool agreed(const void* pointer) {
  std::uint64_t mine = reinterpret_cast<std::uint64_t>(pointer), low = 0, high = 0;
  MPI_Allreduce(&mine, &low, 1, MPI_UINT64_T, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(&mine, &high, 1, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD);
  return low == high;
}

// One rank's release fails: every rank's barrier throws, naming that rank
// and the cause, and nothing written before it is lost.
TEST_F(DsmTest, ALocalFailureInABarrierIsAnErrorOnEveryRank) {
  Dsm& d = *dsm_;
  const int me = runtime_->rank(), n = runtime_->size(), bad = n - 1;
  int* slots = d.allocate<int>(static_cast<std::size_t>(n) * 1024, Placement::on(0));
  slots[static_cast<std::size_t>(me) * 1024] = me + 100;
  if (me == bad) detail::inject_failure(detail::FailurePoint::barrier_release);
  expect_collective_failure([&] { d.barrier(); }, me, bad, "injected failure");
  d.barrier();
  for (int r = 0; r < n; ++r) EXPECT_EQ(slots[static_cast<std::size_t>(r) * 1024], r + 100);
  d.barrier();
  d.free(slots);
}

// An allocation failing on one rank is undone on every rank: the next one
// gets the same address everywhere, and its memory reads zero.
TEST_F(DsmTest, ALocalFailureInAllocateLeavesNoAllocation) {
  Dsm& d = *dsm_;
  const int me = runtime_->rank(), n = runtime_->size(), bad = 0;
  if (me == bad) detail::inject_failure(detail::FailurePoint::allocate_homes);
  expect_collective_failure([&] { d.allocate<long>(4096, Placement::cyclic(1)); }, me, bad,
                            "injected failure");
  // A page per rank, each homed on its rank, at any number of ranks.
  const std::size_t per_page = d.page_size() / sizeof(long);
  long* data = d.allocate<long>(per_page * static_cast<std::size_t>(n), Placement::cyclic(1));
  EXPECT_TRUE(agreed(data));
  data[static_cast<std::size_t>(me) * per_page] = me + 1;
  d.barrier();
  for (int r = 0; r < n; ++r) EXPECT_EQ(data[static_cast<std::size_t>(r) * per_page], r + 1);
  d.barrier();
  d.free(data);
}

TEST_F(DsmTest, ALocalFailureInFreeIsAnErrorOnEveryRankAndForgetsTheAllocation) {
  Dsm& d = *dsm_;
  const int me = runtime_->rank(), n = runtime_->size(), bad = n - 1;
  long* data = d.allocate<long>(4096);
  data[static_cast<std::size_t>(me)] = 9;
  if (me == bad) detail::inject_failure(detail::FailurePoint::free_unmap);
  expect_collective_failure([&] { d.free(data); }, me, bad, "injected failure");
  long* again = d.allocate<long>(4096);
  EXPECT_TRUE(agreed(again));
  EXPECT_EQ(again, data);  // the region's first fit: the same pages, zeroed
  for (std::size_t i = 0; i < 4096; i += 7) ASSERT_EQ(again[i], 0) << "element " << i;
  d.barrier();
  d.free(again);
}

// Per-Dsm settings: the region and the lock table must agree; a bad value
// on one rank is an error on every rank, not a hang.
TEST_F(DsmTest, DsmSettingsThatDifferOrAreBadOnOneRankFailEveryRank) {
  const int me = runtime_->rank(), n = runtime_->size();
  DsmSettings settings = DsmSettings::from(runtime_->config());
  settings.size = std::size_t{64} << 20;
  DsmSettings differing = settings;
  if (me == n - 1) differing.locks = 77;
  if (n > 1) {
    EXPECT_MPIDSM_ERROR(Dsm(*runtime_, differing), Errc::collective_mismatch,
                        "DsmSettings::locks (MPIDSM_LOCKS) differs between ranks");
  }
  DsmSettings bad = settings;
  if (me == n - 1) bad.size = 12345;
  try {
    Dsm dsm(*runtime_, bad);
    ADD_FAILURE() << "expected an error on every rank";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::invalid_argument) << e.what();
    EXPECT_NE(e.message().find(me == n - 1 ? "region size 12345" : "failed on rank"),
              std::string::npos)
        << e.what();
  }
  Dsm fine(*runtime_, settings);  // the runtime is still usable
  EXPECT_EQ(fine.size(), settings.size);
}

// DSM memory handed to PGAS outside any allocation, on the load/store path
// and through UCX alike; ranks freeing different allocations.
TEST_F(DsmTest, DsmMisuseIsTheSameTypedErrorOnEveryPath) {
  Dsm& d = *dsm_;
  const int me = runtime_->rank(), n = runtime_->size();
  Pgas pgas(*runtime_);
  auto window = pgas.allocate<std::uint64_t>(4);
  auto* unallocated = static_cast<std::uint64_t*>(d.base()) + d.size() / 8 - 4;
  EXPECT_MPIDSM_ERROR(pgas.put(window.at((me + 1) % n), unallocated, 1), Errc::unregistered,
                      "unallocated DSM memory");
  EXPECT_MPIDSM_ERROR(pgas.get(unallocated, window.at((me + 1) % n), 1), Errc::unregistered,
                      "unallocated DSM memory");
  if (n > 1) {
    long* a = d.allocate<long>(512);
    long* b = d.allocate<long>(512);
    EXPECT_MPIDSM_ERROR(d.free(me == 0 ? a : b), Errc::collective_mismatch,
                        "the address freed differs between ranks");
    d.free(b);
    d.free(a);
    long* again = d.allocate<long>(512);
    EXPECT_TRUE(agreed(again));
    d.free(again);
  }
  pgas.barrier();
  pgas.free(window);
}

// Runs `body` in a child process that may not outlive `seconds`; returns
// the signal that ended it (0 when it exited) and what it wrote to stderr.
template <class Body>
std::pair<int, std::string> in_child(Body body, unsigned seconds = 20) {
  int pipe_fds[2];
  if (pipe(pipe_fds) != 0) return {-1, "pipe failed"};
  const pid_t child = fork();
  if (child == 0) {
    dup2(pipe_fds[1], STDERR_FILENO);
    close(pipe_fds[0]);
    alarm(seconds);  // a hang ends in SIGALRM
    body();
    _exit(0);
  }
  close(pipe_fds[1]);
  std::string said;
  char buffer[512];
  for (ssize_t got; (got = read(pipe_fds[0], buffer, sizeof buffer)) > 0;) said.append(buffer, got);
  close(pipe_fds[0]);
  int status = 0;
  waitpid(child, &status, 0);
  return {WIFSIGNALED(status) ? WTERMSIG(status) : 0, said};
}

// Executing code in the region faults on a page mapped for reading and
// writing: nothing resolves it, so it must crash, not spin forever.
TEST_F(DsmTest, AnInstructionFetchFromTheRegionCrashes) {
  Dsm& d = *dsm_;
  const int me = runtime_->rank(), n = runtime_->size();
  auto* code = d.allocate<std::uint8_t>(d.page_size() * n);  // page r homed on r
  std::uint8_t* mine = code + d.page_size() * me;
  mine[0] = 0xC3;  // x86 "ret"
  EXPECT_EQ(in_child([&] { reinterpret_cast<void (*)()>(mine)(); }).first, SIGSEGV);
  d.barrier();
  d.free(code);
}

// Where the CPU does not say whether a fault was a write, writes to remote,
// cached, parked and tracked home pages still resolve and propagate.
TEST_F(DsmTest, WritesResolveWithoutTheCpusAccessKind) {
  Dsm& d = *dsm_;
  const int me = runtime_->rank(), n = runtime_->size();
  const std::size_t page = d.page_size(), pages = 8;
  auto* data = d.allocate<int>(page / sizeof(int) * pages * n, Placement::cyclic(1));
  const std::size_t words = page / sizeof(int) * pages * n;
  detail::set_fault_access_reported(false);
  for (int round = 1; round <= 3; ++round) {
    long sum = 0;
    for (std::size_t i = 0; i < words; i += 97) sum += data[i];  // cache everything
    EXPECT_GE(sum, 0);
    for (std::size_t i = static_cast<std::size_t>(me); i < words; i += static_cast<std::size_t>(n))
      data[i] = round * 1000 + static_cast<int>(i % 1000);
    d.barrier();
    for (std::size_t i = 0; i < words; ++i)
      ASSERT_EQ(data[i], round * 1000 + static_cast<int>(i % 1000)) << "round " << round;
    d.barrier();
  }
  detail::set_fault_access_reported(true);
  d.free(data);
}

// Calls io(offset) until `bytes` moved (each call moves what it returns);
// returns the bytes moved, fewer when a call fails.
template <class Io>
std::size_t move_all(std::size_t bytes, Io&& io) {
  std::size_t at = 0;
  while (at < bytes) {
    const ssize_t moved = io(at);
    if (moved <= 0) break;
    at += static_cast<std::size_t>(moved);
  }
  return at;
}

// read() into and write() from DSM memory (the kernel raises no SIGSEGV for
// its own accesses: without make_accessible they fail with EFAULT).
TEST_F(DsmTest, SystemCallsUseDsmMemoryMadeAccessible) {
  Dsm& d = *dsm_;
  const int me = runtime_->rank(), n = runtime_->size();
  const std::size_t bytes = 1 << 20;
  auto* data = d.allocate<std::uint8_t>(bytes * n);  // chunk r homed on r
  std::uint8_t* next = data + bytes * ((me + 1) % n);
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  std::vector<std::uint8_t> pattern(bytes);
  for (std::size_t i = 0; i < bytes; ++i) pattern[i] = byte_of(i, me);
  // The kernel writes into DSM memory: read() from a pipe fed by a thread.
  std::thread feeder([&] {
    move_all(bytes, [&](std::size_t at) { return write(fds[1], &pattern[at], bytes - at); });
  });
  {
    DsmAccess access = d.make_accessible(next, bytes, Access::read_write);
    EXPECT_EQ(move_all(bytes, [&](std::size_t at) { return read(fds[0], next + at, bytes - at); }),
              bytes)
        << std::strerror(errno);
  }
  feeder.join();
  d.barrier();
  const std::uint8_t* own = data + bytes * me;
  const int writer = (me + n - 1) % n;
  for (std::size_t i = 0; i < bytes; ++i) ASSERT_EQ(own[i], byte_of(i, writer)) << "byte " << i;
  // The kernel reads DSM memory: write() into a pipe drained by a thread.
  std::vector<std::uint8_t> drained(bytes);
  std::thread drain([&] {
    move_all(bytes, [&](std::size_t at) { return read(fds[0], &drained[at], bytes - at); });
  });
  {
    DsmAccess access = d.make_accessible(next, bytes, Access::read);
    EXPECT_EQ(move_all(bytes, [&](std::size_t at) { return write(fds[1], next + at, bytes - at); }),
              bytes)
        << std::strerror(errno);
  }
  drain.join();
  EXPECT_EQ(drained, pattern);
  close(fds[0]);
  close(fds[1]);
  d.barrier();
  d.free(data);
}

// MPI_Send of a DSM buffer homed elsewhere, MPI_Recv into one homed
// elsewhere, 1 MiB each (Open MPI's shared-memory path reads and writes
// them with process_vm_readv/writev, i.e. through the kernel).
TEST_F(DsmTest, MpiSendAndRecvOfOneMebibyteDsmBuffers) {
  Dsm& d = *dsm_;
  const int me = runtime_->rank(), n = runtime_->size();
  const int partner = me ^ 1;
  const std::size_t bytes = 1 << 20;
  auto* data = d.allocate<std::uint8_t>(bytes * n);  // chunk r homed on r
  std::uint8_t* own = data + bytes * me;
  for (std::size_t i = 0; i < bytes; ++i) own[i] = byte_of(i, me);
  d.barrier();
  if (partner < n) {
    // Send the partner's own chunk back to it (a DSM buffer homed there),
    // then receive into it (the partner sends this rank's fresh bytes).
    std::uint8_t* theirs = data + bytes * partner;
    std::vector<std::uint8_t> received(bytes);
    {
      DsmAccess in = d.make_accessible(theirs, bytes, Access::read);
      MPI_Request send;
      MPI_Isend(theirs, static_cast<int>(bytes), MPI_BYTE, partner, 31, MPI_COMM_WORLD, &send);
      MPI_Recv(received.data(), static_cast<int>(bytes), MPI_BYTE, partner, 31, MPI_COMM_WORLD,
               MPI_STATUS_IGNORE);
      MPI_Wait(&send, MPI_STATUS_IGNORE);
    }
    for (std::size_t i = 0; i < bytes; ++i) ASSERT_EQ(received[i], byte_of(i, me)) << i;
    {
      DsmAccess out = d.make_accessible(theirs, bytes, Access::read_write);
      MPI_Request receive;
      MPI_Irecv(theirs, static_cast<int>(bytes), MPI_BYTE, partner, 32, MPI_COMM_WORLD, &receive);
      std::vector<std::uint8_t> fresh(bytes);
      for (std::size_t i = 0; i < bytes; ++i) fresh[i] = byte_of(i, me + 50);
      MPI_Send(fresh.data(), static_cast<int>(bytes), MPI_BYTE, partner, 32, MPI_COMM_WORLD);
      MPI_Wait(&receive, MPI_STATUS_IGNORE);
    }
  }
  d.barrier();
  // Each chunk now holds what its home sent its partner to receive there.
  if (partner < n) {
    for (std::size_t i = 0; i < bytes; ++i) ASSERT_EQ(own[i], byte_of(i, me + 50)) << i;
  }
  d.barrier();
  d.free(data);
}

TEST_F(DsmTest, AFaultKeepsErrno) {
  Dsm& d = *dsm_;
  const int me = runtime_->rank(), n = runtime_->size();
  auto* data = d.allocate<int>(d.page_size() / sizeof(int) * n);
  const volatile int* remote = data + d.page_size() / sizeof(int) * ((me + 1) % n);
  errno = 4242;
  EXPECT_EQ(*remote, 0);  // a read miss, or a first touch on one rank
  EXPECT_EQ(errno, 4242);
  d.barrier();
  d.free(data);
}

// Where no detour out of the signal handler can be taken (another
// architecture, valgrind, an alternate signal stack), faults that reach UCX
// go to the fault servicer's thread: misses, write misses and first touches
// still resolve, and their writes reach every rank.
TEST_F(DsmTest, FaultsResolveThroughTheServicerThreadWhereNoDetourIsTaken) {
  detail::set_fault_detours_allowed(false);
  auto d = make_dsm(*runtime_, 64);
  detail::set_fault_detours_allowed(true);
  const int me = runtime_->rank(), n = runtime_->size();
  const std::size_t words_per_page = d->page_size() / sizeof(long), pages = 4;
  const std::size_t words = words_per_page * pages * static_cast<std::size_t>(n);
  auto* data = d->allocate<long>(words, Placement::cyclic(1));
  for (int round = 1; round <= 2; ++round) {
    errno = 4242;
    long sum = 0;
    for (std::size_t i = 0; i < words; i += words_per_page) sum += data[i];  // read misses
    EXPECT_EQ(errno, 4242);
    EXPECT_EQ(sum, round == 1 ? 0 : static_cast<long>(words / words_per_page) * (round - 1));
    d->barrier();
    const auto ranks = static_cast<std::size_t>(n);
    for (std::size_t p = static_cast<std::size_t>(me + 1) % ranks; p < pages * ranks; p += ranks)
      data[p * words_per_page] = round;  // write misses on the next rank's pages
    d->barrier();
    for (std::size_t p = 0; p < words / words_per_page; ++p)
      ASSERT_EQ(data[p * words_per_page], round) << "page " << p << ", round " << round;
    d->barrier();
  }
  d->free(data);
}

// A fault while this thread is inside mpidsm (as from a signal handler that
// interrupted it) would wait for a lock the thread itself holds.
TEST_F(DsmTest, AFaultInsideTheEngineIsReportedNotADeadlock) {
  Dsm& d = *dsm_;
  const int me = runtime_->rank(), n = runtime_->size();
  if (n < 2) GTEST_SKIP() << "needs a page homed elsewhere";
  auto* data = d.allocate<int>(d.page_size() / sizeof(int) * n);
  volatile int* remote = data + d.page_size() / sizeof(int) * ((me + 1) % n);
  auto [signal, said] = in_child([&] {
    std::mutex held;
    detail::EngineLock inside(held);
    *remote = 1;
  });
  EXPECT_EQ(signal, SIGSEGV) << said;
  EXPECT_NE(said.find("while this thread was inside mpidsm"), std::string::npos) << said;
  d.barrier();
  d.free(data);
}

// A child after fork() is not a rank: its first DSM access is reported and
// crashes instead of silently reaching (or not reaching) the homes.
TEST_F(DsmTest, AChildProcessAfterForkIsToldOnItsFirstDsmAccess) {
  Dsm& d = *dsm_;
  const int me = runtime_->rank(), n = runtime_->size();
  const std::size_t words = d.page_size() / sizeof(long);
  long* data = d.allocate<long>(words * n);  // page r homed on r
  long* own = data + words * me;
  long* remote = data + words * ((me + 1) % n);
  own[0] = 5;
  for (long* target : {own, remote}) {
    auto [signal, said] = in_child([&] { target[1] = 99; });
    EXPECT_EQ(signal, SIGSEGV) << said;
    EXPECT_NE(said.find("after fork()"), std::string::npos) << said;
  }
  auto [signal, said] = in_child([&] {
    try {
      d.barrier();
    } catch (const Error& e) {
      std::fprintf(stderr, "%s\n", e.what());
      _exit(3);
    }
  });
  EXPECT_EQ(signal, 0);
  EXPECT_NE(said.find("child process after fork()"), std::string::npos) << said;
  d.barrier();
  EXPECT_EQ(own[0], 5);
  EXPECT_EQ(own[1], 0);  // no child's store arrived
  EXPECT_EQ(remote[1], 0);
  d.barrier();
  d.free(data);
}

// Threads of one rank sharing a lock id: lock() says which thread holds it;
// DsmThreadMutex makes them wait for each other, and the count is exact.
TEST_F(DsmTest, ThreadsOfARankShareALockThroughDsmThreadMutex) {
  Dsm& d = *dsm_;
  const int n = runtime_->size();
  long* counter = d.allocate<long>(1, Placement::on(0));
  constexpr int kThreads = 4, kRounds = 50;
  d.lock(9);
  EXPECT_MPIDSM_ERROR(d.lock(9), Errc::invalid_state, "held by this thread");
  std::thread other([&] {
    EXPECT_MPIDSM_ERROR(d.lock(9), Errc::invalid_state, "held by another thread of this rank");
  });
  other.join();
  d.unlock(9);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&] {
      DsmThreadMutex mutex(d, 9);
      for (int i = 0; i < kRounds; ++i) {
        std::lock_guard<DsmThreadMutex> hold(mutex);
        *counter += 1;
      }
    });
  for (auto& t : threads) t.join();
  d.barrier();
  EXPECT_EQ(*counter, static_cast<long>(n) * kThreads * kRounds);
  d.barrier();
  d.free(counter);
}

// Once the only other copy of a page is gone, its home writes it without
// faults again (tracked pages cost a fault per interval).
TEST_F(DsmTest, AHomeStopsFaultingOnceNoCopyRemains) {
  Dsm& d = *dsm_;
  const int me = runtime_->rank(), n = runtime_->size();
  if (n < 2) GTEST_SKIP() << "needs a peer";
  const std::size_t words = d.page_size() / sizeof(long);
  // Copies that leave at invalidations: not update's, which keeps them.
  long* page = d.allocate<long>(words, Placement::on(0), Coherence::adaptive);
  if (me == 1) {  // a copy on rank 1
    EXPECT_EQ(page[0], 0);
  }
  d.barrier();
  if (me == 0) page[1] = 1;  // tracked: a fault, and a notice
  d.barrier();               // rank 1 drops its copy
  d.barrier();               // ... and its home learns it
  const std::uint64_t before = d.stats().write_faults;
  for (long round = 2; round < 12; ++round) {
    if (me == 0) page[1] = round;
    d.barrier();
  }
  if (me == 0) {
    EXPECT_LE(d.stats().write_faults - before, 1u);
  }
  if (me == 1) {
    EXPECT_EQ(page[1], 11);
  }
  d.barrier();
  d.free(page);
}

}  // namespace
}  // namespace mpidsm
