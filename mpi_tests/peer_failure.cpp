// A rank killed with SIGKILL while the others wait on it in a blocking call
// (mpirun --enable-recovery keeps the survivors running): every survivor must
// get Errc::transport naming the dead rank within 10 s, instead of a hang.
//   mpirun --enable-recovery -np N peer_failure <barrier|lock|wait_until|recv|put>
// Prints one line per survivor and exits 0 when all of them got that error.
// A plain program: survivors leave with _exit, as MPI_Finalize cannot
// complete without the dead rank.
#include <mpi.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "mpidsm/dsm.hpp"
#include "mpidsm/pgas.hpp"

using namespace mpidsm;

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const std::string scenario = argc > 1 ? argv[1] : "";
  Runtime runtime(MPI_COMM_WORLD);
  Pgas pgas(runtime);
  Dsm dsm(runtime);
  const int me = runtime.rank(), victim = runtime.size() - 1;
  constexpr std::size_t kBytes = 1 << 20;
  auto signal_word = pgas.allocate<std::uint64_t>(1);
  signal_word[0] = 0;  // symmetric allocations start uninitialised, as shmem_malloc's do
  auto target = pgas.allocate<char>(kBytes);
  std::vector<char> buffer(kBytes, 'x');
  if (scenario == "lock" && me == victim) dsm.lock(3);  // dies holding it
  MPI_Barrier(MPI_COMM_WORLD);
  if (me == victim) raise(SIGKILL);

  const auto start = std::chrono::steady_clock::now();
  auto seconds = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  std::string outcome = "no error";
  bool ok = false;
  try {
    if (scenario == "barrier") {
      dsm.barrier();
    } else if (scenario == "lock") {
      dsm.lock(3);
    } else if (scenario == "wait_until") {
      pgas.wait_until(signal_word.local(), Compare::ne, std::uint64_t{0});
    } else if (scenario == "recv") {
      runtime.transport().recv(victim, 5, buffer.data(), kBytes);
    } else if (scenario == "put") {
      // Into the dead rank's memory: where it is mapped here the puts land and
      // nothing waits; through UCX, the completion wait must end.
      while (seconds() < 3) {
        pgas.put(target.at(victim), buffer.data(), kBytes);
        pgas.quiet();
      }
      outcome = "puts went on without blocking for 3 s";
      ok = true;
    } else {
      outcome = "unknown scenario '" + scenario + "'";
    }
  } catch (const Error& e) {
    outcome = e.what();
    // From mpidsm's liveness check, or from UCX when it saw the connection go.
    ok = e.code() == Errc::transport &&
         (outcome.find("rank " + std::to_string(victim) + " is gone") != std::string::npos) &&
         seconds() < 10;
  }
  std::printf("rank %d: %s: %s after %.2f s: %s\n", me, scenario.c_str(), ok ? "ok" : "FAILED",
              seconds(), outcome.c_str());
  std::fflush(stdout);
  sleep(3);  // a survivor leaving at once would look dead to the others
  _exit(ok ? 0 : 1);
}
