// What the kernel charges and offers a page-fault DSM (mpidsm::kernel_facts):
// the costs benchmarks/kernel_costs measures at length, taken quickly, and
// the features the DSM's write tracking could use. Debian 12's headers (a
// 6.1 uapi) lack UFFD_FEATURE_WP_ASYNC and PAGEMAP_SCAN, so their values
// are declared here (include/uapi/linux/userfaultfd.h and fs.h of 6.7).
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>

#include "mpidsm/info.hpp"

namespace mpidsm {
namespace {

constexpr std::uint64_t kFeatureWpAsync = std::uint64_t{1} << 15;

// struct pm_scan_arg of Linux 6.7's fs.h, and its ioctl number.
struct PageScanArg {
  std::uint64_t size, flags, start, end, walk_end, vec, vec_len, max_pages;
  std::uint64_t category_inverted, category_mask, category_anyof_mask, return_mask;
};
constexpr unsigned long kPagemapScan = _IOWR('f', 16, PageScanArg);
constexpr std::uint64_t kPageIsPresent = 1 << 3;

constexpr int kRepetitions = 5;
constexpr int kCalls = 2000;

// Microseconds per call of `body`, the median of kRepetitions timings.
template <class Body>
double median_us(Body&& body) {
  std::array<double, kRepetitions> took{};
  for (double& t : took) {
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < kCalls; ++i) body(i);
    t = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start)
            .count() /
        kCalls;
  }
  std::sort(took.begin(), took.end());
  return took[kRepetitions / 2];
}

// The page the write-fault timing writes, for its handler.
char* g_fault_page = nullptr;
std::size_t g_fault_size = 0;

void make_writable(int, siginfo_t* info, void*) {
  auto* address = static_cast<char*>(info->si_addr);
  if (address < g_fault_page || address >= g_fault_page + g_fault_size ||
      mprotect(g_fault_page, g_fault_size, PROT_READ | PROT_WRITE) != 0)
    _exit(3);  // a fault this probe did not plan: leave rather than loop
}

// Fills in the three timings; a failing call leaves its figure at 0.
void time_costs(KernelFacts& facts, std::size_t page) {
  facts.system_call_us = median_us([](int) { syscall(SYS_getppid); });
  void* mapped = mmap(nullptr, page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (mapped == MAP_FAILED) return;
  auto* bytes = static_cast<char*>(mapped);
  bytes[0] = 1;
  bool failed = false;
  facts.mprotect_us = median_us([&](int i) {
    failed |= mprotect(mapped, page, i % 2 ? PROT_READ | PROT_WRITE : PROT_READ) != 0;
  });
  if (failed || mprotect(mapped, page, PROT_READ | PROT_WRITE) != 0) facts.mprotect_us = 0;
  struct sigaction action {
  }, previous{};
  action.sa_sigaction = make_writable;
  action.sa_flags = SA_SIGINFO;
  sigemptyset(&action.sa_mask);
  g_fault_page = bytes;
  g_fault_size = page;
  if (!failed && sigaction(SIGSEGV, &action, &previous) == 0) {
    volatile char* written = bytes;
    facts.write_fault_us = median_us([&](int i) {
      failed |= mprotect(mapped, page, PROT_READ) != 0;
      written[0] = static_cast<char>(i);  // faults; the handler makes it writable
    });
    sigaction(SIGSEGV, &previous, nullptr);
    if (failed) facts.write_fault_us = 0;
  }
  munmap(mapped, page);
}

// This process's RssAnon in bytes (0 when /proc does not say).
std::size_t anonymous_resident() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);)
    if (line.rfind("RssAnon:", 0) == 0) return std::stoull(line.substr(8)) * 1024;
  return 0;
}

// Reads one byte of each of 1,024 untouched pages: where the kernel maps
// its zero page, resident memory does not move; elsewhere it grows by 4 MiB.
bool read_allocates(std::size_t page) {
  constexpr std::size_t kPages = 1024;
  void* mapped = mmap(nullptr, kPages * page, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (mapped == MAP_FAILED) return false;
  const std::size_t before = anonymous_resident();
  const volatile char* bytes = static_cast<const char*>(mapped);
  unsigned sum = 0;
  for (std::size_t p = 0; p < kPages; ++p) sum += static_cast<unsigned char>(bytes[p * page]);
  const std::size_t after = anonymous_resident();
  munmap(mapped, kPages * page);
  return sum == 0 && after > before + kPages * page / 2;
}

void probe_userfaultfd(KernelFacts& facts) {
#ifdef UFFD_USER_MODE_ONLY
  const int flags = O_CLOEXEC | UFFD_USER_MODE_ONLY;
#else
  const int flags = O_CLOEXEC;
#endif
  const int fd = static_cast<int>(syscall(SYS_userfaultfd, flags));
  if (fd < 0) {
    const int error = errno;
    facts.userfaultfd_error =
        error == EPERM    ? "forbidden (vm.unprivileged_userfaultfd=0 and no CAP_SYS_PTRACE)"
        : error == ENOSYS ? "not built into this kernel"
                          : std::string(std::strerror(error));
    return;
  }
  uffdio_api api{};
  api.api = UFFD_API;
  if (ioctl(fd, UFFDIO_API, &api) == 0) {
    facts.userfaultfd = true;
    facts.userfaultfd_features = api.features;
    facts.write_protect = (api.features & UFFD_FEATURE_PAGEFAULT_FLAG_WP) != 0;
    facts.write_protect_async = (api.features & kFeatureWpAsync) != 0;
  } else {
    facts.userfaultfd_error = std::string("UFFDIO_API: ") + std::strerror(errno);
  }
  close(fd);
}

bool probe_pagemap_scan(std::size_t page) {
  const int pagemap = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
  if (pagemap < 0) return false;
  static char probe = 1;
  const auto at = reinterpret_cast<std::uintptr_t>(&probe) / page * page;
  std::uint64_t regions[2 * 4] = {};
  PageScanArg arg{};
  arg.size = sizeof arg;
  arg.start = at;
  arg.end = at + page;
  arg.vec = reinterpret_cast<std::uintptr_t>(regions);
  arg.vec_len = 4;
  arg.category_mask = kPageIsPresent;
  arg.return_mask = kPageIsPresent;
  const bool works = ioctl(pagemap, kPagemapScan, &arg) >= 0;
  close(pagemap);
  return works;
}

}  // namespace

KernelFacts kernel_facts(bool timed) {
  KernelFacts facts;
  const auto page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  if (timed) time_costs(facts, page);
  facts.read_allocates = read_allocates(page);
  probe_userfaultfd(facts);
  facts.pagemap_scan = probe_pagemap_scan(page);
  return facts;
}

}  // namespace mpidsm
