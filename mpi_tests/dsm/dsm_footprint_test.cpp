// The DSM's memory follows the pages and locks used, not the sizes asked for:
// a 16 TiB region with 4 Mi locks costs a program that touches a few pages a
// few MiB per rank, allocating and freeing a huge allocation reads no entry
// of the pages nobody used, and sizes no process could serve are refused up
// front, naming the setting.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

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

// Pages of this process's private anonymous mappings that are mapped at all,
// in bytes: /proc/self/pagemap's present bit, which a read of an untouched
// page sets on every kernel (it maps the shared zero page there, or fresh
// memory where the kernel does not use it). Unlike VmRSS, which counts only
// the latter, this catches a scan of untouched metadata on any kernel.
std::size_t mapped_anonymous() {
  const long page = sysconf(_SC_PAGESIZE);
  const int pagemap = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
  if (pagemap < 0) {
    ADD_FAILURE() << "cannot open /proc/self/pagemap";
    return 0;
  }
  // The mappings first: reading pagemap maps nothing, but the list must not
  // change under the scan (the vectors below are sized before it starts).
  std::vector<std::pair<std::uintptr_t, std::uintptr_t>> ranges;
  {
    std::ifstream maps("/proc/self/maps");
    for (std::string line; std::getline(maps, line);) {
      std::istringstream fields(line);
      std::string span, perms, offset, device, inode, path;
      fields >> span >> perms >> offset >> device >> inode >> path;
      if (inode != "0" || perms.size() < 4 || perms[3] != 'p') continue;  // files, shared
      if (!path.empty() && path != "[heap]" && path.rfind("[anon", 0) != 0) continue;
      const std::size_t dash = span.find('-');
      ranges.emplace_back(std::stoull(span.substr(0, dash), nullptr, 16),
                          std::stoull(span.substr(dash + 1), nullptr, 16));
    }
  }
  std::vector<std::uint64_t> entries(65536);
  std::size_t present = 0;
  for (auto [begin, end] : ranges)
    for (std::uintptr_t at = begin; at < end;) {
      const std::size_t want =
          std::min<std::size_t>(entries.size(), (end - at) / static_cast<std::uintptr_t>(page));
      const ssize_t got = pread(pagemap, entries.data(), want * 8,
                                static_cast<off_t>(at / static_cast<std::uintptr_t>(page) * 8));
      if (got <= 0) break;
      const auto n = static_cast<std::size_t>(got) / 8;
      for (std::size_t i = 0; i < n; ++i) present += entries[i] >> 63;
      at += n * static_cast<std::uintptr_t>(page);
    }
  close(pagemap);
  return present * static_cast<std::size_t>(page);
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

// Allocating, using one page per rank, a barrier and freeing map no metadata
// for the pages nobody used (first_touch: no page is homed until touched),
// whatever the allocation's size, on kernels that map the zero page on a
// read and on those that allocate. (Before, on Linux 6.18 without the zero
// page, 1 TiB mapped 2.1 GiB of tables per rank, and its free took 10 s.)
TEST_F(DsmFootprintTest, AllocateAndFreeMapOnlyTheMetadataOfPagesUsed) {
  const int me = runtime_->rank();
  Dsm dsm(*runtime_, sized(*runtime_, 2 * kTiB, 64));
  const std::size_t page = dsm.page_size();
  for (const std::size_t bytes : {std::size_t{1} << 30, std::size_t{64} << 30, kTiB}) {
    {
      const Placement placement = Placement::first_touch();
      dsm.barrier();
      const std::size_t before = mapped_anonymous();
      const auto start = std::chrono::steady_clock::now();
      auto* data = dsm.allocate<std::uint8_t>(bytes, placement);
      const auto allocated = std::chrono::steady_clock::now();
      data[static_cast<std::size_t>(me) * page] = 1;
      dsm.barrier();
      const auto freeing = std::chrono::steady_clock::now();
      dsm.free(data);
      const auto freed = std::chrono::steady_clock::now();
      const std::size_t grown = mapped_anonymous() - std::min(before, mapped_anonymous());
      // The chunks of the one page used and its neighbour's, in each table
      // (16 KiB to 32 KiB each), and what UCX and MPI map meanwhile.
      EXPECT_LT(grown, 8 * kMiB) << "rank " << me << ", " << (bytes >> 30) << " GiB: mapped "
                                 << grown / kMiB << " MiB more";
      using us = std::chrono::microseconds;
      if (me == 0)
        std::printf(
            "[ info ] %4zu GiB first_touch: allocate %" PRId64 " us, free %" PRId64
            " us, mapped +%zu KiB\n",
            bytes >> 30,
            static_cast<std::int64_t>(std::chrono::duration_cast<us>(allocated - start).count()),
            static_cast<std::int64_t>(std::chrono::duration_cast<us>(freed - freeing).count()),
            grown >> 10);
    }
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
