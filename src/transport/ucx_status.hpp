// Turning UCX statuses into mpidsm errors that say which operation failed.
#pragma once

#include <ucs/type/status.h>

#include <string>

#include "mpidsm/error.hpp"
#include "mpidsm/transport.hpp"

namespace mpidsm::detail {

// Throws Error(Errc::transport) reading "<operation> [to rank P] failed: <ucs_status_string>".
[[noreturn]] void throw_ucx(int rank, const char* operation, int peer, ucs_status_t status);

// The error for a receive whose message (described by `message`) did not fit
// `capacity` bytes.
Error truncated(int rank, const MessageInfo& message, std::size_t capacity);

inline void check_ucx(int rank, const char* operation, int peer, ucs_status_t status) {
  if (status != UCS_OK) throw_ucx(rank, operation, peer, status);
}

}  // namespace mpidsm::detail
