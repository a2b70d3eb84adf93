// A rank killed with SIGKILL while the others wait on it in a blocking call
// (mpirun --enable-recovery keeps the survivors running): every survivor must
// get Errc::transport naming the dead rank within 10 s, instead of a hang,
// and then destroy its Dsm, Pgas and Runtime within 10 s more.
//   mpirun --enable-recovery -np N peer_failure <scenario> [exit|return|finalize]
// Scenarios: barrier lock wait_flag sync_with wait_until recv put get
// pgas_barrier dsm_allocate dsm_free pgas_allocate pgas_free.
// Prints one line per survivor and exits 0 when all of them got that error.
// A plain program: survivors leave with _exit by default, as MPI_Finalize
// cannot complete without the dead rank; `return` returns from main without
// it, `finalize` calls it and returns (scripts/check-job-ends.sh: whatever
// the survivors do, the job must end). The victim prints when it dies
// (CLOCK_REALTIME, which every simulated host shares).
#include <mpi.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <optional>
#include <string>
#include <vector>

#include "mpidsm/dsm.hpp"
#include "mpidsm/pgas.hpp"
#include "names_gone.hpp"

using namespace mpidsm;

namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const std::string scenario = argc > 1 ? argv[1] : "";
  const std::string leave = argc > 2 ? argv[2] : "exit";
  std::optional<Runtime> runtime(std::in_place, MPI_COMM_WORLD);
  std::optional<Pgas> pgas(std::in_place, *runtime);
  std::optional<Dsm> dsm(std::in_place, *runtime);
  const int me = runtime->rank(), victim = runtime->size() - 1;
  constexpr std::size_t kBytes = 1 << 20;
  auto signal_word = pgas->allocate<std::uint64_t>(1);
  signal_word[0] = 0;  // symmetric allocations start uninitialised, as shmem_malloc's do
  auto target = pgas->allocate<char>(kBytes);
  char* shared = dsm->allocate<char>(4096);
  std::vector<char> buffer(kBytes, 'x');
  if (scenario == "lock" && me == victim) dsm->lock(3);  // dies holding it
  MPI_Barrier(MPI_COMM_WORLD);
  if (me == victim) {
    timespec now{};
    clock_gettime(CLOCK_REALTIME, &now);
    std::printf("rank %d: dies at %lld.%09ld\n", me, static_cast<long long>(now.tv_sec),
                now.tv_nsec);
    std::fflush(stdout);
    raise(SIGKILL);
  }

  const auto start = std::chrono::steady_clock::now();
  std::string outcome = "no error";
  bool ok = false;
  // Where the dead rank's memory is mapped here, puts and gets land and
  // nothing waits; through UCX, the completion wait must end.
  auto for_three_seconds = [&](auto&& transfer) {
    while (seconds_since(start) < 3) transfer();
    outcome = "went on without blocking for 3 s";
    ok = true;
  };
  try {
    if (scenario == "barrier") {
      dsm->barrier();
    } else if (scenario == "lock") {
      dsm->lock(3);
    } else if (scenario == "wait_flag") {
      dsm->wait_flag(5);  // the victim would have set it
    } else if (scenario == "sync_with") {
      const int peers[] = {victim};
      dsm->sync_with(peers);
    } else if (scenario == "wait_until") {
      pgas->wait_until(signal_word.local(), Compare::ne, std::uint64_t{0});
    } else if (scenario == "recv") {
      runtime->transport().recv(victim, 5, buffer.data(), kBytes);
    } else if (scenario == "put") {
      for_three_seconds([&] {
        pgas->put(target.at(victim), buffer.data(), kBytes);
        pgas->quiet();
      });
    } else if (scenario == "get") {
      for_three_seconds([&] { pgas->get(buffer.data(), target.at(victim), kBytes); });
    } else if (scenario == "pgas_barrier") {
      pgas->barrier();
    } else if (scenario == "dsm_allocate") {
      dsm->allocate<char>(4096);
    } else if (scenario == "dsm_free") {
      dsm->free(shared);
    } else if (scenario == "pgas_allocate") {
      pgas->allocate<char>(4096);
    } else if (scenario == "pgas_free") {
      pgas->free(target);
    } else {
      outcome = "unknown scenario '" + scenario + "'";
    }
  } catch (const Error& e) {
    outcome = e.what();
    // From mpidsm's liveness check, or from UCX when it saw the connection go.
    ok = e.code() == Errc::transport && names_gone(outcome, victim) && seconds_since(start) < 10;
  }
  const double to_error = seconds_since(start);
  // Destroying everything must not wait for the dead rank either.
  dsm.reset();
  pgas.reset();
  runtime.reset();
  const double to_destroyed = seconds_since(start);
  ok = ok && to_destroyed - to_error < 10;
  std::printf("rank %d: %s: %s after %.2f s (destroyed after %.2f s): %s\n", me, scenario.c_str(),
              ok ? "ok" : "FAILED", to_error, to_destroyed, outcome.c_str());
  std::fflush(stdout);
  sleep(3);  // a survivor leaving at once would look dead to the others
  if (leave == "finalize") MPI_Finalize();
  if (leave == "return" || leave == "finalize") return ok ? 0 : 1;
  _exit(ok ? 0 : 1);
}
