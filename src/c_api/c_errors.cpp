// Per-thread error messages and the version query of the C API.
#include <string>

#include "c_boundary.hpp"
#include "mpidsm/version.hpp"

namespace mpidsm::c_api {
namespace {
thread_local std::string last_message;
}

mpidsm_status_t fail(mpidsm_status_t status, const std::string& message) noexcept {
  try {
    last_message = message;
  } catch (...) {
    last_message.clear();  // no memory for the text: the status still says what failed
  }
  return status;
}

const char* message() noexcept {
  return last_message.c_str();
}

std::string c_message(const char* function, const Error& e) {
  const std::string& text = e.message();
  std::string named;
  const std::size_t colon = text.find(": ");
  // The operation the C++ layers put first ("Dsm::lock: ...", "put: ..."),
  // an identifier, gives way to the C function's name.
  const bool operation_first =
      colon != std::string::npos && colon > 0 &&
      text.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_:") ==
          colon + 1;  // the space after the colon
  if (text.rfind("mpidsm_", 0) == 0)
    named = text;  // a C function's own check named it already
  else if (operation_first)
    named = function + text.substr(colon);
  else
    named = std::string(function) + ": " + text;
  return Error(e.code(), e.rank(), named).what();
}

}  // namespace mpidsm::c_api

extern "C" const char* mpidsm_error_message(void) {
  return mpidsm::c_api::message();
}

extern "C" mpidsm_status_t mpidsm_version(int* major, int* minor, int* patch) {
  const mpidsm::Version library = mpidsm::library_version();
  if (major) *major = library.major;
  if (minor) *minor = library.minor;
  if (patch) *patch = library.patch;
  return MPIDSM_SUCCESS;
}
