// The C API's deprecated names (mpidsm 0.x): each calls its successor with
// the arguments in the successor's order, so old programs keep building and
// behave as before. Errors name the successor.
#define MPIDSM_NO_DEPRECATION  // these definitions are the deprecated names
#include "mpidsm/mpidsm.h"

extern "C" {

mpidsm_status_t mpidsm_put(mpidsm_pgas_t pgas, int rank, void* dest, const void* src,
                           size_t bytes) {
  return mpidsm_pgas_put(pgas, dest, src, bytes, rank);
}

mpidsm_status_t mpidsm_get(mpidsm_pgas_t pgas, void* dest, int rank, const void* src,
                           size_t bytes) {
  return mpidsm_pgas_get(pgas, dest, src, bytes, rank);
}

mpidsm_status_t mpidsm_put_nbi(mpidsm_pgas_t pgas, int rank, void* dest, const void* src,
                               size_t bytes) {
  return mpidsm_pgas_put_nbi(pgas, dest, src, bytes, rank);
}

mpidsm_status_t mpidsm_get_nbi(mpidsm_pgas_t pgas, void* dest, int rank, const void* src,
                               size_t bytes) {
  return mpidsm_pgas_get_nbi(pgas, dest, src, bytes, rank);
}

mpidsm_status_t mpidsm_put_signal(mpidsm_pgas_t pgas, int rank, void* dest, const void* src,
                                  size_t bytes, uint64_t* signal, uint64_t value, int op) {
  return mpidsm_pgas_put_signal(pgas, dest, src, bytes, signal, value, op, rank);
}

mpidsm_status_t mpidsm_fence(mpidsm_pgas_t pgas) {
  return mpidsm_pgas_fence(pgas);
}

mpidsm_status_t mpidsm_quiet(mpidsm_pgas_t pgas) {
  return mpidsm_pgas_quiet(pgas);
}

mpidsm_status_t mpidsm_barrier(mpidsm_pgas_t pgas) {
  return mpidsm_pgas_barrier(pgas);
}

mpidsm_status_t mpidsm_atomic_fetch_u64(mpidsm_pgas_t pgas, int rank, uint64_t* word,
                                        uint64_t* value) {
  return mpidsm_pgas_atomic_fetch_u64(pgas, word, rank, value);
}

mpidsm_status_t mpidsm_atomic_set_u64(mpidsm_pgas_t pgas, int rank, uint64_t* word,
                                      uint64_t value) {
  return mpidsm_pgas_atomic_set_u64(pgas, word, value, rank);
}

mpidsm_status_t mpidsm_atomic_swap_u64(mpidsm_pgas_t pgas, int rank, uint64_t* word, uint64_t value,
                                       uint64_t* old) {
  return mpidsm_pgas_atomic_swap_u64(pgas, word, value, rank, old);
}

mpidsm_status_t mpidsm_atomic_compare_swap_u64(mpidsm_pgas_t pgas, int rank, uint64_t* word,
                                               uint64_t expected, uint64_t desired, uint64_t* old) {
  return mpidsm_pgas_atomic_compare_swap_u64(pgas, word, expected, desired, rank, old);
}

mpidsm_status_t mpidsm_atomic_fetch_add_u64(mpidsm_pgas_t pgas, int rank, uint64_t* word,
                                            uint64_t value, uint64_t* old) {
  return mpidsm_pgas_atomic_fetch_add_u64(pgas, word, value, rank, old);
}

mpidsm_status_t mpidsm_atomic_add_u64(mpidsm_pgas_t pgas, int rank, uint64_t* word,
                                      uint64_t value) {
  return mpidsm_pgas_atomic_add_u64(pgas, word, value, rank);
}

mpidsm_status_t mpidsm_wait_until_u64(mpidsm_pgas_t pgas, uint64_t* word, int cmp, uint64_t value,
                                      uint64_t* seen) {
  return mpidsm_pgas_wait_until_u64(pgas, word, cmp, value, seen);
}

mpidsm_status_t mpidsm_send(mpidsm_runtime_t runtime, int rank, int tag, const void* buffer,
                            size_t bytes) {
  return mpidsm_msg_send(runtime, buffer, bytes, rank, tag);
}

mpidsm_status_t mpidsm_recv(mpidsm_runtime_t runtime, int source, int tag, void* buffer,
                            size_t capacity, mpidsm_recv_info_t* info) {
  return mpidsm_msg_recv(runtime, buffer, capacity, source, tag, info);
}

}  // extern "C"
