// DSM lock latency: lock + unlock of a lock homed on rank 1.
//   uncontended  rank 0 alone; MPI: MPI_Win_lock(EXCLUSIVE, 1) + MPI_Win_unlock
//   contended    every rank locks and unlocks the same lock in a loop (with two
//                ranks, each acquisition is a hand-off); time per pair on rank 0
//   mpirun -np N lock_latency [-i n] [-x n] [-f] [--csv]
#include "harness.hpp"
#include "mpidsm/dsm.hpp"

using namespace mpidsm;
using namespace mpidsm::bench;

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  {
    Harness h(argc, argv, {"Lock Latency", Unit::latency_us, false, false, 2});
    Dsm dsm(h.runtime());
    const int me = h.rank();
    constexpr std::size_t kLock = 1;  // homed on rank 1
    // A window for MPI's passive-target lock (not under lock_all).
    void* base = nullptr;
    MPI_Win win;
    MPI_Win_allocate(64, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
    h.print_header();

    Row alone;
    alone.label = "uncontended";
    alone.mpidsm = [&](std::size_t, int n) {
      double t = 0;
      if (me == 0)
        t = per_iteration(n, [&](int) {
          dsm.lock(kLock);
          dsm.unlock(kLock);
        });
      MPI_Barrier(MPI_COMM_WORLD);
      return t;
    };
    alone.mpi = [&](std::size_t, int n) {
      double t = 0;
      if (me == 0)
        t = per_iteration(n, [&](int) {
          MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, win);
          MPI_Win_unlock(1, win);
        });
      MPI_Barrier(MPI_COMM_WORLD);
      return t;
    };
    h.run(alone);

    Row contended;
    contended.label = "contended";
    contended.mpidsm = [&](std::size_t, int n) {
      MPI_Barrier(MPI_COMM_WORLD);
      const double t = per_iteration(n, [&](int) {
        dsm.lock(kLock);
        dsm.unlock(kLock);
      });
      MPI_Barrier(MPI_COMM_WORLD);
      return t;
    };
    contended.mpi = [&](std::size_t, int n) {
      MPI_Barrier(MPI_COMM_WORLD);
      const double t = per_iteration(n, [&](int) {
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, win);
        MPI_Win_unlock(1, win);
      });
      MPI_Barrier(MPI_COMM_WORLD);
      return t;
    };
    h.run(contended);
    MPI_Win_free(&win);
  }
  MPI_Finalize();
}
