// mpidsm::kernel_facts on this machine: the timings are real (a write fault
// takes a signal and two mprotects, so it costs more than one), the read
// probe agrees with what a read of untouched memory did to this process's
// own page table, and the userfaultfd answers hang together.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <fstream>
#include <string>

#include "mpidsm/info.hpp"

namespace mpidsm {
namespace {

TEST(KernelFacts, TimingsArePositiveAndOrdered) {
  struct sigaction before {
  }, after{};
  ASSERT_EQ(sigaction(SIGSEGV, nullptr, &before), 0);
  const KernelFacts facts = kernel_facts();
  EXPECT_GT(facts.system_call_us, 0.0);
  EXPECT_GT(facts.mprotect_us, 0.0);
  EXPECT_GT(facts.write_fault_us, facts.mprotect_us);
  // The probe's own SIGSEGV handler is gone again.
  ASSERT_EQ(sigaction(SIGSEGV, nullptr, &after), 0);
  EXPECT_EQ(after.sa_sigaction, before.sa_sigaction);
  EXPECT_EQ(after.sa_flags, before.sa_flags);
}

TEST(KernelFacts, UntimedSkipsTheTimings) {
  const KernelFacts facts = kernel_facts(false);
  EXPECT_EQ(facts.system_call_us, 0.0);
  EXPECT_EQ(facts.write_fault_us, 0.0);
}

TEST(KernelFacts, UserfaultfdAnswersAgree) {
  const KernelFacts facts = kernel_facts(false);
  if (facts.userfaultfd) {
    EXPECT_TRUE(facts.userfaultfd_error.empty());
    EXPECT_NE(facts.userfaultfd_features, 0u);
  } else {
    EXPECT_FALSE(facts.userfaultfd_error.empty());
    EXPECT_FALSE(facts.write_protect);
    EXPECT_FALSE(facts.write_protect_async);
  }
  if (facts.write_protect_async) {
    EXPECT_TRUE(facts.write_protect);
  }
}

// RssAnon of this process, in KiB.
std::size_t anonymous_kib() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);)
    if (line.rfind("RssAnon:", 0) == 0) return std::stoull(line.substr(8));
  return 0;
}

TEST(KernelFacts, ReadProbeAgreesWithAReadOfUntouchedMemory) {
  const std::size_t page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE)), pages = 4096;
  void* mapped = mmap(nullptr, pages * page, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(mapped, MAP_FAILED);
  const std::size_t before = anonymous_kib();
  const volatile char* bytes = static_cast<const char*>(mapped);
  int sum = 0;
  for (std::size_t p = 0; p < pages; ++p) sum += bytes[p * page];
  const bool grew = anonymous_kib() > before + pages * page / 1024 / 2;
  munmap(mapped, pages * page);
  EXPECT_EQ(sum, 0);
  EXPECT_EQ(kernel_facts(false).read_allocates, grew);
}

}  // namespace
}  // namespace mpidsm
