// The DSM's two users of Transport's agreed messages split its keys, so a
// barrier's update never matches a pairwise sync's message: the barrier's
// updates take the lower half, pairwise syncs the upper. Each counts its own
// messages and wraps within its half.
#pragma once

#include <cstdint>

#include "transport/library_messaging.hpp"

namespace mpidsm::detail {

inline constexpr std::uint64_t kKeysPerUse =
    (std::uint64_t{LibraryMessaging::max_agreed_key} + 1) / 2;

constexpr std::uint32_t barrier_update_key(std::uint64_t message) {
  return static_cast<std::uint32_t>(message % kKeysPerUse);
}
constexpr std::uint32_t sync_key(std::uint64_t message) {
  return static_cast<std::uint32_t>(kKeysPerUse + message % kKeysPerUse);
}

}  // namespace mpidsm::detail
