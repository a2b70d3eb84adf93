// A rank killed while the ranks construct their objects: every survivor
// gets a typed error naming it within 10 s, whichever point of construction
// it died at. The victim is the last rank; the point is the test's
// MPIDSM_TEST_KILL_AT ("<point>:<rank>", src/common/startup_watch.hpp).
//
//   startup_death runtime|dsm|pgas|shmem|jia
//
// runtime, dsm, pgas: a Runtime, then a Dsm or a Pgas on it, then a
// barrier, so a survivor that completed construction before the death
// hears of it there. shmem, jia: shmem_init and jia_init, whose errors are
// one line each before the job ends (checked by the test's expression).
#include <mpi.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <optional>
#include <string>

#include "jia.h"
#include "mpidsm/mpidsm.hpp"
#include "names_gone.hpp"
#include "shmem.h"

using namespace mpidsm;

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int me = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const std::string what = argc > 1 ? argv[1] : "runtime";
  const int victim = size - 1;
  MPI_Barrier(MPI_COMM_WORLD);  // every rank is up: the clock starts together
  const auto start = std::chrono::steady_clock::now();
  auto seconds = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  std::string outcome;
  bool ok = false;
  if (what == "shmem") {
    shmem_init();  // a survivor prints the error and the job ends in it
    outcome = "shmem_init returned";
  } else if (what == "jia") {
    jia_init(argc, argv);
    outcome = "jia_init returned";
  } else {
    try {
      Runtime runtime(MPI_COMM_WORLD);
      std::optional<Dsm> dsm;
      std::optional<Pgas> pgas;
      if (what == "dsm") dsm.emplace(runtime);
      if (what == "pgas") pgas.emplace(runtime);
      runtime.transport().barrier();
      outcome = "constructed everything, no error";
    } catch (const Error& e) {
      ok = e.code() == Errc::transport && names_gone(e.what(), victim) && seconds() < 10;
      outcome = std::string(e.what());
    }
  }
  std::printf("rank %d: %s after %.2f s: %s: %s\n", me, what.c_str(), seconds(),
              ok ? "ok" : "FAILED", outcome.c_str());
  std::fflush(stdout);
  _exit(ok || me == victim ? 0 : 1);  // MPI_Finalize would wait for the dead rank
}
