// Collective latency over a team of every rank: mpidsm's Team collectives
// against the MPI collective each one stands for, on the same ranks, 8 bytes
// per rank (OSU's osu_barrier, osu_bcast, osu_allgather, osu_allreduce and
// osu_alltoall at their smallest size):
//   sync          Team::sync                 MPI_Barrier
//   broadcast_8   Team::broadcast of 8 bytes MPI_Bcast
//   fcollect_8    Team::fcollect, 8 per rank MPI_Allgather
//   reduce_sum_8  Team::reduce(sum) of 1 u64 MPI_Allreduce(MPI_SUM)
//   alltoall_8    Team::alltoall, 8 per pair MPI_Alltoall
//   mpirun -np N collective_latency [-i n] [-x n] [-f] [--csv]
#include <cstdint>
#include <vector>

#include "harness.hpp"
#include "mpidsm/team.hpp"

using namespace mpidsm;
using namespace mpidsm::bench;

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  try {
    Harness h(argc, argv, {"Collective Latency", Unit::latency_us, false, false, 1, ""});
    Pgas& p = h.pgas();
    Team team = Team::world(p);
    MPI_Comm comm = team.comm();
    const auto ranks = static_cast<std::size_t>(h.size());
    // Symmetric buffers, as OpenSHMEM's collectives take them.
    auto source = p.allocate_zeroed<std::uint64_t>(ranks);
    auto dest = p.allocate_zeroed<std::uint64_t>(ranks);
    h.print_header();

    auto row = [&](const char* label, const char* mpi_name, auto ours, auto theirs) {
      Row r;
      r.label = label;
      r.mpi_name = mpi_name;
      r.mpidsm = [&, ours](std::size_t, int n) { return per_iteration(n, [&](int) { ours(); }); };
      r.mpi = [&, theirs](std::size_t, int n) { return per_iteration(n, [&](int) { theirs(); }); };
      h.run(r);
    };
    row(
        "sync", "MPI_Barrier", [&] { team.sync(); }, [&] { MPI_Barrier(comm); });
    row(
        "broadcast_8", "MPI_Bcast", [&] { team.broadcast(dest.local(), source.local(), 1, 0); },
        [&] { MPI_Bcast(dest.local(), 1, MPI_UINT64_T, 0, comm); });
    row(
        "fcollect_8", "MPI_Allgather", [&] { team.fcollect(dest.local(), source.local(), 1); },
        [&] {
          MPI_Allgather(source.local(), 1, MPI_UINT64_T, dest.local(), 1, MPI_UINT64_T, comm);
        });
    row(
        "reduce_sum_8", "MPI_Allreduce(MPI_SUM)",
        [&] { team.reduce(ReduceOp::sum, dest.local(), source.local(), 1); },
        [&] { MPI_Allreduce(source.local(), dest.local(), 1, MPI_UINT64_T, MPI_SUM, comm); });
    row(
        "alltoall_8", "MPI_Alltoall", [&] { team.alltoall(dest.local(), source.local(), 1); },
        [&] {
          MPI_Alltoall(source.local(), 1, MPI_UINT64_T, dest.local(), 1, MPI_UINT64_T, comm);
        });
    p.free(source);
    p.free(dest);
  } catch (const std::exception& e) {
    return mpidsm::bench::leave_on_error(argv[0], e);
  }
  MPI_Finalize();
}
