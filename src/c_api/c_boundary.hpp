// The C API's boundary: the handles behind the C types, and `guarded`, which
// runs a C entry point's body so that no exception crosses into C. An Error
// becomes its status and the thread's message; anything else becomes a
// status that says it was unexpected.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <string>
#include <utility>

#include "mpidsm/dsm.hpp"
#include "mpidsm/error.hpp"
#include "mpidsm/mpidsm.h"
#include "mpidsm/pgas.hpp"
#include "mpidsm/runtime.hpp"
#include "mpidsm/team.hpp"
#include "mpidsm/transport.hpp"

struct mpidsm_runtime {
  mpidsm::Runtime runtime;
};
struct mpidsm_pgas {
  mpidsm::Pgas pgas;
};
struct mpidsm_team {
  mpidsm::Team team;
};
struct mpidsm_dsm {
  mpidsm::Dsm dsm;
};
struct mpidsm_dsm_access {
  mpidsm::DsmAccess access;
};

namespace mpidsm::c_api {

// Records a failure as the calling thread's message and returns its status.
mpidsm_status_t fail(mpidsm_status_t status, const std::string& message) noexcept;
// The calling thread's last message.
const char* message() noexcept;

// An error of the layers below as the C function `function` reports it:
// its message names `function` in place of the C++ operation
// ("Dsm::lock: lock id 9 ..." becomes "mpidsm_dsm_lock: lock id 9 ...").
std::string c_message(const char* function, const Error& e);

// Runs the body of the C function `function`.
template <class Body>
mpidsm_status_t guarded(const char* function, Body&& body) noexcept {
  try {
    std::forward<Body>(body)();
    return MPIDSM_SUCCESS;
  } catch (const Error& e) {
    try {
      return fail(to_status(e.code()), c_message(function, e));
    } catch (...) {
      return fail(to_status(e.code()), e.what());
    }
  } catch (const std::bad_alloc&) {
    return fail(MPIDSM_ERR_NO_MEMORY, "mpidsm: out of memory");
  } catch (const std::exception& e) {
    return fail(MPIDSM_ERR_INVALID_STATE, std::string("mpidsm: unexpected error: ") + e.what());
  } catch (...) {
    return fail(MPIDSM_ERR_INVALID_STATE, "mpidsm: unexpected error of unknown type");
  }
}

// Sets `out` to a new handle around the object `make` returns; `out` is
// NULL if that throws.
template <class Handle, class Make>
void create(Handle*& out, Make&& make) {
  out = nullptr;
  out = new Handle{make()};
}

// Takes the handle out of the caller's variable (which becomes NULL; NULL is
// accepted): it is deleted when the returned owner goes.
template <class Handle>
std::unique_ptr<Handle> take(Handle*& handle) {
  std::unique_ptr<Handle> owned(handle);
  handle = nullptr;
  return owned;
}

// Throws Errc::invalid_argument naming `what` (the C function and parameter)
// when `pointer` is null.
template <class T>
T& require(T* pointer, const char* what) {
  if (pointer == nullptr)
    throw Error(Errc::invalid_argument, no_rank, std::string(what) + " is NULL");
  return *pointer;
}

// The same, naming the C function and the parameter apart (no string is
// built unless the pointer is null).
template <class T>
T& require(T* pointer, const char* function, const char* parameter) {
  if (pointer == nullptr)
    throw Error(Errc::invalid_argument, no_rank,
                std::string(function) + ": " + parameter + " is NULL");
  return *pointer;
}

// Calls f with a value of the unsigned type `element_bytes` wide (1, 2, 4
// or 8 bytes), for calls that move whole elements of a size given at run
// time (strided transfers, alltoalls).
template <class F>
void with_element_type(std::size_t element_bytes, const char* function, F&& f) {
  switch (element_bytes) {
    case 1:
      return f(std::uint8_t{});
    case 2:
      return f(std::uint16_t{});
    case 4:
      return f(std::uint32_t{});
    case 8:
      return f(std::uint64_t{});
  }
  throw Error(Errc::invalid_argument, no_rank,
              std::string(function) + ": element_bytes " + std::to_string(element_bytes) +
                  " is not 1, 2, 4 or 8");
}

inline Pgas& pgas_of(mpidsm_pgas_t pgas, const char* what) {
  return require(pgas, what).pgas;
}

// The caller's request storage for a new operation: Errc::invalid_argument
// naming `what` when it is NULL or still holds one in flight (which would
// be lost).
mpidsm_request_t& free_request(mpidsm_request_t* request, const char* what);
// Moves `operation` into the request's storage, which it lives in until
// mpidsm_request_test or _wait completes it.
void start(mpidsm_request_t& request, Request&& operation);

}  // namespace mpidsm::c_api
