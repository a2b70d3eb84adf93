// The C API's PGAS face: symmetric allocations named by local addresses.
#include <cstddef>
#include <cstdint>
#include <string>

#include "c_boundary.hpp"

using mpidsm::c_api::create;
using mpidsm::c_api::free_request;
using mpidsm::c_api::guarded;
using mpidsm::c_api::pgas_of;
using mpidsm::c_api::require;
using mpidsm::c_api::start;
using mpidsm::c_api::take;
using mpidsm::c_api::with_element_type;

namespace {

// The bytes at `local` (this rank's copy) as they live on `rank`.
mpidsm::global_ptr<std::byte> remote(mpidsm::Pgas& pgas, const void* local, int rank) {
  return pgas.global(static_cast<const std::byte*>(local), rank);
}

}  // namespace

extern "C" {

mpidsm_status_t mpidsm_pgas_create(mpidsm_runtime_t runtime, mpidsm_pgas_t* pgas) {
  return guarded("mpidsm_pgas_create", [&] {
    create(require(pgas, "mpidsm_pgas_create: pgas"),
           [&] { return mpidsm::Pgas(require(runtime, "mpidsm_pgas_create: runtime").runtime); });
  });
}

mpidsm_status_t mpidsm_pgas_destroy(mpidsm_pgas_t* pgas) {
  return guarded("mpidsm_pgas_destroy", [&] {
    take(require(pgas, "mpidsm_pgas_destroy: pgas"));  // collective, in ~Pgas
  });
}

mpidsm_status_t mpidsm_pgas_alloc(mpidsm_pgas_t pgas, size_t bytes, void** local) {
  return guarded("mpidsm_pgas_alloc", [&] {
    auto& out = require(local, "mpidsm_pgas_alloc: local");
    out = nullptr;
    out = pgas_of(pgas, "mpidsm_pgas_alloc: pgas").allocate<std::byte>(bytes).local();
  });
}

mpidsm_status_t mpidsm_pgas_alloc_zeroed(mpidsm_pgas_t pgas, size_t bytes, void** local) {
  return guarded("mpidsm_pgas_alloc_zeroed", [&] {
    auto& out = require(local, "mpidsm_pgas_alloc_zeroed: local");
    out = nullptr;
    out = pgas_of(pgas, "mpidsm_pgas_alloc_zeroed: pgas").allocate_zeroed<std::byte>(bytes).local();
  });
}

mpidsm_status_t mpidsm_pgas_local_pointer(mpidsm_pgas_t pgas, const void* dest, int rank,
                                          void** pointer) {
  return guarded("mpidsm_pgas_local_pointer", [&] {
    auto& out = require(pointer, "mpidsm_pgas_local_pointer: pointer");
    out = nullptr;
    mpidsm::Pgas& p = pgas_of(pgas, "mpidsm_pgas_local_pointer: pgas");
    out = p.local_pointer(remote(p, dest, rank));
  });
}

mpidsm_status_t mpidsm_pgas_free(mpidsm_pgas_t pgas, void* local) {
  return guarded("mpidsm_pgas_free", [&] {
    mpidsm::Pgas& p = pgas_of(pgas, "mpidsm_pgas_free: pgas");
    p.free_at(local);
  });
}

mpidsm_status_t mpidsm_pgas_put(mpidsm_pgas_t pgas, void* dest, const void* src, size_t bytes,
                                int rank) {
  return guarded("mpidsm_pgas_put", [&] {
    mpidsm::Pgas& p = pgas_of(pgas, "mpidsm_pgas_put: pgas");
    p.put(remote(p, dest, rank), static_cast<const std::byte*>(src), bytes);
  });
}

mpidsm_status_t mpidsm_pgas_get(mpidsm_pgas_t pgas, void* dest, const void* src, size_t bytes,
                                int rank) {
  return guarded("mpidsm_pgas_get", [&] {
    mpidsm::Pgas& p = pgas_of(pgas, "mpidsm_pgas_get: pgas");
    p.get(static_cast<std::byte*>(dest), remote(p, src, rank), bytes);
  });
}

mpidsm_status_t mpidsm_pgas_put_nbi(mpidsm_pgas_t pgas, void* dest, const void* src, size_t bytes,
                                    int rank) {
  return guarded("mpidsm_pgas_put_nbi", [&] {
    mpidsm::Pgas& p = pgas_of(pgas, "mpidsm_pgas_put_nbi: pgas");
    p.put_nbi(remote(p, dest, rank), static_cast<const std::byte*>(src), bytes);
  });
}

mpidsm_status_t mpidsm_pgas_get_nbi(mpidsm_pgas_t pgas, void* dest, const void* src, size_t bytes,
                                    int rank) {
  return guarded("mpidsm_pgas_get_nbi", [&] {
    mpidsm::Pgas& p = pgas_of(pgas, "mpidsm_pgas_get_nbi: pgas");
    p.get_nbi(static_cast<std::byte*>(dest), remote(p, src, rank), bytes);
  });
}

mpidsm_status_t mpidsm_pgas_put_nb(mpidsm_pgas_t pgas, void* dest, const void* src, size_t bytes,
                                   int rank, mpidsm_request_t* request) {
  return guarded("mpidsm_pgas_put_nb", [&] {
    mpidsm_request_t& r = free_request(request, "mpidsm_pgas_put_nb: request");
    mpidsm::Pgas& p = pgas_of(pgas, "mpidsm_pgas_put_nb: pgas");
    start(r, p.put_nb(remote(p, dest, rank), static_cast<const std::byte*>(src), bytes));
  });
}

mpidsm_status_t mpidsm_pgas_get_nb(mpidsm_pgas_t pgas, void* dest, const void* src, size_t bytes,
                                   int rank, mpidsm_request_t* request) {
  return guarded("mpidsm_pgas_get_nb", [&] {
    mpidsm_request_t& r = free_request(request, "mpidsm_pgas_get_nb: request");
    mpidsm::Pgas& p = pgas_of(pgas, "mpidsm_pgas_get_nb: pgas");
    start(r, p.get_nb(static_cast<std::byte*>(dest), remote(p, src, rank), bytes));
  });
}

mpidsm_status_t mpidsm_pgas_iput(mpidsm_pgas_t pgas, void* dest, const void* src,
                                 ptrdiff_t dest_stride, ptrdiff_t src_stride, size_t element_bytes,
                                 size_t block, size_t blocks, int rank) {
  return guarded("mpidsm_pgas_iput", [&] {
    mpidsm::Pgas& p = pgas_of(pgas, "mpidsm_pgas_iput: pgas");
    with_element_type(element_bytes, "mpidsm_pgas_iput", [&](auto element) {
      using T = decltype(element);
      p.iput(p.global(static_cast<const T*>(dest), rank), static_cast<const T*>(src), dest_stride,
             src_stride, block, blocks);
    });
  });
}

mpidsm_status_t mpidsm_pgas_iget(mpidsm_pgas_t pgas, void* dest, const void* src,
                                 ptrdiff_t dest_stride, ptrdiff_t src_stride, size_t element_bytes,
                                 size_t block, size_t blocks, int rank) {
  return guarded("mpidsm_pgas_iget", [&] {
    mpidsm::Pgas& p = pgas_of(pgas, "mpidsm_pgas_iget: pgas");
    with_element_type(element_bytes, "mpidsm_pgas_iget", [&](auto element) {
      using T = decltype(element);
      p.iget(static_cast<T*>(dest), p.global(static_cast<const T*>(src), rank), dest_stride,
             src_stride, block, blocks);
    });
  });
}

namespace {

mpidsm_status_t put_signal(const char* function, mpidsm_pgas_t pgas, void* dest, const void* src,
                           size_t bytes, uint64_t* signal, uint64_t value, int op, int rank,
                           bool nbi) {
  return guarded(function, [&] {
    mpidsm::Pgas& p = require(pgas, function, "pgas").pgas;
    if (op != MPIDSM_SIGNAL_SET && op != MPIDSM_SIGNAL_ADD)
      throw mpidsm::Error(mpidsm::Errc::invalid_argument, p.rank(),
                          std::string(function) + ": op " + std::to_string(op) +
                              " is neither MPIDSM_SIGNAL_SET nor MPIDSM_SIGNAL_ADD");
    const auto signal_op = op == MPIDSM_SIGNAL_SET ? mpidsm::SignalOp::set : mpidsm::SignalOp::add;
    const auto* bytes_in = static_cast<const std::byte*>(src);
    if (nbi)
      p.put_signal_nbi(remote(p, dest, rank), bytes_in, bytes, p.global(signal, rank), value,
                       signal_op);
    else
      p.put_signal(remote(p, dest, rank), bytes_in, bytes, p.global(signal, rank), value,
                   signal_op);
  });
}

}  // namespace

mpidsm_status_t mpidsm_pgas_put_signal(mpidsm_pgas_t pgas, void* dest, const void* src,
                                       size_t bytes, uint64_t* signal, uint64_t value, int op,
                                       int rank) {
  return put_signal("mpidsm_pgas_put_signal", pgas, dest, src, bytes, signal, value, op, rank,
                    false);
}

mpidsm_status_t mpidsm_pgas_put_signal_nbi(mpidsm_pgas_t pgas, void* dest, const void* src,
                                           size_t bytes, uint64_t* signal, uint64_t value, int op,
                                           int rank) {
  return put_signal("mpidsm_pgas_put_signal_nbi", pgas, dest, src, bytes, signal, value, op, rank,
                    true);
}

mpidsm_status_t mpidsm_pgas_signal_fetch(mpidsm_pgas_t pgas, const uint64_t* signal,
                                         uint64_t* value) {
  return guarded("mpidsm_pgas_signal_fetch", [&] {
    mpidsm::Pgas& p = pgas_of(pgas, "mpidsm_pgas_signal_fetch: pgas");
    require(value, "mpidsm_pgas_signal_fetch: value") = p.signal_fetch(signal);
  });
}

mpidsm_status_t mpidsm_pgas_fence(mpidsm_pgas_t pgas) {
  return guarded("mpidsm_pgas_fence", [&] { pgas_of(pgas, "mpidsm_pgas_fence: pgas").fence(); });
}

mpidsm_status_t mpidsm_pgas_quiet(mpidsm_pgas_t pgas) {
  return guarded("mpidsm_pgas_quiet", [&] { pgas_of(pgas, "mpidsm_pgas_quiet: pgas").quiet(); });
}

mpidsm_status_t mpidsm_pgas_barrier(mpidsm_pgas_t pgas) {
  return guarded("mpidsm_pgas_barrier",
                 [&] { pgas_of(pgas, "mpidsm_pgas_barrier: pgas").barrier(); });
}

}  // extern "C"
