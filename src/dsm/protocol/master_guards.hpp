// Who may store into a page of a master copy, and how. Diffs reach a home's
// master copy from several writers at once: the home's progress (diff
// messages), releasers on its node (which map it) and the home's own
// application, through its view. Storing exactly the changed bytes lets
// them all run at once, but without a byte-masked store (AVX2, NEON, plain
// words) a page of scattered changes then costs a store per byte or run.
// A writer that holds a page alone may instead store whole vectors, reading
// back the bytes it did not change (PageAccess::exclusive, diff_kernels.hpp).
//
// Per rank and page, a 32-bit word in memory its node shares
// (shared_memfd.hpp), reached with CPU atomics:
//   kHeld      a writer holds the page: every store into a master copy
//              other than through its owner's view holds it;
//   kReadOnly  the owner's view of the page is read-only: set after a
//              protection change made it so, cleared (once nobody holds the
//              page) before the view leaves read-only.
// A holder that found kReadOnly set stores alone: the owner's first store
// faults, and the fault's protection change waits until the page is
// released. Only pages made read-only have their words touched: a fresh
// word (zero) says "may be written", so mapping a large range of home pages
// writable costs no memory here. Ranks on other nodes never store into a master copy directly:
// their diffs arrive as messages, which the home applies holding the page
// (their whole pages, single_writer's, arrive as puts: only one rank may
// write such a page in an interval).
#pragma once

#include <mpi.h>

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "diff_kernels.hpp"
#include "dsm/memory/shared_memfd.hpp"
#include "mpidsm/transport.hpp"

namespace mpidsm::detail {

class MasterGuards {
 public:
  // Collective.
  MasterGuards(MPI_Comm comm, Transport& transport, std::size_t pages,
               const MappablePeers& mappable);
  // The transport is gone: forget the registration.
  void abandon_transport() { memory_.abandon_transport(); }

  // Whether `rank`'s guards are mapped here (this rank's always are).
  bool maps(int rank) const { return memory_.peer(rank) != nullptr; }
  // Writer side, for a `home` whose guards are mapped here: waits until
  // nobody else holds `page`, then holds it.
  PageAccess hold(int home, std::size_t page);
  void release(int home, std::size_t page);

  // Owner side, around the protection changes of this rank's view: after
  // pages [first, first+count) became read-only; before `page` leaves
  // read-only (waits until nobody holds it).
  void view_read_only(std::size_t first, std::size_t count);
  void view_leaves_read_only(std::size_t page);

 private:
  static constexpr std::uint32_t kHeld = 1, kReadOnly = 2;
  std::atomic_ref<std::uint32_t> word(int rank, std::size_t page) const;
  void wait_a_little(unsigned& spins);

  Transport& transport_;
  SharedMemfd memory_;
  int rank_;
};

// Holds a page of a master copy for as long as it lives.
class HeldPage {
 public:
  HeldPage(MasterGuards& guards, int home, std::size_t page)
      : guards_(guards), home_(home), page_(page), access_(guards.hold(home, page)) {}
  ~HeldPage() { guards_.release(home_, page_); }
  HeldPage(const HeldPage&) = delete;
  HeldPage& operator=(const HeldPage&) = delete;
  PageAccess access() const { return access_; }

 private:
  MasterGuards& guards_;
  int home_;
  std::size_t page_;
  PageAccess access_;
};

}  // namespace mpidsm::detail
