// Words in memory every rank allocates collectively (through UCX, so same-node
// peers map it) and reaches atomically: with CPU atomics when every rank's
// part is mapped, so they never race atomics a NIC performs, and with UCX
// atomics otherwise. The DSM's per-page records (who copied a page, who is
// its home) are built on it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "mpidsm/transport.hpp"

namespace mpidsm::detail {

class SharedWords {
 public:
  // Collective: `bytes` on every rank.
  SharedWords(Transport& transport, std::size_t bytes, bool direct_access);
  ~SharedWords();  // collective
  // The transport is gone: forget the words without deregistering them.
  void abandon_transport() {
    memory_ = MemoryRegion();
    mapped_.clear();
  }
  SharedWords(const SharedWords&) = delete;
  SharedWords& operator=(const SharedWords&) = delete;

  // At `offset` on `rank`; all return the previous value.
  std::uint32_t swap32(int rank, std::size_t offset, std::uint32_t value);
  std::uint32_t compare_swap32(int rank, std::size_t offset, std::uint32_t expected,
                               std::uint32_t desired);
  std::uint32_t load32(int rank, std::size_t offset);
  // Adds with remote completion before it returns.
  void add64(int rank, std::size_t offset, std::uint64_t value);
  // This rank's own word, for local atomic_ref access.
  template <class T>
  T& local(std::size_t offset) const {
    return *reinterpret_cast<T*>(static_cast<std::byte*>(memory_.local_base()) + offset);
  }
  // True when every rank's words are reachable with loads, stores and CPU
  // atomics through mapped(); false when only the UCX operations above work.
  bool direct() const { return !mapped_.empty(); }
  // For batched UCX operations on the words (posted atomics, puts).
  const MemoryRegion& region() const { return memory_; }
  // Another rank's word, when direct().
  template <class T>
  T& mapped(int rank, std::size_t offset) const {
    return *reinterpret_cast<T*>(mapped_[static_cast<std::size_t>(rank)] + offset);
  }

 private:
  Transport& transport_;
  MemoryRegion memory_;
  std::vector<std::byte*> mapped_;  // per rank; empty: through UCX
};

}  // namespace mpidsm::detail
