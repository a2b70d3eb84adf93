// The C API's requests: a non-blocking operation's mpidsm::Request lives in
// the caller's mpidsm_request_t (no allocation per operation) until a test
// or wait completes it.
#include <new>
#include <string>

#include "c_boundary.hpp"

namespace mpidsm::c_api {
namespace {

static_assert(sizeof(Request) <= sizeof(mpidsm_request_t::opaque) &&
                  alignof(Request) <= alignof(mpidsm_request_t),
              "an mpidsm_request_t holds an mpidsm::Request");

Request& operation_in(mpidsm_request_t& request) {
  return *std::launder(reinterpret_cast<Request*>(request.opaque.bytes));
}

// The operation is over: its Request goes, the storage is free again.
void finish(mpidsm_request_t& request, mpidsm_recv_info_t* info) {
  Request& operation = operation_in(request);
  if (info) {
    const MessageInfo& got = operation.message();
    *info = {got.source, got.tag, got.size};
  }
  operation.~Request();
  request.active = 0;
}

}  // namespace

mpidsm_request_t& free_request(mpidsm_request_t* request, const char* what) {
  mpidsm_request_t& r = require(request, what);
  if (r.active)
    throw Error(Errc::invalid_argument, no_rank,
                std::string(what) +
                    " still holds an operation in flight (complete it with "
                    "mpidsm_request_test or mpidsm_request_wait first)");
  return r;
}

void start(mpidsm_request_t& request, Request&& operation) {
  new (request.opaque.bytes) Request(std::move(operation));
  request.active = 1;
}

}  // namespace mpidsm::c_api

using mpidsm::c_api::guarded;
using mpidsm::c_api::require;

extern "C" {

mpidsm_status_t mpidsm_request_test(mpidsm_request_t* request, int* done,
                                    mpidsm_recv_info_t* info) {
  return guarded("mpidsm_request_test", [&] {
    mpidsm_request_t& r = require(request, "mpidsm_request_test: request");
    int& finished = require(done, "mpidsm_request_test: done");
    finished = 1;
    if (!r.active) return;
    // A failed operation is over too: its storage is free again.
    try {
      if (!mpidsm::c_api::operation_in(r).test()) {
        finished = 0;
        return;
      }
    } catch (...) {
      mpidsm::c_api::finish(r, nullptr);
      throw;
    }
    mpidsm::c_api::finish(r, info);
  });
}

mpidsm_status_t mpidsm_request_wait(mpidsm_request_t* request, mpidsm_recv_info_t* info) {
  return guarded("mpidsm_request_wait", [&] {
    mpidsm_request_t& r = require(request, "mpidsm_request_wait: request");
    if (!r.active) return;
    try {
      mpidsm::c_api::operation_in(r).wait();
    } catch (...) {
      mpidsm::c_api::finish(r, nullptr);
      throw;
    }
    mpidsm::c_api::finish(r, info);
  });
}

}  // extern "C"
