// C = A x B in doubles, rows of C split across ranks, written twice in one
// executable: on the coherent DSM (A, B, C shared; each rank initialises and
// computes its own rows, reads all of B through page faults) and MPI-native
// (each rank gathers B with MPI_Allgather). Both are checked against a
// sequential product on rank 0; the exit status is non-zero on a mismatch.
//
//   mpirun -np 2 matmul [-n 1024] [-r 5 repetitions]
#include <algorithm>
#include <cstdio>
#include <vector>

#include "example_support.hpp"
#include "mpidsm/dsm.hpp"

using namespace mpidsm;

namespace {

double a_value(std::size_t i, std::size_t k) {
  return static_cast<double>((i * 7 + k * 3) % 17) / 8.0 - 1.0;
}
double b_value(std::size_t k, std::size_t j) {
  return static_cast<double>((k * 5 + j * 11) % 13) / 4.0 - 1.5;
}

// C[rows] += A[rows] x B, i-k-j order; the same code for every version, so
// the results agree bit for bit.
void multiply(const double* a, const double* b, double* c, std::size_t rows, std::size_t n) {
  for (std::size_t i = 0; i < rows; ++i)
    for (std::size_t k = 0; k < n; ++k) {
      const double aik = a[i * n + k];
      const double* brow = b + k * n;
      double* crow = c + i * n;
      for (std::size_t j = 0; j < n; ++j) crow[j] += aik * brow[j];
    }
}

void fill_rows(double* a, double* b, std::size_t first, std::size_t last, std::size_t n) {
  for (std::size_t i = first; i < last; ++i)
    for (std::size_t j = 0; j < n; ++j) {
      a[(i - first) * n + j] = a_value(i, j);
      b[(i - first) * n + j] = b_value(i, j);
    }
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int status = 0;
  {
    examples::Options options(argc, argv, "[-n size] [-r repetitions]");
    const auto n = static_cast<std::size_t>(options.get('n', 1024));
    const int reps = static_cast<int>(options.get('r', 5));
    Runtime runtime(MPI_COMM_WORLD);
    Dsm dsm(runtime);
    const int me = runtime.rank(), ranks = runtime.size();
    const std::size_t first = n * me / ranks, last = n * (me + 1) / ranks, rows = last - first;

    // DSM: block placement homes each rank's rows (for n a multiple of the
    // page and rank counts) on that rank.
    double* a = dsm.allocate<double>(n * n);
    double* b = dsm.allocate<double>(n * n);
    double* c = dsm.allocate<double>(n * n);
    // MPI-native: own rows of A and C, all of B.
    std::vector<double> my_a(rows * n), all_b(n * n), my_c(rows * n), my_b(rows * n);
    std::vector<int> counts(ranks), offsets(ranks);
    for (int r = 0; r < ranks; ++r) {
      offsets[r] = static_cast<int>(n * r / ranks * n);
      counts[r] = static_cast<int>(n * (r + 1) / ranks * n) - offsets[r];
    }

    std::vector<double> dsm_times, mpi_times;
    examples::TrafficTally traffic(runtime, dsm);
    for (int rep = 0; rep < reps; ++rep) {
      traffic.begin_dsm();
      // DSM. Owners (re)write their rows of A and B, so every other rank's
      // copies are invalidated and this run fetches B again, as MPI gathers it.
      fill_rows(a + first * n, b + first * n, first, last, n);
      std::fill(c + first * n, c + last * n, 0.0);
      double start = start_together();
      dsm.barrier();  // publishes the initialisation: timed (report.h)
      multiply(a + first * n, b, c + first * n, rows, n);
      dsm.barrier();
      dsm_times.push_back(MPI_Wtime() - start);
      traffic.end_dsm();
      traffic.begin_mpi();

      // MPI-native.
      fill_rows(my_a.data(), my_b.data(), first, last, n);
      std::fill(my_c.begin(), my_c.end(), 0.0);
      start = start_together();
      MPI_Allgatherv(my_b.data(), counts[me], MPI_DOUBLE, all_b.data(), counts.data(),
                     offsets.data(), MPI_DOUBLE, MPI_COMM_WORLD);
      multiply(my_a.data(), all_b.data(), my_c.data(), rows, n);
      MPI_Barrier(MPI_COMM_WORLD);
      mpi_times.push_back(MPI_Wtime() - start);
      traffic.end_mpi();
    }
    char title[128];
    std::snprintf(title, sizeof title, "matmul n=%zu, %d rank%s", n, ranks, ranks > 1 ? "s" : "");
    examples::report(title, dsm_times, mpi_times, 2.0 * n * n * n / 1e9, "GFLOP/s");
    traffic.report();

    // Verification on rank 0: the DSM's C read through the DSM, the MPI C gathered.
    std::vector<double> gathered(me == 0 ? n * n : 0);
    MPI_Gatherv(my_c.data(), counts[me], MPI_DOUBLE, gathered.data(), counts.data(), offsets.data(),
                MPI_DOUBLE, 0, MPI_COMM_WORLD);
    bool ok = true;
    if (me == 0) {
      std::vector<double> ra(n * n), rb(n * n), rc(n * n, 0.0);
      fill_rows(ra.data(), rb.data(), 0, n, n);
      multiply(ra.data(), rb.data(), rc.data(), n, n);
      for (std::size_t i = 0; i < n * n && ok; ++i) ok = c[i] == rc[i] && gathered[i] == rc[i];
    }
    if (!examples::agree_verified(ok, "DSM and MPI-native products")) status = 1;
    dsm.barrier();
    dsm.free(c);
    dsm.free(b);
    dsm.free(a);
  }
  MPI_Finalize();
  return status;
}
