// Words every rank creates collectively (a memfd: memory only for the words
// written, shared_memfd.hpp) and reaches atomically: with CPU atomics on the
// ranks mapped here, with UCX atomics on the others. The two mix only where
// no NIC performs atomics on the words (a NIC's are not coherent with the
// CPU's): when every rank maps every other, or when every rank reaches the
// ranks it does not map through messages (tcp: the owner's CPU applies UCX's
// atomics). Otherwise every access goes through UCX. The DSM's per-page
// records (who copied a page, who is its home), its lock table and its
// barrier are built on it.
#pragma once

#include <mpi.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "mpidsm/transport.hpp"
#include "shared_memfd.hpp"

namespace mpidsm::detail {

class SharedWords {
 public:
  // Collective: `bytes` on every rank, all zero; `what` names them in errors.
  SharedWords(MPI_Comm comm, Transport& transport, std::size_t bytes, const MappablePeers& mappable,
              const std::string& what);
  // The transport is gone: forget the words without deregistering them.
  void abandon_transport() {
    memory_.abandon_transport();
    cpu_.assign(cpu_.size(), nullptr);
    direct_ = false;
  }

  // At `offset` on `rank`; all return the previous value.
  template <class T>
  T swap(int rank, std::size_t offset, T value) {
    if (!cpu(rank))
      return transport_.atomic_fetch<T>(AtomicOp::swap, rank, region(), offset, value);
    return std::atomic_ref<T>(mapped<T>(rank, offset)).exchange(value);
  }
  template <class T>
  T compare_swap(int rank, std::size_t offset, T expected, T desired) {
    if (!cpu(rank))
      return transport_.atomic_fetch<T>(AtomicOp::compare_swap, rank, region(), offset, desired,
                                        expected);
    std::atomic_ref<T>(mapped<T>(rank, offset)).compare_exchange_strong(expected, desired);
    return expected;  // the previous value either way
  }
  template <class T>
  T fetch_add(int rank, std::size_t offset, T value) {
    if (!cpu(rank)) return transport_.atomic_fetch<T>(AtomicOp::add, rank, region(), offset, value);
    return std::atomic_ref<T>(mapped<T>(rank, offset)).fetch_add(value);
  }
  template <class T>
  T load(int rank, std::size_t offset) {
    return fetch_add<T>(rank, offset, 0);
  }
  // Adds with remote completion before it returns.
  template <class T>
  void add(int rank, std::size_t offset, T value) {
    if (!cpu(rank)) {
      transport_.atomic_post<T>(AtomicOp::add, rank, region(), offset, value);
      transport_.flush(rank);
      return;
    }
    std::atomic_ref<T>(mapped<T>(rank, offset)).fetch_add(value);
  }
  // Copies of plain (not atomic) words: reads complete on return; writes
  // complete at the next flush(rank), in order with those before them.
  void get(int rank, std::size_t offset, void* out, std::size_t bytes) {
    if (!cpu(rank)) return transport_.get(rank, region(), offset, out, bytes);
    std::memcpy(out, &mapped<std::byte>(rank, offset), bytes);
  }
  void get_nbi(int rank, std::size_t offset, void* out, std::size_t bytes) {
    if (!cpu(rank)) return transport_.get_nbi(rank, region(), offset, out, bytes);
    std::memcpy(out, &mapped<std::byte>(rank, offset), bytes);
  }
  void put_nbi(int rank, std::size_t offset, const void* in, std::size_t bytes) {
    if (!cpu(rank)) return transport_.put_nbi(rank, region(), offset, in, bytes);
    std::memcpy(&mapped<std::byte>(rank, offset), in, bytes);
  }
  void flush(int rank) {
    if (!cpu(rank)) transport_.flush(rank);
  }

  // This rank's own word, for local atomic_ref access.
  template <class T>
  T& local(std::size_t offset) const {
    return *reinterpret_cast<T*>(memory_.local() + offset);
  }
  // True when every rank's words are reachable with loads, stores and CPU
  // atomics through mapped(); false when some are reached through UCX.
  bool direct() const { return direct_; }
  // Whether the operations above reach `rank`'s words with the CPU.
  bool cpu(int rank) const { return cpu_[static_cast<std::size_t>(rank)] != nullptr; }
  // Whether `rank`'s words are mapped here (used by the CPU or not).
  bool maps(int rank) const { return memory_.peer(rank) != nullptr; }
  // For batched UCX operations on the words (posted atomics, puts).
  const MemoryRegion& region() const { return memory_.region(); }
  // Another rank's word, when cpu(rank).
  template <class T>
  T& mapped(int rank, std::size_t offset) const {
    return *reinterpret_cast<T*>(cpu_[static_cast<std::size_t>(rank)] + offset);
  }
  // Words [offset, offset+bytes) of this rank read as zero again; whole
  // pages among them give their memory back. Only while no rank uses them.
  void clear_local(std::size_t offset, std::size_t bytes);

 private:
  Transport& transport_;
  SharedMemfd memory_;
  std::vector<std::byte*> cpu_;  // per rank: its words, or nullptr: through UCX
  bool direct_ = false;
};

}  // namespace mpidsm::detail
