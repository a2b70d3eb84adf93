// DSM barrier latency against MPI_Barrier:
//   clean         nothing dirty
//   clean_cached  nothing dirty, with 8192 remote pages cached (the cost must
//                 not grow with the cache; fewer where MPIDSM_DSM_SIZE does not
//                 hold 8192 pages per rank)
//   dirty_N       each rank wrote one word on N pages homed on the next rank
//                 (only the barrier is timed: release, notices, invalidation)
//   floats_256    each rank updated every float of 256 pages homed on the next
//                 rank, as a stencil sweep does: most bytes change, but not
//                 all, so the changes are scattered runs of 1-3 bytes
//   bytes_256     each rank changed every byte of those 256 pages (one run
//                 per page: the cost floats_256 should approach)
//   halo_page     each rank rewrites a word of a page it homes, the barrier,
//                 then it reads the next rank's such page (an iterative code's
//                 boundary row; the barrier refetches it, MPIDSM_BARRIER_REFETCH);
//                 MPI column: the page exchanged with MPI_Sendrecv instead
//   sync_halo     halo_page with Dsm::sync_with the previous and next ranks
//                 (the reader of this rank's page, the writer of the page it
//                 reads) instead of the barrier; the same MPI column
// Homes stay where the allocation placed them (no home migration).
//   mpirun -np N dsm_barrier_latency [-i n] [-x n] [-f] [--csv]
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "harness.hpp"
#include "mpidsm/dsm.hpp"

using namespace mpidsm;
using namespace mpidsm::bench;

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  try {
    Harness h(argc, argv,
              {"DSM Barrier Latency", Unit::latency_us, false, false, 1, "MPI_Barrier"});
    Dsm dsm(h.runtime());
    // The rows are about pages homed on another rank: with homes moving to
    // their only writer (MPIDSM_HOME_MIGRATION's default), the written pages
    // would become the writer's after a few iterations, and the rows would
    // time barriers with nothing to diff.
    dsm.set_home_migration(HomeMigration::off);
    const int me = h.rank(), ranks = h.size();
    const std::size_t page = dsm.page_size();
    // Each rank's slab: 8192 pages where the region (MPIDSM_DSM_SIZE) holds
    // them for every rank, fewer with many ranks, but at least the 256 the
    // dirty rows write, plus the halo rows' page.
    constexpr std::size_t kSlabPages = 8192, kLeast = 257;
    const std::size_t per_rank =
        std::min(kSlabPages, dsm.size() / page / static_cast<std::size_t>(ranks));
    if (per_rank < kLeast)
      throw Error(Errc::no_memory, me,
                  "dsm_barrier_latency needs " + std::to_string(kLeast * page) +
                      " bytes of the DSM region per rank, " +
                      std::to_string(kLeast * page * static_cast<std::size_t>(ranks)) +
                      " in all: raise MPIDSM_DSM_SIZE (now " + std::to_string(dsm.size()) + ")");
    // Pages homed block-wise: rank r's slab is [r*per_rank, (r+1)*per_rank).
    auto* data = dsm.allocate<std::byte>(page * per_rank * static_cast<std::size_t>(ranks));
    std::byte* next_slab = data + page * per_rank * static_cast<std::size_t>((me + 1) % ranks);
    h.print_header();

    auto mpi_barrier = [&](std::size_t, int n) {
      return per_iteration(n, [&](int) { MPI_Barrier(MPI_COMM_WORLD); });
    };
    Row clean;
    clean.label = "clean";
    clean.mpidsm = [&](std::size_t, int n) {
      return per_iteration(n, [&](int) { dsm.barrier(); });
    };
    clean.mpi = mpi_barrier;
    h.run(clean);

    Row cached = clean;
    cached.label = "clean_cached";
    std::uint64_t sink = 0;
    for (std::size_t p = 0; p < per_rank; ++p)
      sink += *reinterpret_cast<volatile std::uint64_t*>(next_slab + p * page);
    h.run(cached);

    // A row timing only the barrier that follows `update(i)` in iteration i,
    // for at most `most` iterations (each update takes write faults). The
    // ranks enter it together (an MPI_Barrier, untimed): otherwise it would
    // also time how much longer one rank's update took than another's
    // (with 256 pages of floats, a third of the row on one node).
    auto barrier_after = [&](const std::string& label, int most, auto update) {
      Row row;
      row.label = label;
      row.mpidsm = [&, most, update](std::size_t, int iterations) {
        const int n = std::max(1, std::min(iterations, most));
        double total = 0;
        for (int i = 0; i < n; ++i) {
          update(i);
          MPI_Barrier(MPI_COMM_WORLD);
          const double start = seconds();
          dsm.barrier();
          total += seconds() - start;
        }
        return total / n;
      };
      row.mpi = mpi_barrier;
      h.run(row);
    };
    for (std::size_t dirty : {std::size_t{1}, std::size_t{16}, std::size_t{256}})
      barrier_after("dirty_" + std::to_string(dirty), static_cast<int>(4000 / dirty),
                    [&, dirty](int i) {
                      for (std::size_t p = 0; p < dirty; ++p)
                        *reinterpret_cast<volatile std::uint64_t*>(next_slab + p * page) =
                            static_cast<std::uint64_t>(i);
                    });
    // 256 pages rewritten whole before each timed barrier.
    constexpr std::size_t rewritten = 256;
    barrier_after("floats_256", 200, [&](int) {
      auto* values = reinterpret_cast<float*>(next_slab);
      for (std::size_t k = 0; k < rewritten * page / sizeof(float); ++k)
        values[k] = values[k] * 0.999f + 0.001f;
    });
    barrier_after("bytes_256", 200,
                  [&](int i) { std::memset(next_slab, 1 + i % 255, rewritten * page); });

    // The last page of each slab, which the rows above leave alone.
    auto* own_page = reinterpret_cast<std::uint64_t*>(data + page * (per_rank * me + per_rank - 1));
    auto* next_page = reinterpret_cast<volatile std::uint64_t*>(next_slab + page * (per_rank - 1));
    std::vector<std::uint64_t> send(page / sizeof(std::uint64_t)), receive(send.size());
    Row halo;
    halo.label = "halo_page";
    halo.mpi_name = "MPI_Sendrecv of the page";
    halo.mpidsm = [&](std::size_t, int n) {
      return per_iteration(n, [&](int i) {
        own_page[i % 8] = static_cast<std::uint64_t>(i);
        dsm.barrier();
        sink += next_page[i % 8];
      });
    };
    halo.mpi = [&](std::size_t, int n) {
      const int next = (me + 1) % ranks, previous = (me + ranks - 1) % ranks;
      return per_iteration(n, [&](int i) {
        send[static_cast<std::size_t>(i % 8)] = static_cast<std::uint64_t>(i);
        MPI_Sendrecv(send.data(), static_cast<int>(page), MPI_BYTE, previous, 0, receive.data(),
                     static_cast<int>(page), MPI_BYTE, next, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        sink += receive[static_cast<std::size_t>(i % 8)];
      });
    };
    h.run(halo);

    std::vector<int> ring{(me + ranks - 1) % ranks};
    if ((me + 1) % ranks != ring[0]) ring.push_back((me + 1) % ranks);
    if (ranks == 1) ring.clear();
    Row sync = halo;
    sync.label = "sync_halo";
    sync.mpidsm = [&](std::size_t, int n) {
      return per_iteration(n, [&](int i) {
        own_page[i % 8] = static_cast<std::uint64_t>(i);
        dsm.sync_with(ring);
        sink += next_page[i % 8];
      });
    };
    h.run(sync);
    if (sink == 12345) std::puts("");
    dsm.free(data);
  } catch (const std::exception& e) {
    return mpidsm::bench::leave_on_error(argv[0], e);
  }
  MPI_Finalize();
}
