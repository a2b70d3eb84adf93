// The DSM's memory follows the pages and locks used, not the sizes asked for:
// a 16 TiB region with 4 Mi locks costs a program that touches a few pages a
// few MiB per rank, freeing a huge allocation gives its tables back, and
// sizes no process could serve are refused up front, naming the setting.
#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <string>

#include "dsm_fixture.hpp"

namespace mpidsm {
namespace {

using testing::WorldRuntimeTest;
using DsmFootprintTest = WorldRuntimeTest<>;

constexpr std::size_t kMiB = std::size_t{1} << 20;
constexpr std::size_t kTiB = std::size_t{1} << 40;

// This process's resident memory (VmRSS), in bytes.
std::size_t resident() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);)
    if (line.rfind("VmRSS:", 0) == 0) return std::stoull(line.substr(6)) * 1024;
  ADD_FAILURE() << "no VmRSS in /proc/self/status";
  return 0;
}

DsmSettings sized(const Runtime& runtime, std::size_t size, std::size_t locks) {
  DsmSettings settings = DsmSettings::from(runtime.config());
  settings.size = size;
  settings.locks = locks;
  return settings;
}

// A region as large as a sanitizer's shadow leaves room for: every rank maps
// its view, its master and its same-node peers' masters.
std::size_t huge_region() {
#if defined(__SANITIZE_ADDRESS__)
  return 4 * kTiB;
#else
  return 16 * kTiB;
#endif
}

TEST_F(DsmFootprintTest, AHugeRegionWithManyLocksCostsOnlyThePagesUsed) {
  const int me = runtime_->rank(), n = runtime_->size();
  const std::size_t locks = 4194304, pages = 100;
  MPI_Barrier(MPI_COMM_WORLD);
  const std::size_t before = resident();
  {
    Dsm dsm(*runtime_, sized(*runtime_, huge_region(), locks));
    const std::size_t page = dsm.page_size(), block = pages * page;
    auto* data = dsm.allocate<std::uint8_t>(block * static_cast<std::size_t>(n));
    for (std::size_t p = 0; p < pages; ++p)
      data[block * static_cast<std::size_t>(me) + p * page] = 1;
    dsm.lock(locks - 1);  // the last lock's record and queue node are used too
    dsm.unlock(locks - 1);
    dsm.barrier();
    const std::uint8_t* next = data + block * static_cast<std::size_t>((me + 1) % n);
    for (std::size_t p = 0; p < pages; ++p) ASSERT_EQ(next[p * page], 1) << "page " << p;
    dsm.barrier();
    const std::size_t grown = resident() - std::min(before, resident());
    // Measured: about 2.5 MiB. Before tables followed use, 16 TiB needed
    // 25 GiB per rank (and 4 Mi locks 4 GiB).
    EXPECT_LT(grown, 64 * kMiB) << "rank " << me << " grew by " << grown / kMiB << " MiB";
    dsm.free(data);
  }
}

TEST_F(DsmFootprintTest, FreeingAHugeAllocationGivesItsTablesBack) {
  const int me = runtime_->rank();
  MPI_Barrier(MPI_COMM_WORLD);
  const std::size_t before = resident();
  Dsm dsm(*runtime_, sized(*runtime_, kTiB, 64));
  // 2^24 pages, each with a home recorded on some rank: untouched, they cost
  // nothing. (Before, creating the region committed 1.1 GiB per rank for its
  // tables, and freeing touched each page's directory word.)
  const std::size_t bytes = std::size_t{64} << 30;
  auto* data = dsm.allocate<std::uint8_t>(bytes, Placement::first_touch());
  data[static_cast<std::size_t>(me) * dsm.page_size()] = 1;
  dsm.barrier();
  dsm.free(data);
  const std::size_t grown = resident() - std::min(before, resident());
  EXPECT_LT(grown, 32 * kMiB) << "rank " << me << " grew by " << grown / kMiB << " MiB";
  auto* again = dsm.allocate<std::uint8_t>(bytes, Placement::first_touch());
  EXPECT_EQ(again, data);
  EXPECT_EQ(again[static_cast<std::size_t>(me) * dsm.page_size()], 0);  // untouched again
  dsm.barrier();
  dsm.free(again);
}

TEST_F(DsmFootprintTest, SizesNoProcessCanServeAreRefusedNamingTheSetting) {
  // Two views of 64 TiB exceed the 128 TiB a process has.
  EXPECT_MPIDSM_ERROR(Dsm(*runtime_, sized(*runtime_, 64 * kTiB, 64)), Errc::no_memory,
                      "(DsmSettings::size, MPIDSM_DSM_SIZE)");
  EXPECT_MPIDSM_ERROR(Dsm(*runtime_, sized(*runtime_, 64 * kMiB, std::size_t{1} << 40)),
                      Errc::no_memory, "locks (DsmSettings::locks, MPIDSM_LOCKS)");
  DsmSettings cache = sized(*runtime_, 64 * kMiB, 64);
  cache.cache_pages = std::size_t{1} << 41;
  EXPECT_MPIDSM_ERROR(Dsm(*runtime_, cache), Errc::invalid_argument,
                      "DsmSettings::cache_pages (MPIDSM_CACHE_PAGES) 2199023255552 exceeds");
  // A diff kernel of another architecture: named, with what this CPU runs.
  DsmSettings foreign = sized(*runtime_, 64 * kMiB, 64);
#if defined(__aarch64__)
  foreign.diff_kernel = DiffKernel::avx2;
  const char* foreign_message =
      "(MPIDSM_DIFF_KERNEL) avx2 needs instructions this CPU lacks; it runs ";
#else
  foreign.diff_kernel = DiffKernel::neon;
  const char* foreign_message =
      "(MPIDSM_DIFF_KERNEL) neon needs instructions this CPU lacks; it runs ";
#endif
  EXPECT_MPIDSM_ERROR(Dsm(*runtime_, foreign), Errc::invalid_argument, foreign_message);
  Dsm fine(*runtime_, sized(*runtime_, 64 * kMiB, 64));  // the runtime is still usable
  auto* word = fine.allocate<long>(1);
  fine.lock(0);
  ++*word;
  fine.unlock(0);
  fine.barrier();
  EXPECT_EQ(*word, runtime_->size());
}

}  // namespace
}  // namespace mpidsm
