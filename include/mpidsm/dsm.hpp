// The coherent DSM face: a shared region at the same virtual address on
// every rank, used with plain loads and stores. Pages live at a home rank
// (chosen by each allocation's placement); other ranks fetch them on a fault
// with a one-sided get, keep a twin on their first write, and at release
// write only the bytes they changed back home with one-sided puts. Home-based
// lazy release consistency with multiple writers, as in JIAJIA, over UCX.
//
// Synchronisation in this version: Dsm::barrier(), a release (diffs home,
// one flush), an exchange of write notices, and an acquire (invalidation of
// the pages other ranks changed). Data written before a barrier by any rank
// is seen by every rank after it; two ranks writing different bytes of one
// page between barriers both survive.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>

#include "mpidsm/placement.hpp"
#include "mpidsm/runtime.hpp"

namespace mpidsm {

struct DsmStats {
  std::uint64_t read_faults = 0;
  std::uint64_t write_faults = 0;
  std::uint64_t pages_fetched = 0;
  std::uint64_t diffs = 0;      // pages whose changes were written home
  std::uint64_t diff_runs = 0;  // puts issued for them
  std::uint64_t diff_bytes = 0;
  std::uint64_t invalidations = 0;
  std::uint64_t barriers = 0;
};

class Dsm {
 public:
  // Collective: reserves MPIDSM_DSM_SIZE bytes at one address on every rank.
  explicit Dsm(Runtime& runtime);
  ~Dsm();  // collective
  Dsm(const Dsm&) = delete;
  Dsm& operator=(const Dsm&) = delete;

  // Collective, same count and placement on every rank; the same pointer on
  // every rank. Memory starts zeroed.
  template <class T>
  T* allocate(std::size_t count, Placement placement = Placement::block()) {
    static_assert(std::is_trivially_copyable_v<T>, "DSM data must be trivially copyable");
    return static_cast<T*>(
        allocate_bytes(array_bytes(count, sizeof(T), runtime_rank(), "Dsm::allocate"), placement));
  }
  // Collective: releases everything, then frees the allocation at `address`.
  void free(void* address);

  // Release, exchange of write notices, acquire.
  void barrier();

  void* base() const;
  std::size_t size() const;
  std::size_t page_size() const;
  // The home rank of the page holding `address` (Errc::unregistered outside
  // any allocation).
  int home_of(const void* address) const;
  DsmStats stats() const;

 private:
  void* allocate_bytes(std::size_t bytes, const Placement& placement);
  int runtime_rank() const;

  class Engine;
  std::unique_ptr<Engine> engine_;
};

}  // namespace mpidsm
