// A detour resolves a fault on the faulting thread outside its signal
// handler, then resumes the faulting access with every register as it was.
#include "dsm/fault/fault_detour.hpp"

#include <gtest/gtest.h>
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <execinfo.h>
#include <ucontext.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <thread>
#include <vector>

#if defined(__x86_64__)

namespace mpidsm::detail {
namespace {

constexpr std::size_t kPage = 4096;

// What the resolver saw, for the test to check.
struct Observed {
  std::atomic<int> resolutions{0};
  pid_t thread = 0;
  bool segv_blocked = true;
  bool direction_flag = true;
  std::uint32_t mxcsr = 0;
  void* caller_state = nullptr;
  bool backtrace_reached_fault = false;
};

// The pages under test: PROT_NONE until the resolver makes one readable and
// writable and stores `fill` in its first word. Odd page numbers are refused.
struct Pages {
  std::byte* base = nullptr;
  std::size_t count = 0;
  std::uint64_t fill = 0;
  bool refuse_odd = false;
  Observed observed;
  std::atomic<int> detours_declined{0};
  std::atomic<int> passed_on{0};
  bool take_backtrace = false;
  void* faulting_instruction = nullptr;  // of the last fault, from the handler
};
Pages pages;
struct sigaction previous_action {};

std::uint32_t read_mxcsr() {
  std::uint32_t value = 0;
  asm volatile("stmxcsr %0" : "=m"(value));
  return value;
}

bool direction_flag_set() {
  std::uint64_t flags = 0;
  asm volatile("pushfq; popq %0" : "=r"(flags));
  return (flags & 0x400) != 0;
}

// Runs as ordinary code after the handler: records what it finds, then
// clobbers what a resolution may clobber (vector registers through memset
// and explicitly, errno, MXCSR).
FaultOutcome resolve_page(void* owner, void* address, FaultAccess, void* caller_state) noexcept {
  auto& p = *static_cast<Pages*>(owner);
  p.observed.direction_flag = direction_flag_set();
  p.observed.mxcsr = read_mxcsr();
  sigset_t mask;
  pthread_sigmask(SIG_BLOCK, nullptr, &mask);
  p.observed.segv_blocked = sigismember(&mask, SIGSEGV) == 1;
  p.observed.thread = gettid();
  p.observed.caller_state = caller_state;
  if (p.take_backtrace) {
    void* frames[64];
    const int depth = backtrace(frames, 64);
    for (int i = 0; i < depth; ++i)
      if (frames[i] == p.faulting_instruction) p.observed.backtrace_reached_fault = true;
  }
  const auto offset = static_cast<std::size_t>(static_cast<std::byte*>(address) - p.base);
  const std::size_t page = offset / kPage;
  p.observed.resolutions.fetch_add(1);
  if (p.refuse_odd && page % 2 == 1) return FaultOutcome::not_ours;
  std::byte* at = p.base + page * kPage;
  if (mprotect(at, kPage, PROT_READ | PROT_WRITE) != 0) return FaultOutcome::not_ours;
  std::memcpy(at, &p.fill, sizeof p.fill);
  static thread_local std::byte scratch[1 << 16];
  std::memset(scratch, 0x5a, sizeof scratch);
  asm volatile(
      "pxor %%xmm0, %%xmm0\n\tpxor %%xmm1, %%xmm1\n\tpxor %%xmm7, %%xmm7\n\t"
      "pxor %%xmm8, %%xmm8\n\tpxor %%xmm15, %%xmm15\n\t"
      "xor %%r8, %%r8\n\txor %%r9, %%r9\n\txor %%r10, %%r10\n\txor %%r11, %%r11" ::
          : "xmm0", "xmm1", "xmm7", "xmm8", "xmm15", "r8", "r9", "r10", "r11");
  const std::uint32_t flush_to_zero = 0x9fc0;
  asm volatile("ldmxcsr %0" ::"m"(flush_to_zero));
  errno = EIO;
  return FaultOutcome::resolved;
}

void on_segv(int signal, siginfo_t* info, void* context) {
  auto* at = static_cast<std::byte*>(info->si_addr);
  if (at < pages.base || at >= pages.base + pages.count * kPage) {
    sigaction(SIGSEGV, &previous_action, nullptr);  // a real crash: die of it
    (void)signal;
    return;
  }
  pages.faulting_instruction =
      reinterpret_cast<void*>(static_cast<ucontext_t*>(context)->uc_mcontext.gregs[REG_RIP]);
  if (detour_refused(at)) {
    pages.passed_on.fetch_add(1);
    mprotect(pages.base + (at - pages.base) / kPage * kPage, kPage, PROT_READ | PROT_WRITE);
    return;
  }
  if (!detour_fault(context, &resolve_page, &pages, at, FaultAccess::read, &pages.observed)) {
    pages.detours_declined.fetch_add(1);
    resolve_page(&pages, at, FaultAccess::read, nullptr);
  }
}

class FaultDetour : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fault_detours_supported()) GTEST_SKIP() << "no detours in this process (valgrind?)";
    pages.count = 64;
    void* mapped =
        mmap(nullptr, pages.count * kPage, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ASSERT_NE(mapped, MAP_FAILED);
    pages.base = static_cast<std::byte*>(mapped);
    pages.fill = 0x0123456789abcdefull;
    pages.refuse_odd = false;
    pages.take_backtrace = false;
    pages.observed.backtrace_reached_fault = false;
    pages.observed.resolutions = 0;
    pages.detours_declined = 0;
    pages.passed_on = 0;
    struct sigaction action {};
    action.sa_sigaction = on_segv;
    action.sa_flags = SA_SIGINFO;
    sigemptyset(&action.sa_mask);
    ASSERT_EQ(sigaction(SIGSEGV, &action, &previous_action), 0);
  }
  void TearDown() override {
    if (!pages.base) return;
    sigaction(SIGSEGV, &previous_action, nullptr);
    munmap(pages.base, pages.count * kPage);
    pages.base = nullptr;
  }
};

TEST_F(FaultDetour, ResolvesOnTheFaultingThreadOutsideItsSignalHandler) {
  errno = 4242;
  const std::uint64_t value = *reinterpret_cast<volatile std::uint64_t*>(pages.base + 3 * kPage);
  const int errno_after = errno;
  EXPECT_EQ(value, pages.fill);
  EXPECT_EQ(pages.observed.resolutions.load(), 1);
  EXPECT_EQ(pages.detours_declined.load(), 0);
  EXPECT_EQ(pages.observed.thread, gettid());
  EXPECT_FALSE(pages.observed.segv_blocked) << "the resolver ran with the handler's signal mask";
  EXPECT_EQ(pages.observed.caller_state, &pages.observed);
  EXPECT_EQ(errno_after, 4242) << "the resolver's errno leaked into the interrupted code";
}

// A debugger or backtrace() inside a resolution sees through the detour
// into the code that faulted (the return stub's unwind entry).
TEST_F(FaultDetour, ABacktraceFromTheResolverReachesTheFaultingInstruction) {
  pages.take_backtrace = true;
  EXPECT_EQ(*reinterpret_cast<volatile std::uint64_t*>(pages.base + 15 * kPage), pages.fill);
  EXPECT_EQ(pages.detours_declined.load(), 0);
  EXPECT_TRUE(pages.observed.backtrace_reached_fault);
}

// The faulting load sits between instructions that fill registers the
// resolver clobbers (general, vector, x87 and SSE control, the direction
// flag) and instructions that read them back.
TEST_F(FaultDetour, ResumesTheAccessWithEveryRegisterAsItWas) {
  alignas(16) std::uint8_t vectors_in[16][16];
  for (int r = 0; r < 16; ++r)
    for (int b = 0; b < 16; ++b) vectors_in[r][b] = static_cast<std::uint8_t>(r * 16 + b + 1);
  const std::uint64_t general_in[4] = {0x1111111111111111ull, 0x2222222222222222ull,
                                       0x3333333333333333ull, 0x4444444444444444ull};
  const std::uint32_t mxcsr_in = 0x7f80;  // round toward zero, exceptions masked
  const std::uint16_t x87_control_in = 0x0f7f;
  struct {
    alignas(16) std::uint8_t vectors[16][16];
    std::uint64_t general[4];
    std::uint64_t loaded;
    std::uint64_t flags;
    std::uint32_t mxcsr;
    std::uint16_t x87_control;
  } out{};
  std::uint32_t mxcsr_saved = 0;
  std::uint16_t x87_saved = 0;
  const std::byte* target = pages.base + 5 * kPage;
  asm volatile(
      "stmxcsr %[mxcsr_saved]\n\t"
      "fnstcw %[x87_saved]\n\t"
      "movdqu 0(%[in]), %%xmm0\n\tmovdqu 16(%[in]), %%xmm1\n\tmovdqu 32(%[in]), %%xmm2\n\t"
      "movdqu 48(%[in]), %%xmm3\n\tmovdqu 64(%[in]), %%xmm4\n\tmovdqu 80(%[in]), %%xmm5\n\t"
      "movdqu 96(%[in]), %%xmm6\n\tmovdqu 112(%[in]), %%xmm7\n\tmovdqu 128(%[in]), %%xmm8\n\t"
      "movdqu 144(%[in]), %%xmm9\n\tmovdqu 160(%[in]), %%xmm10\n\tmovdqu 176(%[in]), %%xmm11\n\t"
      "movdqu 192(%[in]), %%xmm12\n\tmovdqu 208(%[in]), %%xmm13\n\t"
      "movdqu 224(%[in]), %%xmm14\n\tmovdqu 240(%[in]), %%xmm15\n\t"
      "movq 0(%[general]), %%r8\n\tmovq 8(%[general]), %%r9\n\t"
      "movq 16(%[general]), %%r10\n\tmovq 24(%[general]), %%r11\n\t"
      "ldmxcsr %[mxcsr_in]\n\t"
      "fldcw %[x87_in]\n\t"
      "std\n\t"
      "movq (%[target]), %%rax\n\t"  // the fault
      "pushfq\n\tpopq %%rcx\n\t"
      "cld\n\t"
      "movq %%rax, 288(%[out])\n\t"
      "movq %%rcx, 296(%[out])\n\t"
      "stmxcsr 304(%[out])\n\t"
      "fnstcw 308(%[out])\n\t"
      "ldmxcsr %[mxcsr_saved]\n\t"
      "fldcw %[x87_saved]\n\t"
      "movdqu %%xmm0, 0(%[out])\n\tmovdqu %%xmm1, 16(%[out])\n\tmovdqu %%xmm2, 32(%[out])\n\t"
      "movdqu %%xmm3, 48(%[out])\n\tmovdqu %%xmm4, 64(%[out])\n\tmovdqu %%xmm5, 80(%[out])\n\t"
      "movdqu %%xmm6, 96(%[out])\n\tmovdqu %%xmm7, 112(%[out])\n\tmovdqu %%xmm8, 128(%[out])\n\t"
      "movdqu %%xmm9, 144(%[out])\n\tmovdqu %%xmm10, 160(%[out])\n\t"
      "movdqu %%xmm11, 176(%[out])\n\tmovdqu %%xmm12, 192(%[out])\n\t"
      "movdqu %%xmm13, 208(%[out])\n\tmovdqu %%xmm14, 224(%[out])\n\t"
      "movdqu %%xmm15, 240(%[out])\n\t"
      "movq %%r8, 256(%[out])\n\tmovq %%r9, 264(%[out])\n\t"
      "movq %%r10, 272(%[out])\n\tmovq %%r11, 280(%[out])\n\t"
      : [mxcsr_saved] "=m"(mxcsr_saved), [x87_saved] "=m"(x87_saved)
      : [in] "r"(vectors_in), [general] "r"(general_in), [mxcsr_in] "m"(mxcsr_in),
        [x87_in] "m"(x87_control_in), [target] "D"(target), [out] "S"(&out)
      : "rax", "rcx", "r8", "r9", "r10", "r11", "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5",
        "xmm6", "xmm7", "xmm8", "xmm9", "xmm10", "xmm11", "xmm12", "xmm13", "xmm14", "xmm15", "cc",
        "memory");
  static_assert(offsetof(decltype(out), general) == 256 && offsetof(decltype(out), loaded) == 288 &&
                offsetof(decltype(out), flags) == 296 && offsetof(decltype(out), mxcsr) == 304 &&
                offsetof(decltype(out), x87_control) == 308);
  ASSERT_EQ(pages.observed.resolutions.load(), 1);
  EXPECT_EQ(pages.detours_declined.load(), 0);
  EXPECT_FALSE(pages.observed.direction_flag) << "the resolver ran with the direction flag set";
  EXPECT_EQ(pages.observed.mxcsr, 0x1f80u) << "the resolver ran with the interrupted MXCSR";
  for (int r = 0; r < 16; ++r)
    EXPECT_EQ(std::memcmp(out.vectors[r], vectors_in[r], 16), 0) << "xmm" << r;
  for (int g = 0; g < 4; ++g) EXPECT_EQ(out.general[g], general_in[g]) << "r" << 8 + g;
  EXPECT_EQ(out.loaded, pages.fill);
  EXPECT_NE(out.flags & 0x400, 0u) << "the direction flag was not restored";
  EXPECT_EQ(out.mxcsr, mxcsr_in);
  EXPECT_EQ(out.x87_control, x87_control_in);
}

// The resolver's memset and memcpy use the widest registers the CPU has
// (glibc picks AVX2 or EVEX variants, which use ymm16-31): their full
// width comes back, not just the SSE part.
TEST_F(FaultDetour, ResumesWithTheWideVectorRegistersAsTheyWere) {
  if (!__builtin_cpu_supports("avx")) GTEST_SKIP() << "no AVX";
  alignas(32) std::uint8_t in[32];
  alignas(32) std::uint8_t out[32] = {};
  for (int b = 0; b < 32; ++b) in[b] = static_cast<std::uint8_t>(0xa0 + b);
  const std::byte* target = pages.base + 7 * kPage;
  asm volatile(
      "vmovdqu (%[in]), %%ymm3\n\t"
      "movq (%[target]), %%rax\n\t"  // the fault
      "vmovdqu %%ymm3, (%[out])\n\t"
      "vzeroupper"
      :
      : [in] "r"(in), [out] "r"(out), [target] "r"(target)
      : "rax", "xmm3", "memory");
  ASSERT_EQ(pages.observed.resolutions.load(), 1);
  EXPECT_EQ(std::memcmp(in, out, sizeof in), 0) << "ymm3";

  if (!__builtin_cpu_supports("avx512f")) return;
  alignas(64) std::uint8_t wide_in[64];
  alignas(64) std::uint8_t wide_out[64] = {};
  alignas(64) std::uint8_t kept[64];
  for (int b = 0; b < 64; ++b) wide_in[b] = static_cast<std::uint8_t>(0x30 + b);
  target = pages.base + 9 * kPage;
  // zmm20 is saved and restored around the test: not every compiler
  // accepts it in a clobber list without AVX-512 enabled.
  asm volatile(
      "vmovdqu64 %%zmm20, (%[kept])\n\t"
      "vmovdqu64 (%[in]), %%zmm20\n\t"
      "movq (%[target]), %%rax\n\t"  // the fault
      "vmovdqu64 %%zmm20, (%[out])\n\t"
      "vmovdqu64 (%[kept]), %%zmm20\n\t"
      "vzeroupper"
      :
      : [in] "r"(wide_in), [out] "r"(wide_out), [kept] "r"(kept), [target] "r"(target)
      : "rax", "memory");
  ASSERT_EQ(pages.observed.resolutions.load(), 2);
  EXPECT_EQ(std::memcmp(wide_in, wide_out, sizeof wide_in), 0) << "zmm20";
}

TEST_F(FaultDetour, ThreadsFaultingTogetherEachResolveTheirOwnPages) {
  constexpr int kThreads = 4;
  constexpr std::size_t kPerThread = 16;
  static_assert(kThreads * kPerThread <= 64);
  std::vector<int> wrong(kThreads, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      for (std::size_t i = 0; i < kPerThread; ++i) {
        const std::size_t page = static_cast<std::size_t>(t) * kPerThread + i;
        const auto value = *reinterpret_cast<volatile std::uint64_t*>(pages.base + page * kPage);
        wrong[t] += value != pages.fill;
      }
    });
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(pages.observed.resolutions.load(), kThreads * static_cast<int>(kPerThread));
  EXPECT_EQ(pages.detours_declined.load(), 0);
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(wrong[t], 0) << "thread " << t;
}

TEST_F(FaultDetour, AnAccessTheResolverRefusesIsPassedOnWhenItFaultsAgain) {
  pages.refuse_odd = true;
  const auto value = *reinterpret_cast<volatile std::uint64_t*>(pages.base + 1 * kPage);
  EXPECT_EQ(pages.observed.resolutions.load(), 1);
  EXPECT_EQ(pages.passed_on.load(), 1);
  EXPECT_EQ(value, 0u);  // the handler's stand-in for a crash maps a zero page
  // The refusal was used up: the next refused access takes a detour again.
  const auto again = *reinterpret_cast<volatile std::uint64_t*>(pages.base + 11 * kPage);
  EXPECT_EQ(again, 0u);
  EXPECT_EQ(pages.observed.resolutions.load(), 2);
  EXPECT_EQ(pages.passed_on.load(), 2);
}

// A fault on an alternate signal stack (in a handler that asked for one)
// is not detoured: that stack is usually too small for a resolution.
std::uint64_t read_on_alternate_stack = 0;
void on_usr1(int) {
  read_on_alternate_stack = *reinterpret_cast<volatile std::uint64_t*>(pages.base + 13 * kPage);
}

TEST_F(FaultDetour, IsDeclinedOnAnAlternateSignalStack) {
  std::vector<std::byte> stack(1 << 16);
  stack_t alternate{}, previous_stack{};
  alternate.ss_sp = stack.data();
  alternate.ss_size = stack.size();
  ASSERT_EQ(sigaltstack(&alternate, &previous_stack), 0);
  struct sigaction action {
  }, previous{};
  action.sa_handler = on_usr1;
  action.sa_flags = SA_ONSTACK;
  ASSERT_EQ(sigaction(SIGUSR1, &action, &previous), 0);
  ASSERT_EQ(pthread_kill(pthread_self(), SIGUSR1), 0);  // delivered before it returns
  sigaction(SIGUSR1, &previous, nullptr);
  sigaltstack(&previous_stack, nullptr);
  EXPECT_EQ(read_on_alternate_stack, pages.fill);
  EXPECT_EQ(pages.detours_declined.load(), 1);
}

}  // namespace
}  // namespace mpidsm::detail

#endif
