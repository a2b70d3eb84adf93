#include "mpidsm/version.hpp"

namespace mpidsm {

// The library's own numbers, compiled in here: not those of the header a
// program was compiled with.
Version library_version() noexcept {
  return {MPIDSM_VERSION_MAJOR, MPIDSM_VERSION_MINOR, MPIDSM_VERSION_PATCH};
}

}  // namespace mpidsm
