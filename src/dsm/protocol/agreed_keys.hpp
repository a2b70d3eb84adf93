// The DSM's users of Transport's agreed messages split its keys, so a
// barrier's update never matches a pairwise sync's message or a barrier's
// record: the barrier's updates take the first quarter, its records (the
// sparse allgather) the second, pairwise syncs the third, and the grants of
// locks whose homes keep their queues (lock_table.hpp) the fourth, a key per
// lock id. Each of the first three counts its own messages and wraps within
// its part.
#pragma once

#include <cstddef>
#include <cstdint>

#include "transport/library_messaging.hpp"

namespace mpidsm::detail {

inline constexpr std::uint64_t kKeysPerUse =
    (std::uint64_t{LibraryMessaging::max_agreed_key} + 1) / 4;

constexpr std::uint32_t barrier_update_key(std::uint64_t message) {
  return static_cast<std::uint32_t>(message % kKeysPerUse);
}
constexpr std::uint32_t barrier_record_key(std::uint64_t message) {
  return static_cast<std::uint32_t>(kKeysPerUse + message % kKeysPerUse);
}
constexpr std::uint32_t sync_key(std::uint64_t message) {
  return static_cast<std::uint32_t>(2 * kKeysPerUse + message % kKeysPerUse);
}
// Lock ids below kKeysPerUse have a grant key each.
constexpr std::uint32_t lock_grant_key(std::size_t id) {
  return static_cast<std::uint32_t>(3 * kKeysPerUse + id);
}

}  // namespace mpidsm::detail
