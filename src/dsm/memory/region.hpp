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

#include "mpidsm/transport.hpp"
#include "shared_memfd.hpp"

namespace mpidsm::detail {

class DsmRegion {
 public:
  // Collective: agrees on an address free on every rank (Errc::no_memory
  // naming the size when none is found), maps both views and registers the
  // master; maps the `mappable` peers' masters too.
  DsmRegion(MPI_Comm comm, Transport& transport, std::size_t size, const MappablePeers& mappable);
  ~DsmRegion() = default;  // collective (the master's deregistration)
  // The transport is gone: forget the registration (the mappings and the
  // memfd are still this process's to undo).
  void abandon_transport() { master_.abandon_transport(); }
  DsmRegion(const DsmRegion&) = delete;
  DsmRegion& operator=(const DsmRegion&) = delete;

  std::byte* view() const { return view_.at; }           // the application's view
  std::byte* master() const { return master_.local(); }  // read-write, registered with UCX
  const MemoryRegion& master_region() const { return master_.region(); }
  // Rank `peer`'s master mapped here (this rank's own for itself), or
  // nullptr when only UCX reaches it.
  std::byte* peer_master(int peer) const { return master_.peer(peer); }
  bool every_peer_mapped() const { return master_.every_peer_mapped(); }
  std::size_t size() const { return view_.size; }
  // Drops the memory of [offset, offset+bytes) so it reads as zero again, for
  // every rank mapping it.
  void discard(std::size_t offset, std::size_t bytes) { master_.discard(offset, bytes); }
  bool contains(const void* address) const {
    auto* at = static_cast<const std::byte*>(address);
    return at >= view_.at && at < view_.at + view_.size;
  }

 private:
  // The view's address range, reserved at the same address on every rank
  // (collective), then the memfd mapped over it; unmapped at destruction.
  struct View {
    View(MPI_Comm comm, std::size_t size);
    ~View();
    View(const View&) = delete;
    View& operator=(const View&) = delete;
    std::byte* at = nullptr;
    std::size_t size = 0;
  };
  std::string map_view();  // returns what failed, or ""

  View view_;
  SharedMemfd master_;
};

}  // namespace mpidsm::detail
