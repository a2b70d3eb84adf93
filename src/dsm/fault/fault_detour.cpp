#include "fault_detour.hpp"

#include <signal.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>

namespace mpidsm::detail {
namespace {

// Initial-exec TLS: read in the signal handler.
thread_local const void* refused_address __attribute__((tls_model("initial-exec"))) = nullptr;

}  // namespace

bool detour_refused(const void* address) {
  if (address == nullptr || refused_address != address) return false;
  refused_address = nullptr;
  return true;
}

#if defined(__x86_64__) && defined(__linux__)

namespace {

// What the resolver needs, on the detour's stack.
struct DetourRequest {
  DetourResolver resolve;
  void* owner;
  void* address;
  FaultAccess access;
  void* caller_state;
};

// The kernel's struct ucontext: glibc's ucontext_t up to its signal mask,
// which in the kernel's is 8 bytes (glibc reserves 128).
constexpr std::size_t kKernelUcontextSize = offsetof(ucontext_t, uc_sigmask) + 8;
// Room for the siginfo that follows it in the kernel's rt_sigframe:
// rt_sigreturn checks that the whole frame is addressable.
constexpr std::size_t kSiginfoSize = 128;
// fxsave's software-reserved bytes (at 464) describe the extended state the
// kernel saved: FP_XSTATE_MAGIC1, then the size of everything, including
// the closing FP_XSTATE_MAGIC2.
constexpr std::size_t kSoftwareBytes = 464;
constexpr std::uint32_t kXstateMagic1 = 0x46505853;
constexpr std::size_t kLegacyFpStateSize = 512;
// XRSTOR needs 64-byte alignment.
constexpr std::uintptr_t kFpStateAlignment = 64;
// The detour is laid out this far below the handler's own frame: what still
// runs on the way out of the handler (returns, a sanitizer's wrapper) stays
// above it.
constexpr std::uintptr_t kHandlerMargin = 16384;
constexpr greg_t kDirectionFlag = 0x400;

// Copies with one instruction: the target lies below the stack pointer,
// where a sanitizer's shadow may still describe older frames, and where a
// call to memcpy would run its own frame.
void copy_bytes(std::uintptr_t to, const void* from, std::size_t size) {
  void* destination = reinterpret_cast<void*>(to);
  asm volatile("rep movsb" : "+D"(destination), "+S"(from), "+c"(size) : : "memory");
}

std::size_t fp_state_size(const _libc_fpstate* state) {
  std::uint32_t magic = 0;
  std::uint32_t extended_size = 0;
  const auto* bytes = reinterpret_cast<const unsigned char*>(state);
  std::memcpy(&magic, bytes + kSoftwareBytes, sizeof magic);
  std::memcpy(&extended_size, bytes + kSoftwareBytes + sizeof magic, sizeof extended_size);
  return magic == kXstateMagic1 ? extended_size : kLegacyFpStateSize;
}

// The frame records the thread's alternate stack, not whether the
// interrupted code ran on it: that is where its stack pointer was.
bool on_alternate_stack(const ucontext_t& interrupted) {
  const stack_t& alternate = interrupted.uc_stack;
  if ((alternate.ss_flags & SS_DISABLE) != 0 || alternate.ss_size == 0) return false;
  const auto sp = static_cast<std::uintptr_t>(interrupted.uc_mcontext.gregs[REG_RSP]);
  return sp - reinterpret_cast<std::uintptr_t>(alternate.ss_sp) < alternate.ss_size;
}

}  // namespace

// Runs as ordinary code of the faulting thread, entered as if called from
// the stub below (its return address), on the stack under the saved context.
extern "C" __attribute__((visibility("hidden"))) void mpidsm_detour_entry(
    const DetourRequest* request) noexcept {
  const int saved_errno = errno;  // the interrupted code's: registers alone are restored
  if (request->resolve(request->owner, request->address, request->access, request->caller_state) ==
      FaultOutcome::not_ours)
    refused_address = request->address;
  errno = saved_errno;
}

// The resolver's return address. The stack pointer is then the saved
// ucontext, 8 bytes above the "frame", which is where rt_sigreturn reads it.
// Its unwind entry describes that ucontext as a signal frame (DWARF
// expressions: each register at the stack pointer plus its offset), so a
// debugger's backtrace from inside a resolution goes on into the code that
// faulted. It covers the nop before the label, where unwinders look up a
// return address.
extern "C" void mpidsm_detour_return();
asm(R"(
  .pushsection .text
  .p2align 4
  .hidden mpidsm_detour_return
  .type mpidsm_detour_return, @function
  .cfi_startproc
  .cfi_signal_frame
  .cfi_escape 0x0f, 4, 0x77, 0xa0, 0x01, 0x06  /* CFA: the saved rsp */
  .cfi_escape 0x10, 0, 3, 0x77, 0x90, 0x01  /* rax at ucontext gregs[13] */
  .cfi_escape 0x10, 1, 3, 0x77, 0x88, 0x01  /* rdx at ucontext gregs[12] */
  .cfi_escape 0x10, 2, 3, 0x77, 0x98, 0x01  /* rcx at ucontext gregs[14] */
  .cfi_escape 0x10, 3, 3, 0x77, 0x80, 0x01  /* rbx at ucontext gregs[11] */
  .cfi_escape 0x10, 4, 3, 0x77, 0xf0, 0x00  /* rsi at ucontext gregs[9] */
  .cfi_escape 0x10, 5, 3, 0x77, 0xe8, 0x00  /* rdi at ucontext gregs[8] */
  .cfi_escape 0x10, 6, 3, 0x77, 0xf8, 0x00  /* rbp at ucontext gregs[10] */
  .cfi_escape 0x10, 8, 2, 0x77, 0x28  /* r8 at ucontext gregs[0] */
  .cfi_escape 0x10, 9, 2, 0x77, 0x30  /* r9 at ucontext gregs[1] */
  .cfi_escape 0x10, 10, 2, 0x77, 0x38  /* r10 at ucontext gregs[2] */
  .cfi_escape 0x10, 11, 3, 0x77, 0xc0, 0x00  /* r11 at ucontext gregs[3] */
  .cfi_escape 0x10, 12, 3, 0x77, 0xc8, 0x00  /* r12 at ucontext gregs[4] */
  .cfi_escape 0x10, 13, 3, 0x77, 0xd0, 0x00  /* r13 at ucontext gregs[5] */
  .cfi_escape 0x10, 14, 3, 0x77, 0xd8, 0x00  /* r14 at ucontext gregs[6] */
  .cfi_escape 0x10, 15, 3, 0x77, 0xe0, 0x00  /* r15 at ucontext gregs[7] */
  .cfi_escape 0x10, 16, 3, 0x77, 0xa8, 0x01  /* rip at ucontext gregs[16] */
  nop
mpidsm_detour_return:
  movl $15, %eax
  syscall
  ud2
  .cfi_endproc
  .size mpidsm_detour_return, .-mpidsm_detour_return
  .popsection
)");
static_assert(SYS_rt_sigreturn == 15);
static_assert(offsetof(ucontext_t, uc_mcontext.gregs) == 40 && REG_R8 == 0 && REG_R15 == 7 &&
                  REG_RDI == 8 && REG_RSI == 9 && REG_RBP == 10 && REG_RBX == 11 && REG_RDX == 12 &&
                  REG_RAX == 13 && REG_RCX == 14 && REG_RSP == 15 && REG_RIP == 16,
              "the unwind entry of mpidsm_detour_return hard-codes these offsets");

bool fault_detours_supported() {
  // Valgrind builds signal frames of its own, which its rt_sigreturn expects.
  if (const char* preload = std::getenv("LD_PRELOAD"); preload && std::strstr(preload, "vgpreload"))
    return false;
  // ARCH_SHSTK_STATUS: with a shadow stack, rt_sigreturn pops a token that
  // only the kernel's own signal delivery pushed.
  constexpr int kArchShadowStackStatus = 0x5005;
  unsigned long long features = 0;
  if (syscall(SYS_arch_prctl, kArchShadowStackStatus, &features) == 0 && (features & 1) != 0)
    return false;
  return true;
}

bool detour_fault(void* context, DetourResolver resolve, void* owner, void* address,
                  FaultAccess access, void* caller_state) {
  auto* interrupted = static_cast<ucontext_t*>(context);
  _libc_fpstate* fp_state = interrupted->uc_mcontext.fpregs;
  if (on_alternate_stack(*interrupted) || fp_state == nullptr) return false;
  const std::size_t fp_size = fp_state_size(fp_state);

  // From the top: the saved vector state, the request, then a copy of the
  // kernel's frame (return address, ucontext, siginfo) as rt_sigreturn reads it.
  const auto top = reinterpret_cast<std::uintptr_t>(__builtin_frame_address(0)) - kHandlerMargin;
  const std::uintptr_t saved_fp_state = (top - fp_size) & ~(kFpStateAlignment - 1);
  const std::uintptr_t request = (saved_fp_state - sizeof(DetourRequest)) & ~std::uintptr_t{15};
  const std::uintptr_t saved_context =
      (request - kSiginfoSize - kKernelUcontextSize) & ~std::uintptr_t{15};
  const std::uintptr_t return_address =
      saved_context - 8;  // 16-byte aligned plus 8: as after a call

  copy_bytes(saved_fp_state, fp_state, fp_size);
  copy_bytes(saved_context, interrupted, kKernelUcontextSize);
  const auto* fp_pointer = reinterpret_cast<const _libc_fpstate*>(saved_fp_state);
  copy_bytes(saved_context + offsetof(ucontext_t, uc_mcontext.fpregs), &fp_pointer,
             sizeof fp_pointer);
  const auto stub = reinterpret_cast<std::uintptr_t>(&mpidsm_detour_return);
  copy_bytes(return_address, &stub, sizeof stub);
  const DetourRequest arguments{resolve, owner, address, access, caller_state};
  copy_bytes(request, &arguments, sizeof arguments);

  // Leaving the handler enters the resolver, with what the ABI promises a
  // called function: the direction flag clear, default x87 and SSE control.
  greg_t* registers = interrupted->uc_mcontext.gregs;
  registers[REG_RIP] = reinterpret_cast<greg_t>(&mpidsm_detour_entry);
  registers[REG_RSP] = static_cast<greg_t>(return_address);
  registers[REG_RDI] = static_cast<greg_t>(request);
  registers[REG_EFL] &= ~kDirectionFlag;
  fp_state->cwd = 0x037f;
  fp_state->swd = 0;
  fp_state->ftw = 0;
  fp_state->mxcsr = 0x1f80;
  return true;
}

#else

bool fault_detours_supported() {
  return false;
}

bool detour_fault(void*, DetourResolver, void*, void*, FaultAccess, void*) {
  return false;
}

#endif

}  // namespace mpidsm::detail
