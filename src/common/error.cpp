#include "mpidsm/error.hpp"

#include <cstdio>

#include "mpidsm/status.h"

namespace mpidsm {
namespace {

std::string format(Errc code, int rank, const std::string& message) {
  std::string text = "mpidsm";
  if (rank != no_rank) text += "[rank " + std::to_string(rank) + "]";
  text += " ";
  text += mpidsm_status_string(to_status(code));
  text += ": ";
  text += message;
  return text;
}

}  // namespace

Error::Error(Errc code, int rank, const std::string& message)
    : std::runtime_error(format(code, rank, message)),
      code_(code),
      rank_(rank),
      message_(message) {}

void detail::throw_array_too_large(std::size_t count, std::size_t element, int rank,
                                   const char* operation) {
  throw Error(Errc::out_of_range, rank,
              std::string(operation) + ": " + std::to_string(count) + " elements of " +
                  std::to_string(element) + " bytes overflow the address space");
}

std::string detail::describe_address(const void* address) {
  char text[32];
  std::snprintf(text, sizeof text, "%p", address);
  return text;
}

}  // namespace mpidsm

extern "C" const char* mpidsm_status_string(mpidsm_status_t status) {
  switch (status) {
    case MPIDSM_SUCCESS:
      return "success";
    case MPIDSM_ERR_INVALID_ARGUMENT:
      return "invalid argument";
    case MPIDSM_ERR_OUT_OF_RANGE:
      return "out of range";
    case MPIDSM_ERR_INVALID_RANK:
      return "invalid rank";
    case MPIDSM_ERR_NOT_INITIALIZED:
      return "not initialized";
    case MPIDSM_ERR_UNREGISTERED:
      return "unregistered address";
    case MPIDSM_ERR_COLLECTIVE_MISMATCH:
      return "collective mismatch";
    case MPIDSM_ERR_TRUNCATED:
      return "message truncated";
    case MPIDSM_ERR_CONFIG:
      return "configuration error";
    case MPIDSM_ERR_TRANSPORT:
      return "transport error";
    case MPIDSM_ERR_MPI:
      return "MPI error";
    case MPIDSM_ERR_NO_MEMORY:
      return "out of memory";
    case MPIDSM_ERR_INVALID_STATE:
      return "invalid state";
  }
  return "unknown status";
}
