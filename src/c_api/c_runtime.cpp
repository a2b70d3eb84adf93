// The C API's runtime and tagged messaging.
#include "c_boundary.hpp"

using mpidsm::c_api::create;
using mpidsm::c_api::free_request;
using mpidsm::c_api::guarded;
using mpidsm::c_api::require;
using mpidsm::c_api::start;
using mpidsm::c_api::take;

extern "C" {

mpidsm_status_t mpidsm_runtime_create(MPI_Comm comm, mpidsm_runtime_t* runtime) {
  return guarded("mpidsm_runtime_create", [&] {
    create(require(runtime, "mpidsm_runtime_create: runtime"),
           [&] { return mpidsm::Runtime(comm); });
  });
}

mpidsm_status_t mpidsm_runtime_destroy(mpidsm_runtime_t* runtime) {
  return guarded("mpidsm_runtime_destroy", [&] {
    const auto owned = take(require(runtime, "mpidsm_runtime_destroy: runtime"));
    if (owned) owned->runtime.finalize();
  });
}

mpidsm_status_t mpidsm_runtime_rank(mpidsm_runtime_t runtime, int* rank) {
  return guarded("mpidsm_runtime_rank", [&] {
    require(rank, "mpidsm_runtime_rank: rank") =
        require(runtime, "mpidsm_runtime_rank: runtime").runtime.rank();
  });
}

mpidsm_status_t mpidsm_runtime_size(mpidsm_runtime_t runtime, int* size) {
  return guarded("mpidsm_runtime_size", [&] {
    require(size, "mpidsm_runtime_size: size") =
        require(runtime, "mpidsm_runtime_size: runtime").runtime.size();
  });
}

mpidsm_status_t mpidsm_msg_send(mpidsm_runtime_t runtime, const void* buffer, size_t bytes,
                                int rank, int tag) {
  return guarded("mpidsm_msg_send", [&] {
    require(runtime, "mpidsm_msg_send: runtime").runtime.transport().send(rank, tag, buffer, bytes);
  });
}

mpidsm_status_t mpidsm_msg_recv(mpidsm_runtime_t runtime, void* buffer, size_t capacity, int source,
                                int tag, mpidsm_recv_info_t* info) {
  return guarded("mpidsm_msg_recv", [&] {
    const mpidsm::MessageInfo got = require(runtime, "mpidsm_msg_recv: runtime")
                                        .runtime.transport()
                                        .recv(source, tag, buffer, capacity);
    if (info) *info = {got.source, got.tag, got.size};
  });
}

mpidsm_status_t mpidsm_msg_isend(mpidsm_runtime_t runtime, const void* buffer, size_t bytes,
                                 int rank, int tag, mpidsm_request_t* request) {
  return guarded("mpidsm_msg_isend", [&] {
    mpidsm_request_t& r = free_request(request, "mpidsm_msg_isend: request");
    start(r, require(runtime, "mpidsm_msg_isend: runtime")
                 .runtime.transport()
                 .isend(rank, tag, buffer, bytes));
  });
}

mpidsm_status_t mpidsm_msg_irecv(mpidsm_runtime_t runtime, void* buffer, size_t capacity,
                                 int source, int tag, mpidsm_request_t* request) {
  return guarded("mpidsm_msg_irecv", [&] {
    mpidsm_request_t& r = free_request(request, "mpidsm_msg_irecv: request");
    start(r, require(runtime, "mpidsm_msg_irecv: runtime")
                 .runtime.transport()
                 .irecv(source, tag, buffer, capacity));
  });
}

}  // extern "C"
