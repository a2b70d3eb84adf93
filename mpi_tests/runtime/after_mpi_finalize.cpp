// A Pgas and a Dsm (and their Runtime) still alive at MPI_Finalize, as in a
// program whose objects are destroyed at the end of main: collective calls
// are typed errors and destruction is safe. Not a gtest program (gtest's
// main finalizes MPI itself); exits non-zero on any failure.
#include <mpi.h>

#include <cstdio>
#include <memory>
#include <string>

#include "mpidsm/dsm.hpp"
#include "mpidsm/pgas.hpp"

namespace {

int failures = 0;

template <class F>
void expect_mpi_error(const char* what, F&& call) {
  try {
    call();
    std::fprintf(stderr, "FAILED: %s after MPI_Finalize did not throw\n", what);
    ++failures;
  } catch (const mpidsm::Error& e) {
    if (e.code() != mpidsm::Errc::mpi ||
        std::string(e.what()).find("after MPI_Finalize") == std::string::npos) {
      std::fprintf(stderr, "FAILED: %s: unexpected error %s\n", what, e.what());
      ++failures;
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  auto runtime = std::make_unique<mpidsm::Runtime>(MPI_COMM_WORLD);
  auto pgas = std::make_unique<mpidsm::Pgas>(*runtime);
  auto dsm = std::make_unique<mpidsm::Dsm>(*runtime);
  auto array = pgas->allocate<long>(8);
  array[0] = runtime->rank();
  long* shared = dsm->allocate<long>(8);
  shared[runtime->rank() % 8] = 1;
  dsm->barrier();
  MPI_Finalize();
  expect_mpi_error("Pgas::barrier", [&] { pgas->barrier(); });
  expect_mpi_error("Pgas::allocate", [&] { pgas->allocate<long>(8); });
  expect_mpi_error("Dsm::barrier", [&] { dsm->barrier(); });
  expect_mpi_error("Dsm::allocate", [&] { dsm->allocate<long>(8); });
  dsm.reset();
  pgas.reset();
  runtime.reset();  // prints that peers could not be waited for
  if (failures == 0) std::printf("after MPI_Finalize: every call was a typed error\n");
  return failures == 0 ? 0 : 1;
}
