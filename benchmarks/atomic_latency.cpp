// Atomic latency on a 64-bit word of rank 1, one row per operation: mpidsm
// fetch-add, compare-swap and swap against MPI_Fetch_and_op(MPI_SUM),
// MPI_Compare_and_swap and MPI_Fetch_and_op(MPI_REPLACE), each + MPI_Win_flush.
//   mpirun -np 2 atomic_latency [-i n] [-x n] [-f] [--csv]
#include <cstdint>
#include <functional>

#include "harness.hpp"

using namespace mpidsm;
using namespace mpidsm::bench;

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  try {
    Harness h(argc, argv, {"Atomic Latency", Unit::latency_us, false, false, 2, "", 2, true});
    Pgas& p = h.pgas();
    auto word = p.allocate<std::uint64_t>(1);
    MpiWindow window(sizeof(std::uint64_t), MPI_COMM_WORLD);
    MPI_Win win = window.win();
    const bool active = h.rank() == 0;
    std::uint64_t one = 1, result = 0, compare = 0;

    auto timed = [&](std::function<void()> ours, std::function<void()> theirs) {
      Row row;
      row.mpidsm = [&p, active, ours](std::size_t, int n) {
        double t = active ? per_iteration(n, [&](int) { ours(); }) : 0;
        p.barrier();
        return t;
      };
      row.mpi = [active, theirs](std::size_t, int n) {
        double t = active ? per_iteration(n, [&](int) { theirs(); }) : 0;
        MPI_Barrier(MPI_COMM_WORLD);
        return t;
      };
      return row;
    };
    h.print_header();
    Row fadd = timed([&] { result = p.atomic_fetch_add(word.at(1), one); },
                     [&] {
                       MPI_Fetch_and_op(&one, &result, MPI_UINT64_T, 1, 0, MPI_SUM, win);
                       MPI_Win_flush(1, win);
                     });
    fadd.label = "fetch-add";
    fadd.mpi_name = "MPI_Fetch_and_op(SUM) + flush";
    h.run(fadd);
    Row cswap = timed([&] { result = p.atomic_compare_swap(word.at(1), compare, one); },
                      [&] {
                        MPI_Compare_and_swap(&one, &compare, &result, MPI_UINT64_T, 1, 0, win);
                        MPI_Win_flush(1, win);
                      });
    cswap.label = "compare-swap";
    cswap.mpi_name = "MPI_Compare_and_swap + flush";
    h.run(cswap);
    Row swap = timed([&] { result = p.atomic_swap(word.at(1), one); },
                     [&] {
                       MPI_Fetch_and_op(&one, &result, MPI_UINT64_T, 1, 0, MPI_REPLACE, win);
                       MPI_Win_flush(1, win);
                     });
    swap.label = "swap";
    swap.mpi_name = "MPI_Fetch_and_op(REPLACE) + flush";
    h.run(swap);
    p.free(word);
  } catch (const std::exception& e) {
    return mpidsm::bench::leave_on_error(argv[0], e);
  }
  MPI_Finalize();
}
