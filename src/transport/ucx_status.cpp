#include "ucx_status.hpp"

#include <ucs/type/status.h>

namespace mpidsm::detail {

void throw_ucx(int rank, const char* operation, int peer, ucs_status_t status) {
  std::string message = operation;
  if (peer != no_rank) message += " with rank " + std::to_string(peer);
  message += " failed: ";
  message += ucs_status_string(status);
  Errc code = status == UCS_ERR_MESSAGE_TRUNCATED ? Errc::truncated
              : status == UCS_ERR_NO_MEMORY       ? Errc::no_memory
                                                  : Errc::transport;
  throw Error(code, rank, message);
}

}  // namespace mpidsm::detail
