// The names of the progress and waiting modes, as their variables spell them.
#include "mpidsm/progress_modes.hpp"

namespace mpidsm {
namespace {

template <class Mode>
const char* mode_name(Mode mode) {
  switch (mode) {
    case Mode::automatic:
      return "auto";
    case Mode::on:
      return "on";
    case Mode::off:
      return "off";
  }
  return "?";
}

}  // namespace

const char* to_string(ProgressMode mode) {
  return mode_name(mode);
}

const char* to_string(YieldMode mode) {
  return mode_name(mode);
}

}  // namespace mpidsm
