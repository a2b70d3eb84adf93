#include "sharing.hpp"

#include <atomic>
#include <cstdio>
#include <cstring>

#include "mpidsm/error.hpp"

namespace mpidsm::detail {

SharingRecord::SharingRecord(Transport& transport, std::size_t pages, bool direct_access)
    : transport_(transport),
      memory_(transport.allocate(8 + pages * 4)),
      known_copied_(pages) {
  // CPU atomics only when every rank's flags are mapped, so they never race
  // atomics a NIC performs.
  const bool direct = direct_access && memory_.all_mapped();
  for (int peer = 0; peer < transport.size(); ++peer)
    mapped_.push_back(direct ? static_cast<std::byte*>(memory_.mapped(peer)) : nullptr);
}

SharingRecord::~SharingRecord() {
  try {
    transport_.deregister(memory_);
  } catch (const Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
  }
}

std::uint32_t* SharingRecord::local_flag(std::size_t page) const {
  return reinterpret_cast<std::uint32_t*>(static_cast<std::byte*>(memory_.local_base()) +
                                          flag_offset(page));
}

void SharingRecord::mark_copied(int home, std::size_t first, std::size_t count) {
  bool first_copy = false;
  std::byte* direct = mapped_[static_cast<std::size_t>(home)];
  for (std::size_t page = first; page < first + count; ++page) {
    if (known_copied_[page]) continue;
    known_copied_[page] = 1;
    std::uint32_t old;
    if (direct)
      old = std::atomic_ref<std::uint32_t>(
                *reinterpret_cast<std::uint32_t*>(direct + flag_offset(page)))
                .exchange(1);
    else
      old = transport_.atomic_fetch<std::uint32_t>(AtomicOp::swap, home, memory_, flag_offset(page),
                                                   1);
    first_copy = first_copy || old == 0;
  }
  if (!first_copy) return;
  if (direct) {
    std::atomic_ref<std::uint64_t>(*reinterpret_cast<std::uint64_t*>(direct + kCounter))
        .fetch_add(1);
  } else {
    transport_.atomic_post<std::uint64_t>(AtomicOp::add, home, memory_, kCounter, 1);
    transport_.flush(home);
  }
}

bool SharingRecord::new_copies_since_last_check() {
  std::atomic_thread_fence(std::memory_order_seq_cst);  // after this rank's writes
  const std::uint64_t now =
      std::atomic_ref<std::uint64_t>(*reinterpret_cast<std::uint64_t*>(
                                         static_cast<std::byte*>(memory_.local_base()) + kCounter))
          .load();
  if (now == last_counter_) return false;
  last_counter_ = now;
  return true;
}

bool SharingRecord::copied(std::size_t page) const {
  return std::atomic_ref<std::uint32_t>(*local_flag(page)).load() != 0;
}

void SharingRecord::forget(std::size_t first, std::size_t count) {
  std::memset(local_flag(first), 0, count * 4);
  known_copied_.reset(first, count);
}

}  // namespace mpidsm::detail
