#include "ucx_status.hpp"

#include <ucs/type/status.h>

namespace mpidsm::detail {

void throw_ucx(int rank, const char* operation, int peer, ucs_status_t status) {
  std::string message = operation;
  if (peer != no_rank) message += " with rank " + std::to_string(peer);
  message += " failed: ";
  message += ucs_status_string(status);
  // What UCX reports when the peer's process or node is gone.
  if (peer != no_rank &&
      (status == UCS_ERR_CONNECTION_RESET || status == UCS_ERR_ENDPOINT_TIMEOUT ||
       status == UCS_ERR_NOT_CONNECTED || status == UCS_ERR_UNREACHABLE ||
       status == UCS_ERR_REJECTED || status == UCS_ERR_IO_ERROR))
    message += " (rank " + std::to_string(peer) + " is gone or unreachable)";
  Errc code = status == UCS_ERR_MESSAGE_TRUNCATED ? Errc::truncated
              : status == UCS_ERR_NO_MEMORY       ? Errc::no_memory
                                                  : Errc::transport;
  throw Error(code, rank, message);
}

Error truncated(int rank, const MessageInfo& message, std::size_t capacity) {
  return Error(Errc::truncated, rank,
               "recv: message of " + std::to_string(message.size) + " bytes with tag " +
                   std::to_string(message.tag) + " from rank " + std::to_string(message.source) +
                   " does not fit the buffer of " + std::to_string(capacity) + " bytes");
}

}  // namespace mpidsm::detail
