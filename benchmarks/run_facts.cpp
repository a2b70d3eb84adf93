#include "run_facts.hpp"

#include <mpi.h>
#include <unistd.h>

#include <cstdio>
#include <ctime>
#include <fstream>

#include "mpi_window.hpp"
#include "mpidsm/version.hpp"

namespace mpidsm::bench {
namespace {

// Open MPI names the window of most one-sided components "<component>
// window <n>" (ucx, rdma, pt2pt); osc/sm leaves the name empty and sets its
// own info key. Other MPI libraries: "unknown". Where MPI gives no window,
// "none" and why: a benchmark that needs none still runs.
std::string one_sided_component() {
  void* base = nullptr;
  MPI_Win win;
  std::string error;
  if (!allocate_mpi_window(8, MPI_COMM_WORLD, &base, &win, error)) return "none: " + error;
  char name[MPI_MAX_OBJECT_NAME] = {};
  int length = 0;
  MPI_Win_get_name(win, name, &length);
  std::string component(name, static_cast<std::size_t>(length));
  if (auto space = component.find(' '); space != std::string::npos) {
    component.resize(space);
  } else {
    MPI_Info info;
    MPI_Win_get_info(win, &info);
    char value[16];
    int found = 0;
    MPI_Info_get(info, "alloc_shared_noncontig", sizeof value - 1, value, &found);
    MPI_Info_free(&info);
    component = found ? "sm" : "unknown";
  }
  MPI_Win_free(&win);
  return "osc/" + component;
}

std::string mpi_library() {
  char library[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int length = 0;
  MPI_Get_library_version(library, &length);
  std::string name(library, static_cast<std::size_t>(length));
  if (auto end = name.find_first_of(",\n"); end != std::string::npos) name.resize(end);
  return name;
}

// /proc/cpuinfo's "model name" (x86) or "CPU part" (Arm), as the kernel
// reports it.
std::string cpu_model() {
  std::ifstream info("/proc/cpuinfo");
  std::string line;
  for (const char* key : {"model name", "CPU part"}) {
    info.clear();
    info.seekg(0);
    while (std::getline(info, line)) {
      if (line.rfind(key, 0) != 0) continue;
      const auto colon = line.find(':');
      if (colon == std::string::npos) continue;
      const auto start = line.find_first_not_of(' ', colon + 1);
      return start == std::string::npos ? "" : line.substr(start);
    }
  }
  return "unknown";
}

// The vector extensions the DSM's diff kernels choose between ("avx2 bmi2, no
// avx512f avx512bw": no semicolon, which separates the CSV facts).
std::string vector_extensions() {
#if defined(__x86_64__)
  std::string have, lack;
  auto note = [&](const char* name, bool present) {
    std::string& list = present ? have : lack;
    list += list.empty() ? name : std::string(" ") + name;
  };
  note("avx2", __builtin_cpu_supports("avx2"));
  note("bmi2", __builtin_cpu_supports("bmi2"));
  note("avx512f", __builtin_cpu_supports("avx512f"));
  note("avx512bw", __builtin_cpu_supports("avx512bw"));
  return (have.empty() ? "none" : have) + (lack.empty() ? "" : ", no " + lack);
#elif defined(__aarch64__)
  return "neon";
#else
  return "unknown";
#endif
}

}  // namespace

RunFacts gather_run_facts(Runtime& runtime) {
  RunFacts facts;
  facts.mpi = mpi_library();
  facts.mpi_osc = one_sided_component();
  facts.ranks = runtime.size();
  facts.transport = facts.ranks > 1 ? runtime.transport().path_to(1) : "self";
  facts.cpu = cpu_model();
  facts.vector = vector_extensions();
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  facts.host = host;
  char date[32] = {};
  const std::time_t now = std::time(nullptr);
  std::strftime(date, sizeof date, "%Y-%m-%d %H:%M", std::localtime(&now));
  facts.date = date;
  return facts;
}

void print_run_facts(std::FILE* out, const RunFacts& f, const std::string& title, bool csv) {
  if (csv) {
    std::fprintf(
        out,
        "# mpidsm=%s; mpi=%s; mpi_osc=%s; transport=%s; cpu=%s; vector=%s; ranks=%d; host=%s; "
        "date=%s\n",
        build::version, f.mpi.c_str(), f.mpi_osc.c_str(), f.transport.c_str(), f.cpu.c_str(),
        f.vector.c_str(), f.ranks, f.host.c_str(), f.date.c_str());
    return;
  }
  std::fprintf(out, "# mpidsm %s v%s\n", title.c_str(), build::version);
  std::fprintf(out, "# %s; MPI one-sided %s; mpidsm rank 0 to 1: %s\n", f.mpi.c_str(),
               f.mpi_osc.c_str(), f.transport.c_str());
  std::fprintf(out, "# CPU %s (%s); %d ranks on %s, %s\n", f.cpu.c_str(), f.vector.c_str(), f.ranks,
               f.host.c_str(), f.date.c_str());
}

}  // namespace mpidsm::bench
