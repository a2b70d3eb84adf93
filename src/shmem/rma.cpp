// One-sided puts and gets of every standard type and size, with and without
// a context: each names its target by the symmetric address of this PE's
// copy and goes through the PGAS face, whose completion rules are
// OpenSHMEM's (docs/pgas.md).
#include <cstdint>
#include <string>

#include "library.hpp"

namespace mpidsm::shmem {
namespace {

// shmem_put128's element.
struct Bits128 {
  std::uint64_t word[2];
};
using Byte = unsigned char;  // shmem_putmem's element

SignalOp signal_op_of(int sig_op, const char* function) {
  if (sig_op == SHMEM_SIGNAL_SET) return SignalOp::set;
  if (sig_op == SHMEM_SIGNAL_ADD) return SignalOp::add;
  throw Error(Errc::invalid_argument, no_rank,
              std::string(function) + ": signal operation " + std::to_string(sig_op) +
                  " is neither SHMEM_SIGNAL_SET nor SHMEM_SIGNAL_ADD");
}

// Contiguous transfers name the remote object by this PE's copy, as the PGAS
// face's put_to and get_from do: one lookup per call.
template <class T>
void transfer(const char* f, bool is_put, bool nbi, shmem_ctx_t ctx, void* dest, const void* source,
              std::size_t n, int pe) noexcept {
  guarded(f, [&] {
    Pgas& p = pgas(f);
    if (n == 0) return;  // a no-op whatever the addresses, as in every OpenSHMEM
    const std::size_t bytes = array_bytes(n, sizeof(T), p.rank(), f);
    if (is_put)
      p.put_to(dest, source, bytes, world_pe(ctx, pe, f), nbi);
    else
      p.get_from(dest, source, bytes, world_pe(ctx, pe, f), nbi);
  });
}
// OpenSHMEM's strides count elements, as the PGAS face's do; one element per block.
template <class T>
void strided(const char* f, bool is_put, shmem_ctx_t ctx, void* dest, const void* source,
             std::ptrdiff_t dst, std::ptrdiff_t sst, std::size_t n, int pe) noexcept {
  guarded(f, [&] {
    Pgas& p = pgas(f);
    if (n == 0) return;  // a no-op whatever the addresses
    const int rank = world_pe(ctx, pe, f);
    if (is_put)
      p.iput(p.global(static_cast<T*>(dest), rank), static_cast<const T*>(source), dst, sst, 1, n);
    else
      p.iget(static_cast<T*>(dest), p.global(static_cast<const T*>(source), rank), dst, sst, 1, n);
  });
}
template <class T>
void put_signal(const char* f, bool nbi, shmem_ctx_t ctx, void* dest, const void* source,
                std::size_t n, std::uint64_t* sig_addr, std::uint64_t signal, int sig_op,
                int pe) noexcept {
  guarded(f, [&] {
    Pgas& p = pgas(f);
    const int rank = world_pe(ctx, pe, f);
    const SignalOp op = signal_op_of(sig_op, f);
    auto to = p.global(static_cast<T*>(dest), rank);
    auto flag = p.global(sig_addr, rank);
    if (nbi)
      p.put_signal_nbi(to, static_cast<const T*>(source), n, flag, signal, op);
    else
      p.put_signal(to, static_cast<const T*>(source), n, flag, signal, op);
  });
}
template <class T>
void put_value(const char* f, shmem_ctx_t ctx, T* dest, T value, int pe) noexcept {
  transfer<T>(f, true, false, ctx, dest, &value, 1, pe);
}
template <class T>
T get_value(const char* f, shmem_ctx_t ctx, const T* source, int pe) noexcept {
  T value{};
  transfer<T>(f, false, false, ctx, &value, source, 1, pe);
  return value;
}

}  // namespace
}  // namespace mpidsm::shmem

using namespace mpidsm::shmem;

// The routines of one element type, with and without a context.
#define MPIDSM_SHMEM_BOTH(RET, NAME, PARAMS, CALL)                     \
  RET shmem_##NAME PARAMS {                                            \
    return CALL(SHMEM_CTX_DEFAULT, "shmem_" #NAME);                    \
  }                                                                    \
  RET shmem_ctx_##NAME(shmem_ctx_t ctx, MPIDSM_SHMEM_UNPAREN PARAMS) { \
    return CALL(ctx, "shmem_ctx_" #NAME);                              \
  }
#define MPIDSM_SHMEM_UNPAREN(...) __VA_ARGS__

#define MPIDSM_SHMEM_DEFINE_TRANSFERS(ELEMENT, PTR, NAME, PUT, GET)                                \
  MPIDSM_SHMEM_BOTH(void, NAME##PUT, (PTR * dest, const PTR* source, size_t nelems, int pe),       \
                    [&](shmem_ctx_t c, const char* f) {                                            \
                      transfer<ELEMENT>(f, true, false, c, dest, source, nelems, pe);              \
                    })                                                                             \
  MPIDSM_SHMEM_BOTH(void, NAME##GET, (PTR * dest, const PTR* source, size_t nelems, int pe),       \
                    [&](shmem_ctx_t c, const char* f) {                                            \
                      transfer<ELEMENT>(f, false, false, c, dest, source, nelems, pe);             \
                    })                                                                             \
  MPIDSM_SHMEM_BOTH(void, NAME##PUT##_nbi, (PTR * dest, const PTR* source, size_t nelems, int pe), \
                    [&](shmem_ctx_t c, const char* f) {                                            \
                      transfer<ELEMENT>(f, true, true, c, dest, source, nelems, pe);               \
                    })                                                                             \
  MPIDSM_SHMEM_BOTH(void, NAME##GET##_nbi, (PTR * dest, const PTR* source, size_t nelems, int pe), \
                    [&](shmem_ctx_t c, const char* f) {                                            \
                      transfer<ELEMENT>(f, false, true, c, dest, source, nelems, pe);              \
                    })                                                                             \
  MPIDSM_SHMEM_BOTH(void, NAME##PUT##_signal,                                                      \
                    (PTR * dest, const PTR* source, size_t nelems, uint64_t* sig_addr,             \
                     uint64_t signal, int sig_op, int pe),                                         \
                    [&](shmem_ctx_t c, const char* f) {                                            \
                      put_signal<ELEMENT>(f, false, c, dest, source, nelems, sig_addr, signal,     \
                                          sig_op, pe);                                             \
                    })                                                                             \
  MPIDSM_SHMEM_BOTH(void, NAME##PUT##_signal_nbi,                                                  \
                    (PTR * dest, const PTR* source, size_t nelems, uint64_t* sig_addr,             \
                     uint64_t signal, int sig_op, int pe),                                         \
                    [&](shmem_ctx_t c, const char* f) {                                            \
                      put_signal<ELEMENT>(f, true, c, dest, source, nelems, sig_addr, signal,      \
                                          sig_op, pe);                                             \
                    })
#define MPIDSM_SHMEM_DEFINE_STRIDED(ELEMENT, PTR, NAME, IPUT, IGET)                         \
  MPIDSM_SHMEM_BOTH(                                                                        \
      void, NAME##IPUT,                                                                     \
      (PTR * dest, const PTR* source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems, int pe), \
      [&](shmem_ctx_t c, const char* f) {                                                   \
        strided<ELEMENT>(f, true, c, dest, source, dst, sst, nelems, pe);                   \
      })                                                                                    \
  MPIDSM_SHMEM_BOTH(                                                                        \
      void, NAME##IGET,                                                                     \
      (PTR * dest, const PTR* source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems, int pe), \
      [&](shmem_ctx_t c, const char* f) {                                                   \
        strided<ELEMENT>(f, false, c, dest, source, dst, sst, nelems, pe);                  \
      })
#define MPIDSM_SHMEM_DEFINE_TYPED(TYPE, NAME)                                                      \
  MPIDSM_SHMEM_DEFINE_TRANSFERS(TYPE, TYPE, NAME, _put, _get)                                      \
  MPIDSM_SHMEM_DEFINE_STRIDED(TYPE, TYPE, NAME, _iput, _iget)                                      \
  MPIDSM_SHMEM_BOTH(void, NAME##_p, (TYPE * dest, TYPE value, int pe),                             \
                    [&](shmem_ctx_t c, const char* f) { put_value<TYPE>(f, c, dest, value, pe); }) \
  MPIDSM_SHMEM_BOTH(                                                                               \
      TYPE, NAME##_g, (const TYPE* source, int pe),                                                \
      [&](shmem_ctx_t c, const char* f) { return get_value<TYPE>(f, c, source, pe); })
#define MPIDSM_SHMEM_DEFINE_SIZED(SIZE, ELEMENT)                       \
  MPIDSM_SHMEM_DEFINE_TRANSFERS(ELEMENT, void, , put##SIZE, get##SIZE) \
  MPIDSM_SHMEM_DEFINE_STRIDED(ELEMENT, void, , iput##SIZE, iget##SIZE)

extern "C" {
MPIDSM_SHMEM_RMA_TYPES(MPIDSM_SHMEM_DEFINE_TYPED)
MPIDSM_SHMEM_SIZES(MPIDSM_SHMEM_DEFINE_SIZED)
MPIDSM_SHMEM_DEFINE_SIZED(128, Bits128)
MPIDSM_SHMEM_DEFINE_TRANSFERS(Byte, void, , putmem, getmem)
}  // extern "C"
