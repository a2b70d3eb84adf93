// The DSM region's memory: one shared allocation seen through two mappings.
// (Without a shared-memory transport UCX allocates private memory; then a
// memfd mapped twice takes its place, the master mapping registered.)
// The master view is memory UCX allocated (shared memory on one node), so
// peers reach it with one-sided operations or, on the same node, plain
// loads and stores through ucp_rkey_ptr, without this rank's CPU. The
// application view is a second mapping of the same pages (mremap of size 0)
// at the same virtual address on every rank; it carries the per-page
// protection that drives the protocol, so remote accesses never fault.
// On each rank the page at a page's offset is the master copy when the rank
// is its home and the cached copy otherwise; untouched pages take no memory.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <string>

#include "mpidsm/transport.hpp"

namespace mpidsm::detail {

class DsmRegion {
 public:
  // Collective: agrees on an address free on every rank (Errc::no_memory
  // naming the size when none is found), lets the transport allocate the
  // master view and maps the application view there, PROT_NONE.
  DsmRegion(MPI_Comm comm, Transport& transport, std::size_t size);
  ~DsmRegion();
  DsmRegion(const DsmRegion&) = delete;
  DsmRegion& operator=(const DsmRegion&) = delete;

  std::byte* view() const { return view_; }      // the application's view
  std::byte* master() const { return master_; }  // read-write, registered with UCX
  const MemoryRegion& master_region() const { return master_region_; }
  std::size_t size() const { return size_; }
  // Drops the memory of [offset, offset+bytes) of the region so it reads as zero again.
  void discard(std::size_t offset, std::size_t bytes);
  bool contains(const void* address) const {
    auto* at = static_cast<const std::byte*>(address);
    return at >= view_ && at < view_ + size_;
  }

 private:
  void release() noexcept;
  std::string map_memfd();  // the fallback; returns what failed, or ""

  Transport& transport_;
  MemoryRegion master_region_;
  int fd_ = -1;  // the memfd fallback only
  std::size_t size_ = 0;
  std::byte* view_ = nullptr;
  std::byte* master_ = nullptr;
};

}  // namespace mpidsm::detail
