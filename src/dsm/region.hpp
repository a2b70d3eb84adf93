// The DSM region's memory: one memfd mapped twice. The application view sits
// at the same virtual address on every rank and carries the per-page
// protection that drives the protocol; the master view is always read-write
// and is what UCX registers, so remote gets and puts reach a page even while
// the application's view of it is protected, and no UCX access ever faults.
// On each rank the memfd page at a page's offset is the master copy when the
// rank is its home and the cached copy otherwise, so memory use follows the
// pages homed and cached here (the memfd is sparse).
#pragma once

#include <mpi.h>

#include <cstddef>

namespace mpidsm::detail {

class DsmRegion {
 public:
  // Collective: agrees on an address free on every rank (Errc::no_memory
  // naming the size when none is found) and maps the region there, PROT_NONE.
  DsmRegion(MPI_Comm comm, std::size_t size);
  ~DsmRegion();
  DsmRegion(const DsmRegion&) = delete;
  DsmRegion& operator=(const DsmRegion&) = delete;

  std::byte* view() const { return view_; }      // the application's view
  std::byte* master() const { return master_; }  // read-write, registered with UCX
  std::size_t size() const { return size_; }
  int fd() const { return fd_; }
  bool contains(const void* address) const {
    auto* at = static_cast<const std::byte*>(address);
    return at >= view_ && at < view_ + size_;
  }

 private:
  void release() noexcept;

  int fd_ = -1;
  std::size_t size_ = 0;
  std::byte* view_ = nullptr;
  std::byte* master_ = nullptr;
};

}  // namespace mpidsm::detail
