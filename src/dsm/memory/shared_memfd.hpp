// Memory every rank creates collectively as a memfd: mapped read-write here,
// registered with UCX (so every peer reaches it with UCX operations) and, on
// request, mapped by the peers on this node too (through /proc/<pid>/fd), so
// they reach it with loads, stores and CPU atomics.
//
// Why a memfd rather than memory UCX allocates: a memfd's pages exist only
// once written, in every mapping of it, so the DSM's region and its per-page
// and per-lock tables cost memory for the pages and locks used, not for their
// size (UCX's POSIX allocator writes the whole file at allocation, and memory
// it allocates must be zeroed by hand: a 16 TiB region's tables would need
// tens of GiB per rank up front). Dropping a range (discard) gives its memory
// back to the kernel in every mapping at once.
//
// The price: UCX's shared-memory transports perform atomics only on memory
// they allocated, so a same-node peer's UCX atomic on a memfd is emulated in
// the target's progress; users of this class therefore use CPU atomics
// wherever every rank maps every other (the common one-node case).
#pragma once

#include <mpi.h>

#include <cstddef>
#include <string>
#include <vector>

#include "mpidsm/transport.hpp"

namespace mpidsm::detail {

// The peers whose memory this rank may map: those UCX reaches through shared
// memory (so ranks on other nodes, or in other IPC namespaces, are never
// mapped), and none when direct access is off. Found once per Dsm, with one
// probe allocation, for all of its shared memory.
class MappablePeers {
 public:
  // Collective when `direct_access`.
  MappablePeers(Transport& transport, bool direct_access);
  bool enabled() const { return !same_node_.empty(); }
  bool includes(int peer) const { return enabled() && same_node_[static_cast<std::size_t>(peer)]; }

 private:
  std::vector<bool> same_node_;  // per rank; empty: direct access is off
};

class SharedMemfd {
 public:
  // Collective: `size` bytes on every rank, read as zero, mapped by the
  // `mappable` peers too; `what` names the memory in errors. Failures
  // anywhere throw on every rank (Errc::no_memory).
  SharedMemfd(MPI_Comm comm, Transport& transport, std::size_t size, const MappablePeers& mappable,
              const std::string& what);
  ~SharedMemfd();  // collective
  // The transport is gone: forget the registration (the mappings and the
  // memfd are still this process's to undo).
  void abandon_transport() { region_ = MemoryRegion(); }
  SharedMemfd(const SharedMemfd&) = delete;
  SharedMemfd& operator=(const SharedMemfd&) = delete;

  int fd() const { return fd_; }
  std::size_t size() const { return size_; }
  std::byte* local() const { return local_; }  // read-write, registered
  const MemoryRegion& region() const { return region_; }
  // Rank `peer`'s memory mapped here (this rank's own for itself), or
  // nullptr when only UCX reaches it.
  std::byte* peer(int peer) const { return peers_[static_cast<std::size_t>(peer)]; }
  bool every_peer_mapped() const;
  // Drops [offset, offset+bytes) (page-aligned) so that it reads as zero
  // again, in every mapping, and frees its memory.
  void discard(std::size_t offset, std::size_t bytes);

 private:
  std::string create();  // returns what failed, or ""
  void map_peers(MPI_Comm comm, int rank, const MappablePeers& mappable);
  void release() noexcept;

  Transport& transport_;
  MemoryRegion region_;
  int fd_ = -1;
  std::size_t size_ = 0;
  std::byte* local_ = nullptr;
  std::vector<std::byte*> peers_;  // per rank; owned mappings except this rank's
};

}  // namespace mpidsm::detail
