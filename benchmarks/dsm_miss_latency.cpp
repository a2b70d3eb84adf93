// DSM miss latency per page, rank 0 touching pages homed on rank 1:
//   fault_floor     one SIGSEGV + mprotect + one 4 KiB get, by hand (the floor
//                   of any page-fault DSM); MPI column: the same with MPI_Get
//   read_miss       one read per page, prefetch off; MPI: MPI_Get of the page + flush
//   read_scan_pf    sequential read scan, prefetch on (MPIDSM_PREFETCH_PAGES, or 16 when it is 0)
//   write_miss_rel  one write per page, then the release (Dsm::barrier), per page;
//                   MPI: MPI_Get of the page, MPI_Put of the 8 changed bytes, flush
//   write_scan_pf   the same with prefetch on: a stream of write misses fetches
//                   and twins the following pages in one batch
//   rewrite_scan_pf one write per page to copies already cached and readable,
//                   then the release, per page: a stream of first writes twins
//                   the following cached pages in one batch; MPI: an 8-byte
//                   MPI_Put per page, one flush
// Misses are timed with MPIDSM_BARRIER_REFETCH, MPIDSM_ADAPTIVE_UPDATES and
// MPIDSM_HOME_MIGRATION off (see no_prefetch below).
//   mpirun -np 2 dsm_miss_latency [-i pages per slice] [-x n] [-f] [--csv]
#include <signal.h>
#include <sys/mman.h>

#include <cstring>

#include "harness.hpp"
#include "mpidsm/dsm.hpp"

using namespace mpidsm;
using namespace mpidsm::bench;

namespace {

constexpr std::size_t kPage = 4096;
constexpr int kHome = 1;

// The hand-made floor: PROT_NONE pages whose fault handler makes the
// faulting page writable and fills it with one get.
struct Floor {
  std::byte* pages = nullptr;
  std::size_t count = 0;
  std::function<void(std::byte*)> fill;
  struct sigaction previous {};
};
Floor floor_state;

void floor_handler(int signal, siginfo_t* info, void* context) {
  auto* at = static_cast<std::byte*>(info->si_addr);
  if (at >= floor_state.pages && at < floor_state.pages + floor_state.count * kPage) {
    std::byte* page = floor_state.pages + (at - floor_state.pages) / kPage * kPage;
    mprotect(page, kPage, PROT_READ | PROT_WRITE);
    floor_state.fill(page);
    return;
  }
  if (floor_state.previous.sa_flags & SA_SIGINFO)
    floor_state.previous.sa_sigaction(signal, info, context);
}

// Re-arms the floor pages (untimed), then faults on n of them.
double fault_loop(int n) {
  mprotect(floor_state.pages, floor_state.count * kPage, PROT_NONE);
  std::uint64_t sink = 0;
  const double t = per_iteration(n, [&](int i) {
    sink += *reinterpret_cast<volatile std::uint64_t*>(floor_state.pages +
                                                       static_cast<std::size_t>(i) * kPage);
  });
  return sink == 12345 ? 0 : t;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  try {
    Harness h(argc, argv,
              {"DSM Miss Latency", Unit::latency_us, false, false, 2, "MPI_Get + MPI_Win_flush", 0,
               true});
    Runtime& rt = h.runtime();
    const int me = h.rank();
    const std::size_t pages_per_slice =
        static_cast<std::size_t>(std::max(h.iterations_for(8) / 5, h.warmup_for(8)));
    const std::size_t pages = pages_per_slice + 1;

    DsmSettings no_prefetch = DsmSettings::from(rt.config());
    no_prefetch.prefetch_pages = 0;
    // Each slice's pages were used in the slice before and are invalidated
    // by the barrier between them: a barrier's refetch would turn every miss
    // timed here into a hit.
    no_prefetch.barrier_refetch = false;
    // Nor may adaptive write-update keep the copies rank 0 read in the last
    // slice up to date (it would, as they are read again at every barrier).
    no_prefetch.adaptive_updates = false;
    // And the pages stay homed on rank 1: rank 0 alone rewrites them in
    // rewrite_scan, which would otherwise move their homes to it.
    no_prefetch.home_migration = HomeMigration::off;
    no_prefetch.cache_pages = std::max(no_prefetch.cache_pages, 2 * pages);
    DsmSettings with_prefetch = no_prefetch;
    with_prefetch.prefetch_pages = rt.config().prefetch_pages ? rt.config().prefetch_pages : 16;
    Dsm plain(rt, no_prefetch);
    Dsm ahead(rt, with_prefetch);
    auto* plain_data = plain.allocate<std::byte>(pages * kPage, Placement::on(kHome));
    auto* ahead_data = ahead.allocate<std::byte>(pages * kPage, Placement::on(kHome));

    // MPI: a window with one page per rank... and a page to get into.
    MpiWindow window(pages * kPage, MPI_COMM_WORLD);
    PageBuffer local(kPage);
    MemoryRegion remote = rt.transport().allocate(kPage);

    // Makes every page of `data` invalid on rank 0: the home writes each one.
    auto invalidate = [&](Dsm& d, std::byte* data) {
      if (me == kHome)
        for (std::size_t p = 0; p < pages; ++p) data[p * kPage + 8] = std::byte{1};
      d.barrier();
    };
    auto read_all = [&](std::byte* data) {
      std::uint64_t sink = 0;
      for (std::size_t p = 0; p < pages; ++p)
        sink += *reinterpret_cast<volatile std::uint64_t*>(data + p * kPage);
      return static_cast<double>(sink);
    };
    // Runs body on rank 0 (the reader) while the others wait.
    auto timed_on_rank0 = [&](auto&& body) {
      double t = 0;
      if (me == 0) t = body();
      MPI_Barrier(MPI_COMM_WORLD);
      return t;
    };
    // First touch of a page costs the kernel far more than a miss (allocating
    // and zeroing shared memory, about 8 us here): every page is touched once
    // before anything is timed, as the floor's pages are below.
    for (auto [d, data] : {std::pair{&plain, plain_data}, std::pair{&ahead, ahead_data}}) {
      invalidate(*d, data);
      timed_on_rank0([&] { return read_all(data); });
    }
    h.print_header();

    // Floor: SIGSEGV + mprotect + one 4 KiB get (UCX, or MPI_Get + flush).
    floor_state.count = pages;
    floor_state.pages = static_cast<std::byte*>(
        mmap(nullptr, pages * kPage, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    struct sigaction action {};
    action.sa_sigaction = floor_handler;
    action.sa_flags = SA_SIGINFO;
    sigaction(SIGSEGV, &action, &floor_state.previous);
    floor_state.fill = [&](std::byte* page) { rt.transport().get(kHome, remote, 0, page, kPage); };
    fault_loop(static_cast<int>(pages));  // first touch
    Row floor;
    floor.label = "fault_floor";
    floor.mpidsm = [&](std::size_t, int n) {
      floor_state.fill = [&](std::byte* page) {
        rt.transport().get(kHome, remote, 0, page, kPage);
      };
      return timed_on_rank0([&] { return fault_loop(n); });
    };
    floor.mpi = [&](std::size_t, int n) {
      floor_state.fill = [&](std::byte* page) {
        MPI_Get(page, kPage, MPI_BYTE, kHome, 0, kPage, MPI_BYTE, window.win());
        MPI_Win_flush(kHome, window.win());
      };
      return timed_on_rank0([&] { return fault_loop(n); });
    };
    h.run(floor);
    sigaction(SIGSEGV, &floor_state.previous, nullptr);
    munmap(floor_state.pages, pages * kPage);

    auto mpi_page_get = [&](std::size_t, int n) {
      return timed_on_rank0([&] {
        return per_iteration(n, [&](int i) {
          MPI_Get(local.data(), kPage, MPI_BYTE, kHome, static_cast<MPI_Aint>(i) * kPage, kPage,
                  MPI_BYTE, window.win());
          MPI_Win_flush(kHome, window.win());
        });
      });
    };
    auto read_scan = [&](Dsm& d, std::byte* data, int n) {
      invalidate(d, data);
      return timed_on_rank0([&] {
        std::uint64_t sink = 0;
        const double t = per_iteration(n, [&](int i) {
          sink += *reinterpret_cast<volatile std::uint64_t*>(data +
                                                             static_cast<std::size_t>(i) * kPage);
        });
        if (sink == 12345) std::puts("");
        return t;
      });
    };
    Row read_miss;
    read_miss.label = "read_miss";
    read_miss.mpidsm = [&](std::size_t, int n) { return read_scan(plain, plain_data, n); };
    read_miss.mpi = mpi_page_get;
    h.run(read_miss);

    Row scan;
    scan.label = "read_scan_pf" + std::to_string(with_prefetch.prefetch_pages);
    scan.mpidsm = [&](std::size_t, int n) { return read_scan(ahead, ahead_data, n); };
    scan.mpi = mpi_page_get;
    h.run(scan);

    // Rank 0 writes one word of each of the first n pages of `data`, then
    // the release: seconds per page.
    auto write_each_page_then_release = [&](Dsm& d, std::byte* data, int n) {
      const double start = seconds();
      if (me == 0)
        for (int i = 0; i < n; ++i)
          *reinterpret_cast<volatile std::uint64_t*>(data + static_cast<std::size_t>(i) * kPage) =
              7;
      d.barrier();
      return (seconds() - start) / n;
    };
    // The pages not cached on rank 0 first: each write misses.
    auto write_scan = [&](Dsm& d, std::byte* data, int n) {
      invalidate(d, data);
      return write_each_page_then_release(d, data, n);
    };
    auto mpi_page_update = [&](std::size_t, int n) {
      const double start = seconds();
      if (me == 0)
        for (int i = 0; i < n; ++i) {
          const MPI_Aint at = static_cast<MPI_Aint>(i) * kPage;
          MPI_Get(local.data(), kPage, MPI_BYTE, kHome, at, kPage, MPI_BYTE, window.win());
          MPI_Win_flush(kHome, window.win());
          std::memcpy(local.data(), &n, sizeof n);
          MPI_Put(local.data(), 8, MPI_BYTE, kHome, at, 8, MPI_BYTE, window.win());
          MPI_Win_flush(kHome, window.win());
        }
      MPI_Barrier(MPI_COMM_WORLD);
      return (seconds() - start) / n;
    };
    Row write;
    write.label = "write_miss_rel";
    write.mpi_name = "MPI_Get + flush; MPI_Put + flush";
    write.mpidsm = [&](std::size_t, int n) { return write_scan(plain, plain_data, n); };
    write.mpi = mpi_page_update;
    h.run(write);

    Row write_stream;
    write_stream.label = "write_scan_pf" + std::to_string(with_prefetch.prefetch_pages);
    write_stream.mpi_name = write.mpi_name;
    write_stream.mpidsm = [&](std::size_t, int n) { return write_scan(ahead, ahead_data, n); };
    write_stream.mpi = mpi_page_update;
    h.run(write_stream);

    // Copies cached and readable on rank 0 (read, untimed), each then
    // written once: their twins, their protection changes and the release.
    Row rewrite_stream;
    rewrite_stream.label = "rewrite_scan_pf" + std::to_string(with_prefetch.prefetch_pages);
    rewrite_stream.mpi_name = "MPI_Put of 8 bytes per page; flush";
    rewrite_stream.mpidsm = [&](std::size_t, int n) {
      timed_on_rank0([&] { return read_all(ahead_data); });
      return write_each_page_then_release(ahead, ahead_data, n);
    };
    rewrite_stream.mpi = [&](std::size_t, int n) {
      const double start = seconds();
      const std::uint64_t value = 7;
      if (me == 0) {
        for (int i = 0; i < n; ++i)
          MPI_Put(&value, 8, MPI_BYTE, kHome, static_cast<MPI_Aint>(i) * kPage, 8, MPI_BYTE,
                  window.win());
        MPI_Win_flush(kHome, window.win());
      }
      MPI_Barrier(MPI_COMM_WORLD);
      return (seconds() - start) / n;
    };
    h.run(rewrite_stream);

    rt.transport().deregister(remote);
    ahead.free(ahead_data);
    plain.free(plain_data);
  } catch (const std::exception& e) {
    return mpidsm::bench::leave_on_error(argv[0], e);
  }
  MPI_Finalize();
}
