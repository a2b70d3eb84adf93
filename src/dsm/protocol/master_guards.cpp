#include "master_guards.hpp"

#include <sched.h>

namespace mpidsm::detail {

MasterGuards::MasterGuards(MPI_Comm comm, Transport& transport, std::size_t pages,
                           const MappablePeers& mappable)
    : transport_(transport),
      memory_(comm, transport, pages * sizeof(std::uint32_t), mappable, "the DSM's page guards"),
      rank_(transport.rank()) {}

std::atomic_ref<std::uint32_t> MasterGuards::word(int rank, std::size_t page) const {
  return std::atomic_ref<std::uint32_t>(
      *reinterpret_cast<std::uint32_t*>(memory_.peer(rank) + page * sizeof(std::uint32_t)));
}

// Holders keep a page for one page's stores; a holder descheduled on an
// oversubscribed node needs the CPU back, and one whose process died ends
// the wait with the runtime's error naming it.
void MasterGuards::wait_a_little(unsigned& spins) {
  if (++spins % 64 != 0) return;
  sched_yield();
  if (spins % 4096 == 0) transport_.check_peers("a DSM page held by a writer on this node");
}

PageAccess MasterGuards::hold(int home, std::size_t page) {
  std::atomic_ref<std::uint32_t> guard = word(home, page);
  for (unsigned spins = 0;; wait_a_little(spins)) {
    std::uint32_t seen = guard.load(std::memory_order_relaxed);
    if ((seen & kHeld) == 0 &&
        guard.compare_exchange_weak(seen, seen | kHeld, std::memory_order_acquire,
                                    std::memory_order_relaxed))
      return (seen & kReadOnly) != 0 ? PageAccess::exclusive : PageAccess::shared;
  }
}

void MasterGuards::release(int home, std::size_t page) {
  word(home, page).fetch_and(~kHeld, std::memory_order_release);
}

void MasterGuards::view_read_only(std::size_t first, std::size_t count) {
  for (std::size_t page = first; page < first + count; ++page)
    word(rank_, page).fetch_or(kReadOnly, std::memory_order_release);
}

void MasterGuards::view_leaves_read_only(std::size_t page) {
  std::atomic_ref<std::uint32_t> guard = word(rank_, page);
  for (unsigned spins = 0;; wait_a_little(spins)) {
    std::uint32_t seen = guard.load(std::memory_order_relaxed);
    if ((seen & kReadOnly) == 0) return;
    if ((seen & kHeld) == 0 &&
        guard.compare_exchange_weak(seen, seen & ~kReadOnly, std::memory_order_acq_rel,
                                    std::memory_order_relaxed))
      return;
  }
}

}  // namespace mpidsm::detail
