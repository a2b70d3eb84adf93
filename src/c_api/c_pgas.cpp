// The C API's PGAS face: symmetric allocations named by local addresses.
#include <cstddef>
#include <cstdint>

#include "c_boundary.hpp"

using mpidsm::c_api::create;
using mpidsm::c_api::guarded;
using mpidsm::c_api::require;
using mpidsm::c_api::take;

namespace {

mpidsm::Pgas& pgas_of(mpidsm_pgas_t pgas, const char* what) {
  return require(pgas, what).pgas;
}

// The bytes at `local` (this rank's copy) as they live on `rank`.
mpidsm::global_ptr<std::byte> remote(mpidsm::Pgas& pgas, const void* local, int rank) {
  return pgas.global(static_cast<const std::byte*>(local), rank);
}

mpidsm::global_ptr<std::uint64_t> remote_word(mpidsm::Pgas& pgas, const std::uint64_t* word,
                                              int rank) {
  return pgas.global(word, rank);
}

mpidsm::Compare compare_of(int cmp) {
  switch (cmp) {
    case MPIDSM_CMP_EQ:
      return mpidsm::Compare::eq;
    case MPIDSM_CMP_NE:
      return mpidsm::Compare::ne;
    case MPIDSM_CMP_GT:
      return mpidsm::Compare::gt;
    case MPIDSM_CMP_GE:
      return mpidsm::Compare::ge;
    case MPIDSM_CMP_LT:
      return mpidsm::Compare::lt;
    case MPIDSM_CMP_LE:
      return mpidsm::Compare::le;
  }
  throw mpidsm::Error(
      mpidsm::Errc::invalid_argument, mpidsm::no_rank,
      "mpidsm_wait_until_u64: cmp " + std::to_string(cmp) + " is not an mpidsm_cmp_t");
}

}  // namespace

extern "C" {

mpidsm_status_t mpidsm_pgas_create(mpidsm_runtime_t runtime, mpidsm_pgas_t* pgas) {
  return guarded([&] {
    create(require(pgas, "mpidsm_pgas_create: pgas"),
           [&] { return mpidsm::Pgas(require(runtime, "mpidsm_pgas_create: runtime").runtime); });
  });
}

mpidsm_status_t mpidsm_pgas_destroy(mpidsm_pgas_t* pgas) {
  return guarded([&] {
    take(require(pgas, "mpidsm_pgas_destroy: pgas"));  // collective, in ~Pgas
  });
}

mpidsm_status_t mpidsm_pgas_alloc(mpidsm_pgas_t pgas, size_t bytes, void** local) {
  return guarded([&] {
    auto& out = require(local, "mpidsm_pgas_alloc: local");
    out = nullptr;
    out = pgas_of(pgas, "mpidsm_pgas_alloc: pgas").allocate<std::byte>(bytes).local();
  });
}

mpidsm_status_t mpidsm_pgas_free(mpidsm_pgas_t pgas, void* local) {
  return guarded([&] {
    mpidsm::Pgas& p = pgas_of(pgas, "mpidsm_pgas_free: pgas");
    p.free_at(local);
  });
}

mpidsm_status_t mpidsm_put(mpidsm_pgas_t pgas, int rank, void* dest, const void* src,
                           size_t bytes) {
  return guarded([&] {
    mpidsm::Pgas& p = pgas_of(pgas, "mpidsm_put: pgas");
    p.put(remote(p, dest, rank), static_cast<const std::byte*>(src), bytes);
  });
}

mpidsm_status_t mpidsm_get(mpidsm_pgas_t pgas, void* dest, int rank, const void* src,
                           size_t bytes) {
  return guarded([&] {
    mpidsm::Pgas& p = pgas_of(pgas, "mpidsm_get: pgas");
    p.get(static_cast<std::byte*>(dest), remote(p, src, rank), bytes);
  });
}

mpidsm_status_t mpidsm_put_nbi(mpidsm_pgas_t pgas, int rank, void* dest, const void* src,
                               size_t bytes) {
  return guarded([&] {
    mpidsm::Pgas& p = pgas_of(pgas, "mpidsm_put_nbi: pgas");
    p.put_nbi(remote(p, dest, rank), static_cast<const std::byte*>(src), bytes);
  });
}

mpidsm_status_t mpidsm_get_nbi(mpidsm_pgas_t pgas, void* dest, int rank, const void* src,
                               size_t bytes) {
  return guarded([&] {
    mpidsm::Pgas& p = pgas_of(pgas, "mpidsm_get_nbi: pgas");
    p.get_nbi(static_cast<std::byte*>(dest), remote(p, src, rank), bytes);
  });
}

mpidsm_status_t mpidsm_put_signal(mpidsm_pgas_t pgas, int rank, void* dest, const void* src,
                                  size_t bytes, uint64_t* signal, uint64_t value, int op) {
  return guarded([&] {
    mpidsm::Pgas& p = pgas_of(pgas, "mpidsm_put_signal: pgas");
    if (op != MPIDSM_SIGNAL_SET && op != MPIDSM_SIGNAL_ADD)
      throw mpidsm::Error(mpidsm::Errc::invalid_argument, p.rank(),
                          "mpidsm_put_signal: op " + std::to_string(op) +
                              " is neither MPIDSM_SIGNAL_SET nor MPIDSM_SIGNAL_ADD");
    p.put_signal(remote(p, dest, rank), static_cast<const std::byte*>(src), bytes,
                 remote_word(p, signal, rank), value,
                 op == MPIDSM_SIGNAL_SET ? mpidsm::SignalOp::set : mpidsm::SignalOp::add);
  });
}

mpidsm_status_t mpidsm_fence(mpidsm_pgas_t pgas) {
  return guarded([&] { pgas_of(pgas, "mpidsm_fence: pgas").fence(); });
}

mpidsm_status_t mpidsm_quiet(mpidsm_pgas_t pgas) {
  return guarded([&] { pgas_of(pgas, "mpidsm_quiet: pgas").quiet(); });
}

mpidsm_status_t mpidsm_barrier(mpidsm_pgas_t pgas) {
  return guarded([&] { pgas_of(pgas, "mpidsm_barrier: pgas").barrier(); });
}

mpidsm_status_t mpidsm_atomic_fetch_u64(mpidsm_pgas_t pgas, int rank, uint64_t* word,
                                        uint64_t* value) {
  return guarded([&] {
    mpidsm::Pgas& p = pgas_of(pgas, "mpidsm_atomic_fetch_u64: pgas");
    require(value, "mpidsm_atomic_fetch_u64: value") = p.atomic_fetch(remote_word(p, word, rank));
  });
}

mpidsm_status_t mpidsm_atomic_set_u64(mpidsm_pgas_t pgas, int rank, uint64_t* word,
                                      uint64_t value) {
  return guarded([&] {
    mpidsm::Pgas& p = pgas_of(pgas, "mpidsm_atomic_set_u64: pgas");
    p.atomic_set(remote_word(p, word, rank), value);
  });
}

mpidsm_status_t mpidsm_atomic_swap_u64(mpidsm_pgas_t pgas, int rank, uint64_t* word, uint64_t value,
                                       uint64_t* old) {
  return guarded([&] {
    mpidsm::Pgas& p = pgas_of(pgas, "mpidsm_atomic_swap_u64: pgas");
    const std::uint64_t was = p.atomic_swap(remote_word(p, word, rank), value);
    if (old) *old = was;
  });
}

mpidsm_status_t mpidsm_atomic_compare_swap_u64(mpidsm_pgas_t pgas, int rank, uint64_t* word,
                                               uint64_t expected, uint64_t desired, uint64_t* old) {
  return guarded([&] {
    mpidsm::Pgas& p = pgas_of(pgas, "mpidsm_atomic_compare_swap_u64: pgas");
    const std::uint64_t was = p.atomic_compare_swap(remote_word(p, word, rank), expected, desired);
    if (old) *old = was;
  });
}

mpidsm_status_t mpidsm_atomic_fetch_add_u64(mpidsm_pgas_t pgas, int rank, uint64_t* word,
                                            uint64_t value, uint64_t* old) {
  return guarded([&] {
    mpidsm::Pgas& p = pgas_of(pgas, "mpidsm_atomic_fetch_add_u64: pgas");
    const std::uint64_t was = p.atomic_fetch_add(remote_word(p, word, rank), value);
    if (old) *old = was;
  });
}

mpidsm_status_t mpidsm_atomic_add_u64(mpidsm_pgas_t pgas, int rank, uint64_t* word,
                                      uint64_t value) {
  return guarded([&] {
    mpidsm::Pgas& p = pgas_of(pgas, "mpidsm_atomic_add_u64: pgas");
    p.atomic_add(remote_word(p, word, rank), value);
  });
}

mpidsm_status_t mpidsm_wait_until_u64(mpidsm_pgas_t pgas, uint64_t* word, int cmp, uint64_t value,
                                      uint64_t* seen) {
  return guarded([&] {
    mpidsm::Pgas& p = pgas_of(pgas, "mpidsm_wait_until_u64: pgas");
    const std::uint64_t got = p.wait_until<std::uint64_t>(word, compare_of(cmp), value);
    if (seen) *seen = got;
  });
}

}  // extern "C"
