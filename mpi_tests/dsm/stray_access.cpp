// A load or store to DSM memory that no live allocation covers is a crash
// of the program's, not the protocol's: mpidsm prints one line naming the
// address and the nearest allocation, then the process dies of SIGSEGV as
// it would without mpidsm (the test checks both in mpirun's output).
//
//   stray_access freed|outside
//
// The last rank stores to a freed allocation (freed) or loads from beyond
// every allocation (outside); the others wait in MPI for it.
#include <mpi.h>

#include <cstdio>
#include <string>

#include "mpidsm/dsm.hpp"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const std::string what = argc > 1 ? argv[1] : "freed";
  {
    mpidsm::Runtime runtime(MPI_COMM_WORLD);
    mpidsm::Dsm dsm(runtime);
    const int me = runtime.rank(), last = runtime.size() - 1;
    const std::size_t page = dsm.page_size();
    auto* kept = dsm.allocate<char>(2 * page);
    auto* freed = dsm.allocate<char>(2 * page);
    kept[me] = 1;
    freed[me] = 1;
    dsm.barrier();
    dsm.free(freed);
    if (me == last) {
      std::printf("rank %d: touches %s memory\n", me, what.c_str());
      std::fflush(stdout);
      if (what == "freed")
        freed[page + 8] = 2;  // a store, to the second page
      else
        std::printf("read %d\n", static_cast<volatile char*>(kept)[16 * page]);  // a load
      std::printf("rank %d: FAILED: the stray access did not crash\n", me);
    }
    MPI_Barrier(MPI_COMM_WORLD);
  }
  MPI_Finalize();
  return 0;
}
