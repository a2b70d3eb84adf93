// What this machine's kernel charges for the operations a page-fault DSM is
// built on, for the header of docs/performance.md: a DSM/MPI ratio holds for
// a machine whose faults and protection changes cost what these did. Two
// machines of the same size (2 cores, AMD EPYC) differed fivefold: a
// SIGSEGV and one mprotect took 4.9 µs on one (../shared/DESIGN.md) and
// about 26 µs on the other, where dsm_miss_latency's fault_floor row (a
// SIGSEGV, an mprotect and a 4 KiB get) was 1.27-1.44x MPI_Get, not 1.10x.
//   kernel_costs [--csv]
// Prints the median and spread (min–max) of 5 repetitions of each, in µs:
//   system call   a system call that does no work (getppid, not cached by libc)
//   mprotect      one protection change of one page (half of a pair)
//   write fault   a write to a read-only page whose SIGSEGV handler makes it
//                 writable: the fault and two protection changes, the floor
//                 of a DSM write miss before any network
//   watch         what watching an updated copy costs (watch_updated in
//                 src/dsm/engine/barrier_updates.cpp): its page-table entry
//                 dropped (madvise MADV_DONTNEED of a shared page), the read
//                 that maps it again (a minor fault), and /proc/self/pagemap
//                 read to tell that it was touched
// A plain program (no MPI, no mpidsm): it installs its own SIGSEGV handler.
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {

constexpr int kRepetitions = 5;
constexpr int kIterations = 20000;

char* g_page = nullptr;
long g_page_size = 0;

void make_writable(int, siginfo_t* info, void*) {
  char* address = static_cast<char*>(info->si_addr);
  if (address < g_page || address >= g_page + g_page_size ||
      mprotect(g_page, static_cast<std::size_t>(g_page_size), PROT_READ | PROT_WRITE) != 0)
    _exit(3);  // a fault this program did not plan: leave rather than loop
}

void check(bool ok, const char* what) {
  if (ok) return;
  std::fprintf(stderr, "kernel_costs: %s failed: %s\n", what, std::strerror(errno));
  std::exit(1);
}

// Microseconds per call of `body`, over kIterations calls.
template <typename Body>
double per_call_us(Body&& body) {
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < kIterations; ++i) body(i);
  const std::chrono::duration<double, std::micro> took = std::chrono::steady_clock::now() - start;
  return took.count() / kIterations;
}

struct Spread {
  double median, min, max;
};

Spread spread_of(std::array<double, kRepetitions> values) {
  std::sort(values.begin(), values.end());
  return {values[kRepetitions / 2], values.front(), values.back()};
}

// Whether `address`'s page is mapped in this process's page table
// (/proc/self/pagemap: bit 63 of its 64-bit entry).
bool present(int pagemap, const volatile char* address) {
  std::uint64_t entry = 0;
  const auto at = static_cast<off_t>(reinterpret_cast<std::uintptr_t>(address) /
                                     static_cast<std::uintptr_t>(g_page_size) * sizeof entry);
  check(pread(pagemap, &entry, sizeof entry, at) == sizeof entry, "pread of /proc/self/pagemap");
  return entry >> 63;
}

}  // namespace

int main(int argc, char** argv) {
  const bool csv = argc > 1 && std::strcmp(argv[1], "--csv") == 0;
  if (argc > 2 || (argc == 2 && !csv)) {
    std::fprintf(stderr, "usage: kernel_costs [--csv]\n");
    return 2;
  }
  g_page_size = sysconf(_SC_PAGESIZE);
  void* mapped = mmap(nullptr, static_cast<std::size_t>(g_page_size), PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  check(mapped != MAP_FAILED, "mmap");
  g_page = static_cast<char*>(mapped);
  g_page[0] = 1;  // populated: the faults below are protection faults only
  struct sigaction action {};
  action.sa_sigaction = make_writable;
  action.sa_flags = SA_SIGINFO;
  sigemptyset(&action.sa_mask);
  check(sigaction(SIGSEGV, &action, nullptr) == 0, "sigaction");

  const auto size = static_cast<std::size_t>(g_page_size);
  volatile char* page = g_page;
  // A shared page, as the DSM's view is: dropping its page-table entry
  // keeps its bytes.
  const int memory = memfd_create("kernel_costs", MFD_CLOEXEC);
  check(memory >= 0 && ftruncate(memory, g_page_size) == 0, "memfd_create");
  void* shared = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, memory, 0);
  check(shared != MAP_FAILED, "mmap of the memfd");
  volatile char* watched = static_cast<char*>(shared);
  watched[0] = 7;
  const int pagemap = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
  check(pagemap >= 0, "open of /proc/self/pagemap");
  check(madvise(shared, size, MADV_DONTNEED) == 0, "madvise");
  const bool drop_seen = !present(pagemap, watched);
  int touches_seen = 0;  // watches whose pagemap read saw the read's refault
  long read_back = 0;
  std::array<double, kRepetitions> system_call{}, protect{}, fault{}, watch{};
  // Interleaved, so a burst of noise lands on all three alike.
  for (int r = 0; r < kRepetitions; ++r) {
    system_call[r] = per_call_us([](int) { syscall(SYS_getppid); });
    protect[r] = per_call_us([&](int i) {
      check(mprotect(g_page, size, i % 2 ? PROT_READ | PROT_WRITE : PROT_READ) == 0, "mprotect");
    });
    check(mprotect(g_page, size, PROT_READ | PROT_WRITE) == 0, "mprotect");
    fault[r] = per_call_us([&](int i) {
      check(mprotect(g_page, size, PROT_READ) == 0, "mprotect");
      page[0] = static_cast<char>(i);  // faults; the handler makes it writable
    });
    watch[r] = per_call_us([&](int) {
      check(madvise(shared, size, MADV_DONTNEED) == 0, "madvise");
      read_back += watched[0];  // a minor fault maps it again
      touches_seen += present(pagemap, watched);
    });
  }
  // The handler ran: every write above landed, the last one included.
  if (g_page[0] != static_cast<char>(kIterations - 1)) {
    std::fprintf(stderr, "kernel_costs: the faulting writes did not land\n");
    return 1;
  }
  // madvise dropped the entry, every watch saw the read map it again, and
  // the bytes stayed.
  if (!drop_seen || touches_seen != kRepetitions * kIterations ||
      read_back != 7L * kRepetitions * kIterations) {
    std::fprintf(stderr, "kernel_costs: the watch did not behave (dropped %d, %d of %d seen)\n",
                 drop_seen, touches_seen, kRepetitions * kIterations);
    return 1;
  }
  const struct {
    const char* name;
    Spread spread;
  } rows[] = {{"system call", spread_of(system_call)},
              {"mprotect", spread_of(protect)},
              {"write fault", spread_of(fault)},
              {"watch", spread_of(watch)}};
  if (csv) std::printf("operation,median_us,min_us,max_us\n");
  for (const auto& row : rows) {
    const Spread& s = row.spread;
    if (csv)
      std::printf("%s,%.3f,%.3f,%.3f\n", row.name, s.median, s.min, s.max);
    else
      std::printf("%-12s %8.3f us  (min-max %.3f-%.3f over %d)\n", row.name, s.median, s.min, s.max,
                  kRepetitions);
  }
  return 0;
}
