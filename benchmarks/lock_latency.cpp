// DSM lock latency: lock + unlock of a lock homed on rank 1.
//   uncontended  rank 0 alone; MPI: MPI_Win_lock(EXCLUSIVE, 1) + MPI_Win_unlock
//   contended    every rank locks and unlocks the same lock in a loop (with two
//                ranks, each acquisition is a hand-off); time per pair on rank 0
//   written      rank 0 alone, writing a word of a page homed on rank 1 under
//                the lock (its release carries a diff and a write notice);
//                MPI: MPI_Win_lock + an 8-byte MPI_Put + MPI_Win_unlock
//   counter      every rank increments a word of a page homed on rank 1 under
//                the lock in a loop: each acquisition a hand-off whose log
//                names the page the last holder wrote; time per increment
//                on rank 0. MPI: MPI_Win_lock, MPI_Get, MPI_Win_flush,
//                MPI_Put of the word plus one, MPI_Win_unlock
//   homes_1GiB   rank 0 homes 1 GiB (262,144 pages) and rank 1 has just copied
//                one more of them: rank 0's lock + unlock (its release must
//                not look at every page it homes); MPI as uncontended
//   mpirun -np N lock_latency [-i n] [-x n] [-f] [--csv]
#include <algorithm>
#include <cstdint>

#include "harness.hpp"
#include "mpi_window.hpp"
#include "mpidsm/dsm.hpp"

using namespace mpidsm;
using namespace mpidsm::bench;

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  try {
    Harness h(argc, argv,
              {"Lock Latency", Unit::latency_us, false, false, 2, "MPI_Win_lock + MPI_Win_unlock",
               0, true});
    Dsm dsm(h.runtime());
    const int me = h.rank();
    constexpr std::size_t kLock = 1;  // homed on rank 1
    // A window for MPI's passive-target lock (not under lock_all).
    void* base = nullptr;
    MPI_Win win;
    allocate_mpi_window_or_abort(64, MPI_COMM_WORLD, &base, &win);
    h.print_header();

    // Rank 0 times `body` alone while rank 1 waits in MPI_Barrier.
    auto on_rank_0 = [&](int n, auto&& body) {
      const double t = me == 0 ? per_iteration(n, body) : 0.0;
      MPI_Barrier(MPI_COMM_WORLD);
      return t;
    };
    // Every rank runs `body` at once; rank 0's time.
    auto on_every_rank = [&](int n, auto&& body) {
      MPI_Barrier(MPI_COMM_WORLD);
      const double t = per_iteration(n, body);
      MPI_Barrier(MPI_COMM_WORLD);
      return t;
    };
    Row alone;
    alone.label = "uncontended";
    alone.mpidsm = [&](std::size_t, int n) {
      return on_rank_0(n, [&](int) {
        dsm.lock(kLock);
        dsm.unlock(kLock);
      });
    };
    alone.mpi = [&](std::size_t, int n) {
      return on_rank_0(n, [&](int) {
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, win);
        MPI_Win_unlock(1, win);
      });
    };
    h.run(alone);

    Row contended;
    contended.label = "contended";
    contended.mpidsm = [&](std::size_t, int n) {
      return on_every_rank(n, [&](int) {
        dsm.lock(kLock);
        dsm.unlock(kLock);
      });
    };
    contended.mpi = [&](std::size_t, int n) {
      return on_every_rank(n, [&](int) {
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, win);
        MPI_Win_unlock(1, win);
      });
    };
    h.run(contended);

    auto* word =
        dsm.allocate<std::uint64_t>(dsm.page_size() / sizeof(std::uint64_t), Placement::on(1));
    Row written;
    written.label = "written";
    written.mpi_name = "MPI_Win_lock; MPI_Put; MPI_Win_unlock";
    written.mpidsm = [&](std::size_t, int n) {
      return on_rank_0(n, [&](int i) {
        dsm.lock(kLock);
        *word = static_cast<std::uint64_t>(i);
        dsm.unlock(kLock);
      });
    };
    written.mpi = [&](std::size_t, int n) {
      std::uint64_t value = 0;
      return on_rank_0(n, [&](int i) {
        value = static_cast<std::uint64_t>(i);
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, win);
        MPI_Put(&value, sizeof value, MPI_BYTE, 1, 0, sizeof value, MPI_BYTE, win);
        MPI_Win_unlock(1, win);
      });
    };
    h.run(written);

    Row counter;
    counter.label = "counter";
    counter.mpi_name = "MPI_Win_lock; MPI_Get; MPI_Put; MPI_Win_unlock";
    counter.mpidsm = [&](std::size_t, int n) {
      return on_every_rank(n, [&](int) {
        dsm.lock(kLock);
        *word += 1;
        dsm.unlock(kLock);
      });
    };
    counter.mpi = [&](std::size_t, int n) {
      std::uint64_t value = 0;
      return on_every_rank(n, [&](int) {
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, win);
        MPI_Get(&value, sizeof value, MPI_BYTE, 1, 0, sizeof value, MPI_BYTE, win);
        MPI_Win_flush(1, win);
        value += 1;
        MPI_Put(&value, sizeof value, MPI_BYTE, 1, 0, sizeof value, MPI_BYTE, win);
        MPI_Win_unlock(1, win);
      });
    };
    h.run(counter);
    dsm.free(word);

    // A second region with 1 GiB homed on rank 0, prefetch off so that each
    // read by rank 1 copies exactly one new page.
    DsmSettings big = DsmSettings::from(h.runtime().config());
    big.size = (std::size_t{1} << 30) + (std::size_t{64} << 20);
    big.prefetch_pages = 0;
    Dsm homes(h.runtime(), big);
    const std::size_t page = homes.page_size(), homed = (std::size_t{1} << 30) / page;
    auto* data = homes.allocate<std::byte>(homed * page, Placement::on(0));
    std::size_t copied = 0;
    Row many;
    many.label = "homes_1GiB";
    many.mpidsm = [&](std::size_t, int iterations) {
      const int n = std::min(iterations, 2000);  // each copies a page on rank 1
      double total = 0;
      for (int i = 0; i < n; ++i, ++copied) {
        if (me == 1) (void)*reinterpret_cast<volatile std::byte*>(data + (copied % homed) * page);
        MPI_Barrier(MPI_COMM_WORLD);
        if (me == 0) {
          const double start = seconds();
          homes.lock(kLock);
          homes.unlock(kLock);
          total += seconds() - start;
        }
      }
      MPI_Barrier(MPI_COMM_WORLD);
      return total / n;
    };
    many.mpi = alone.mpi;
    h.run(many);
    homes.free(data);
    MPI_Win_free(&win);
  } catch (const std::exception& e) {
    return mpidsm::bench::leave_on_error(argv[0], e);
  }
  MPI_Finalize();
}
