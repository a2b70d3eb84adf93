// Typed errors of mpidsm. Every failure surfaces as mpidsm::Error: a code from
// the closed list below, the rank that detected it, and a message that names
// what was wrong (rank, address, size, variable). The runtime stays usable
// after any Error thrown for bad input.
#pragma once

#include "mpidsm/language.hpp"

#include <cstddef>
#include <stdexcept>
#include <string>

#include "mpidsm/status.h"

namespace mpidsm {

/// \addtogroup runtime
/// @{

/// What went wrong; the values are the C API's status codes.
enum class Errc : int {
  invalid_argument = MPIDSM_ERR_INVALID_ARGUMENT,
  out_of_range = MPIDSM_ERR_OUT_OF_RANGE,
  invalid_rank = MPIDSM_ERR_INVALID_RANK,
  not_initialized = MPIDSM_ERR_NOT_INITIALIZED,
  unregistered = MPIDSM_ERR_UNREGISTERED,
  collective_mismatch = MPIDSM_ERR_COLLECTIVE_MISMATCH,
  truncated = MPIDSM_ERR_TRUNCATED,
  config = MPIDSM_ERR_CONFIG,
  transport = MPIDSM_ERR_TRANSPORT,
  mpi = MPIDSM_ERR_MPI,
  no_memory = MPIDSM_ERR_NO_MEMORY,
  invalid_state = MPIDSM_ERR_INVALID_STATE,
};

/// The C status code of an error code (for the C API).
constexpr mpidsm_status_t to_status(Errc code) noexcept {
  return static_cast<mpidsm_status_t>(code);
}

/// Rank used in errors detected where no runtime (and so no rank) exists.
inline constexpr int no_rank = -1;

/// What every mpidsm call throws: a code, the rank and a message naming what was wrong.
class Error : public std::runtime_error {
 public:
  /// what() reads "mpidsm[rank R] <code name>: <message>".
  Error(Errc code, int rank, const std::string& message);

  /// What kind of error.
  Errc code() const noexcept { return code_; }
  /// The rank that detected it (no_rank before a runtime exists).
  int rank() const noexcept { return rank_; }
  /// The message without the rank and code prefix.
  const std::string& message() const noexcept { return message_; }

 private:
  Errc code_;
  int rank_;
  std::string message_;
};

namespace detail {
[[noreturn]] void throw_array_too_large(std::size_t count, std::size_t element, int rank,
                                        const char* operation);
}  // namespace detail

/// Bytes taken by `count` elements of `element` bytes; Errc::out_of_range
/// naming `operation` when the product does not fit in size_t. Inline: every
/// typed put and get goes through it.
inline std::size_t array_bytes(std::size_t count, std::size_t element, int rank,
                               const char* operation) {
  std::size_t bytes = 0;
  if (__builtin_mul_overflow(count, element, &bytes)) [[unlikely]]
    detail::throw_array_too_large(count, element, rank, operation);
  return bytes;
}

namespace detail {
/// "0x7f..." for error messages.
std::string describe_address(const void* address);
}  // namespace detail

/// @}

}  // namespace mpidsm
