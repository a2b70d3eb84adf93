// A randomized, multi-threaded soak of the coherent DSM. On every rank two
// threads write their own bytes of pages homed everywhere, round after
// round, through a cache of a few pages, while the main thread runs, in an
// order rank 0 draws at random: barriers, lock-protected increments, and
// transfers into DSM buffers (receives posted before a barrier and completed
// after it, blocking gets). At the end every byte of the shared pages must
// hold its writer's last round, every counter the number of increments, and
// every transfer must have delivered its bytes.
//
// DSM_STRESS_SECONDS (default 2) bounds the run; set it higher for a soak
// (CMake: -DMPIDSM_STRESS_SECONDS). The seed is printed; DSM_STRESS_SEED
// replays one.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <random>
#include <thread>
#include <vector>

#include "dsm_fixture.hpp"

namespace mpidsm {
namespace {

constexpr int kWriters = 2;
constexpr std::size_t kPages = 48;
constexpr std::size_t kCounters = 8;

std::uint8_t value_of(int round, std::size_t index) {
  return static_cast<std::uint8_t>(round * 37 + static_cast<int>(index) + (index >> 9));
}

double stress_seconds() {
  const char* text = std::getenv("DSM_STRESS_SECONDS");
  return text ? std::atof(text) : 2.0;
}

std::uint64_t stress_seed() {
  std::uint64_t seed = 0;
  if (testing::world_rank() == 0) {
    const char* text = std::getenv("DSM_STRESS_SEED");
    seed = text ? std::strtoull(text, nullptr, 10) : std::random_device{}();
    std::printf("# stress seed %llu (DSM_STRESS_SEED replays it)\n",
                static_cast<unsigned long long>(seed));
  }
  MPI_Bcast(&seed, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
  return seed;
}

enum class Step : int { barrier, lock, receive_across_barrier, get_into_dsm, stop };

class DsmStress : public testing::WorldRuntimeTest<> {};

TEST_F(DsmStress, ThreadsBarriersLocksAndTransfersLoseNoByte) {
  Runtime& rt = *runtime_;
  Transport& t = rt.transport();
  const int me = rt.rank(), n = rt.size();
  DsmSettings settings = DsmSettings::from(rt.config());
  settings.cache_pages = 24;  // far fewer than the pages in use
  settings.prefetch_pages = 4;
  Dsm d(rt, settings);
  const std::size_t page = d.page_size(), bytes = kPages * page;
  const std::uint64_t seed = stress_seed();

  auto* shared = d.allocate<std::uint8_t>(bytes, Placement::cyclic(1));
  auto* counters = d.allocate<long>(kCounters * page / sizeof(long), Placement::cyclic(1));
  // Transfers land in the slice homed on the next rank (slice r homed on r).
  const std::size_t slice = 2 * page;
  auto* inbox = d.allocate<std::uint8_t>(slice * n, Placement::cyclic(2));
  std::uint8_t* mine = inbox + slice * ((me + 1) % n);
  MemoryRegion window = t.allocate(slice);
  const int peer = (me + 1) % n, from = (me + n - 1) % n;

  // Writers: thread w of this rank owns byte b when b % (n*kWriters) is
  // me*kWriters + w; each round rewrites all of them, pages in random order.
  std::atomic<bool> stop{false};
  std::vector<int> last_round(kWriters, 0);
  auto writer = [&](int w) {
    std::mt19937_64 rng(seed * 1000003 + static_cast<std::uint64_t>(me * kWriters + w));
    std::vector<std::size_t> order(kPages);
    for (std::size_t p = 0; p < kPages; ++p) order[p] = p;
    const auto stride = static_cast<std::size_t>(n * kWriters);
    const auto first = static_cast<std::size_t>(me * kWriters + w);
    for (int round = 1; !stop.load(std::memory_order_relaxed); ++round) {
      std::shuffle(order.begin(), order.end(), rng);
      for (std::size_t p : order) {
        const std::size_t begin = p * page, end = begin + page;
        for (std::size_t b = begin + (first + stride - begin % stride) % stride; b < end;
             b += stride)
          shared[b] = value_of(round, b);
        std::this_thread::yield();  // leaves the main thread room when oversubscribed
      }
      last_round[static_cast<std::size_t>(w)] = round;
    }
  };
  std::vector<std::thread> writers;
  for (int w = 0; w < kWriters; ++w) writers.emplace_back(writer, w);

  std::vector<long> increments(kCounters, 0);
  std::mt19937_64 draw(seed);
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::duration<double>(stress_seconds());
  long transfers = 0;
  for (int iteration = 0;; ++iteration) {
    int step[2] = {0, 0};
    if (me == 0) {
      const bool done = std::chrono::steady_clock::now() > deadline;
      step[0] = done ? static_cast<int>(Step::stop) : static_cast<int>(draw() % 4);
      step[1] = static_cast<int>(draw() % 1000);
    }
    MPI_Bcast(step, 2, MPI_INT, 0, MPI_COMM_WORLD);
    const auto what = static_cast<Step>(step[0]);
    if (what == Step::stop) break;
    const auto salt = static_cast<std::uint8_t>(step[1] + iteration);
    switch (what) {
      case Step::barrier:
        d.barrier();
        break;
      case Step::lock: {
        const std::size_t id = static_cast<std::size_t>(step[1] + me) % kCounters;
        d.lock(id);
        counters[id * page / sizeof(long)] += 1;
        d.unlock(id);
        ++increments[id];
        break;
      }
      case Step::receive_across_barrier: {
        if (n < 2) break;
        Request receive = t.irecv(from, iteration, mine, slice);
        d.barrier();  // a synchronisation while the receive is in flight
        std::vector<std::uint8_t> message(slice, salt);
        t.send(peer, iteration, message.data(), slice);
        receive.wait();
        for (std::size_t i = 0; i < slice; ++i)
          ASSERT_EQ(mine[i], salt) << "iteration " << iteration;
        ++transfers;
        break;
      }
      case Step::get_into_dsm: {
        std::memset(window.local_base(), salt, slice);
        MPI_Barrier(MPI_COMM_WORLD);
        t.get(peer, window, 0, mine, slice);
        for (std::size_t i = 0; i < slice; ++i)
          ASSERT_EQ(mine[i], salt) << "iteration " << iteration;
        MPI_Barrier(MPI_COMM_WORLD);  // nobody changes its window before every get is done
        ++transfers;
        break;
      }
      case Step::stop:
        break;
    }
  }
  stop = true;
  for (auto& w : writers) w.join();
  d.barrier();

  std::vector<int> rounds(static_cast<std::size_t>(n * kWriters));
  MPI_Allgather(last_round.data(), kWriters, MPI_INT, rounds.data(), kWriters, MPI_INT,
                MPI_COMM_WORLD);
  const auto stride = static_cast<std::size_t>(n * kWriters);
  std::size_t wrong = 0, first_wrong = bytes;
  for (std::size_t b = 0; b < bytes; ++b)
    if (shared[b] != value_of(rounds[b % stride], b)) {
      if (wrong++ == 0) first_wrong = b;
    }
  EXPECT_EQ(wrong, 0u) << "first wrong byte " << first_wrong << " (page " << first_wrong / page
                       << ", writer " << first_wrong % stride << ")";
  std::vector<long> total(kCounters);
  MPI_Allreduce(increments.data(), total.data(), static_cast<int>(kCounters), MPI_LONG, MPI_SUM,
                MPI_COMM_WORLD);
  for (std::size_t id = 0; id < kCounters; ++id)
    EXPECT_EQ(counters[id * page / sizeof(long)], total[id]) << "counter " << id;
  if (me == 0) {
    long rounds_done = 0;
    for (int r : rounds) rounds_done += r;
    std::printf("# %ld writer rounds, %ld transfers\n", rounds_done, transfers);
  }
  d.barrier();
  t.deregister(window);
  d.free(inbox);
  d.free(counters);
  d.free(shared);
}

}  // namespace
}  // namespace mpidsm
