// The DSM region's memory: one memfd seen through two mappings on each rank.
// The application view sits at the same virtual address on every rank and
// carries the per-page protection that drives the protocol; the master view
// is always readable and writable, registered with UCX, so remote accesses
// and the engine's own copies never fault. On each rank the page at a page's
// offset is the master copy when the rank is its home and the cached copy
// otherwise; untouched pages take no memory.
//
// Peers on the same node (those UCX itself reaches through shared memory)
// also map each other's memfd (through /proc/<pid>/fd), so misses and diffs
// between them are plain copies, without UCX and without the home's CPU.
//
// Why not a second mapping of memory UCX allocated: SysV memory never merges
// its mappings again once mprotect split them (the view would run out of
// them), and UCX's POSIX allocator writes the whole file at allocation.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <string>
#include <vector>

#include "mpidsm/transport.hpp"

namespace mpidsm::detail {

class DsmRegion {
 public:
  // Collective: agrees on an address free on every rank (Errc::no_memory
  // naming the size when none is found), maps both views and registers the
  // master; with `direct_access`, maps same-node peers' masters too.
  DsmRegion(MPI_Comm comm, Transport& transport, std::size_t size, bool direct_access);
  ~DsmRegion();  // collective
  // The transport is gone: forget the registration (the mappings and the
  // memfd are still this process's to undo).
  void abandon_transport() { master_region_ = MemoryRegion(); }
  DsmRegion(const DsmRegion&) = delete;
  DsmRegion& operator=(const DsmRegion&) = delete;

  std::byte* view() const { return view_; }      // the application's view
  std::byte* master() const { return master_; }  // read-write, registered with UCX
  const MemoryRegion& master_region() const { return master_region_; }
  // Rank `peer`'s master mapped here (this rank's own for itself), or
  // nullptr when only UCX reaches it.
  std::byte* peer_master(int peer) const { return peers_[static_cast<std::size_t>(peer)]; }
  bool every_peer_mapped() const;
  std::size_t size() const { return size_; }
  // Drops the memory of [offset, offset+bytes) so it reads as zero again, for
  // every rank mapping it.
  void discard(std::size_t offset, std::size_t bytes);
  bool contains(const void* address) const {
    auto* at = static_cast<const std::byte*>(address);
    return at >= view_ && at < view_ + size_;
  }

 private:
  std::string map_views();  // returns what failed, or ""
  void map_peers(MPI_Comm comm, int rank);
  void release() noexcept;

  Transport& transport_;
  MemoryRegion master_region_;
  int fd_ = -1;
  std::size_t size_ = 0;
  std::byte* view_ = nullptr;
  std::byte* master_ = nullptr;
  std::vector<std::byte*> peers_;  // per rank; owned mappings except this rank's
};

}  // namespace mpidsm::detail
