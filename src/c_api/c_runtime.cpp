// The C API's runtime and tagged messaging.
#include "c_boundary.hpp"

using mpidsm::c_api::create;
using mpidsm::c_api::guarded;
using mpidsm::c_api::require;
using mpidsm::c_api::take;

extern "C" {

mpidsm_status_t mpidsm_runtime_create(MPI_Comm comm, mpidsm_runtime_t* runtime) {
  return guarded([&] {
    create(require(runtime, "mpidsm_runtime_create: runtime"),
           [&] { return mpidsm::Runtime(comm); });
  });
}

mpidsm_status_t mpidsm_runtime_destroy(mpidsm_runtime_t* runtime) {
  return guarded([&] {
    const auto owned = take(require(runtime, "mpidsm_runtime_destroy: runtime"));
    if (owned) owned->runtime.finalize();
  });
}

mpidsm_status_t mpidsm_runtime_rank(mpidsm_runtime_t runtime, int* rank) {
  return guarded([&] {
    require(rank, "mpidsm_runtime_rank: rank") =
        require(runtime, "mpidsm_runtime_rank: runtime").runtime.rank();
  });
}

mpidsm_status_t mpidsm_runtime_size(mpidsm_runtime_t runtime, int* size) {
  return guarded([&] {
    require(size, "mpidsm_runtime_size: size") =
        require(runtime, "mpidsm_runtime_size: runtime").runtime.size();
  });
}

mpidsm_status_t mpidsm_send(mpidsm_runtime_t runtime, int rank, int tag, const void* buffer,
                            size_t bytes) {
  return guarded([&] {
    require(runtime, "mpidsm_send: runtime").runtime.transport().send(rank, tag, buffer, bytes);
  });
}

mpidsm_status_t mpidsm_recv(mpidsm_runtime_t runtime, int source, int tag, void* buffer,
                            size_t capacity, mpidsm_recv_info_t* info) {
  return guarded([&] {
    const mpidsm::MessageInfo got = require(runtime, "mpidsm_recv: runtime")
                                        .runtime.transport()
                                        .recv(source, tag, buffer, capacity);
    if (info) *info = {got.source, got.tag, got.size};
  });
}

}  // extern "C"
