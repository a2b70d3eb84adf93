// The PGAS face over the transport: a symmetric heap allocated by UCX (so
// same-node peers map it), offsets agreed by running one allocator in step on
// every rank, and one-sided operations that take the load/store path where a
// peer's heap is mapped and the UCX path elsewhere.
#include "mpidsm/pgas.hpp"

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstring>
#include <deque>
#include <optional>
#include <string>
#include <vector>

#include "common/heap_allocator.hpp"
#include "common/mpi_exchange.hpp"
#include "common/pinned_ranges.hpp"
#include "common/startup_watch.hpp"
#include "put_calls.hpp"
#include "transport/fork_guard.hpp"
#include "transport/node_barrier.hpp"

namespace mpidsm {
namespace {

template <class W>
std::uint64_t cpu_atomic(AtomicOp op, void* address, std::uint64_t operand, std::uint64_t compare) {
  auto* word = static_cast<W*>(address);
  const W value = static_cast<W>(operand);
  switch (op) {
    case AtomicOp::add:
      return __atomic_fetch_add(word, value, __ATOMIC_SEQ_CST);
    case AtomicOp::bit_and:
      return __atomic_fetch_and(word, value, __ATOMIC_SEQ_CST);
    case AtomicOp::bit_or:
      return __atomic_fetch_or(word, value, __ATOMIC_SEQ_CST);
    case AtomicOp::bit_xor:
      return __atomic_fetch_xor(word, value, __ATOMIC_SEQ_CST);
    case AtomicOp::swap:
      return __atomic_exchange_n(word, value, __ATOMIC_SEQ_CST);
    case AtomicOp::compare_swap: {
      W expected = static_cast<W>(compare);
      __atomic_compare_exchange_n(word, &expected, value, false, __ATOMIC_SEQ_CST,
                                  __ATOMIC_SEQ_CST);
      return expected;
    }
  }
  return 0;
}

std::string describe_pointer(const char* operation, int rank) {
  return std::string(operation) + " on rank " + std::to_string(rank);
}

}  // namespace

struct Pgas::Segment {
  MemoryRegion region;
  std::byte* base = nullptr;
  detail::Allocation allocation;
};

struct Pgas::State {
  Runtime& runtime;
  Transport& transport;
  MemoryRegion heap;
  std::byte* local_base = nullptr;
  std::vector<std::byte*> direct_base;  // per rank: where its heap is mapped, or null
  bool direct_atomics = false;          // every rank mapped: CPU atomics are coherent for all
  // Every rank's barrier counters, mapped here when all ranks share a node
  // (node_barrier.hpp), else empty: barriers go through MPI.
  MemoryRegion barrier_words;
  std::vector<std::uint64_t*> barrier_counters;
  std::uint64_t barriers = 0;
  detail::HeapAllocator allocator;
  std::deque<detail::Allocation> allocations;
  std::uint64_t next_generation = 1;
  bool ucx_pending = false;                   // UCX operations issued since the last quiet
  std::optional<detail::PutCalls> put_calls;  // small puts to peers reached through messages
  std::deque<Segment> segments;               // stable: allocations point into them
  // The live allocations by heap offset, for symmetric_address's search:
  // a program may hold thousands (changed only by collective calls).
  std::vector<const detail::Allocation*> by_offset;
  // The allocation symmetric_address found last (any thread may look and set).
  alignas(64) std::atomic<const detail::Allocation*> last_found{nullptr};

  State(Runtime& rt, std::size_t heap_size)
      : runtime(rt), transport(rt.transport()), allocator(heap_size) {}

  // Checks a global address for `bytes` bytes and returns its heap offset.
  // A freed allocation, or one of another Pgas (whose offsets would alias
  // this heap's memory).
  [[noreturn]] void throw_stale(const detail::GlobalAddress& p, const char* operation) const {
    if (p.allocation->owner != this)
      throw Error(Errc::unregistered, transport.rank(),
                  std::string(operation) + ": global pointer into an allocation of another Pgas");
    throw Error(Errc::unregistered, transport.rank(),
                std::string(operation) + ": global pointer into an allocation that was freed");
  }

  std::size_t resolve(const detail::GlobalAddress& p, std::size_t bytes, const char* operation) {
    const int rank = transport.rank();
    if (p.allocation == nullptr)
      throw Error(Errc::invalid_argument, rank,
                  std::string(operation) + ": global pointer is null");
    if (p.allocation->generation != p.generation || p.allocation->owner != this) [[unlikely]]
      throw_stale(p, operation);
    if (p.rank < 0 || p.rank >= transport.size())
      throw Error(Errc::invalid_rank, rank,
                  std::string(operation) + ": rank " + std::to_string(p.rank) +
                      " is outside the communicator of size " + std::to_string(transport.size()));
    if (p.byte > p.allocation->bytes || bytes > p.allocation->bytes - p.byte)
      throw Error(Errc::out_of_range, rank,
                  describe_pointer(operation, p.rank) + ": bytes [" + std::to_string(p.byte) +
                      ", " + std::to_string(p.byte + bytes) + ") are outside the " +
                      std::to_string(p.allocation->bytes) + "-byte allocation");
    return p.allocation->offset + p.byte;
  }

  void index_allocation(const detail::Allocation* allocation) {
    by_offset.insert(std::upper_bound(by_offset.begin(), by_offset.end(), allocation,
                                      [](const detail::Allocation* a, const detail::Allocation* b) {
                                        return a->offset < b->offset;
                                      }),
                     allocation);
  }
  void unindex_allocation(const detail::Allocation* allocation) {
    by_offset.erase(std::find(by_offset.begin(), by_offset.end(), allocation));
  }
  // The live allocation holding heap offset `offset`, or null.
  const detail::Allocation* allocation_at(std::size_t offset) const {
    auto after = std::upper_bound(
        by_offset.begin(), by_offset.end(), offset,
        [](std::size_t at, const detail::Allocation* a) { return at < a->offset; });
    if (after == by_offset.begin()) return nullptr;
    const detail::Allocation* candidate = *(after - 1);
    return offset < candidate->offset + candidate->bytes ? candidate : nullptr;
  }

  // Where this rank's copy of an allocation starts.
  const std::byte* start_of(const detail::Allocation& allocation) const {
    return allocation.segment ? segments[allocation.segment - 1].base
                              : local_base + allocation.offset;
  }

  // The segment a checked address lies in, or null for the heap.
  Segment* segment_of(const detail::GlobalAddress& p) {
    return p.allocation->segment ? &segments[p.allocation->segment - 1] : nullptr;
  }
};

namespace {

// Every rank on a node allocates a heap there: together they must fit the
// node's memory, or filling them ends in the kernel's OOM killer (a heap is
// committed only as it is touched, so nothing fails at allocation).
void check_heap_fits_node(Runtime& runtime, std::size_t heap_size) {
  const auto local_ranks = static_cast<std::size_t>(runtime.transport().ranks_on_node());
  const auto memory = static_cast<std::size_t>(sysconf(_SC_PHYS_PAGES)) *
                      static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  std::optional<Error> failure;
  std::size_t total = 0;
  if (__builtin_mul_overflow(heap_size, local_ranks, &total) || total > memory)
    failure.emplace(Errc::config, runtime.rank(),
                    "MPIDSM_HEAP_SIZE=" + std::to_string(heap_size) + " bytes for each of the " +
                        std::to_string(local_ranks) + " ranks on this node exceeds its " +
                        std::to_string(memory) + " bytes of memory; lower MPIDSM_HEAP_SIZE");
  detail::throw_if_any_failed(runtime.comm(), runtime.rank(), failure, "Pgas");
}

// Rounds of a dissemination barrier: enough for 2^64 ranks.
constexpr std::size_t kBarrierRounds = 64;

}  // namespace

Pgas::Pgas(Runtime& runtime) {
  detail::startup_point("pgas-start");
  const Config& config = runtime.config();
  rank_ = runtime.rank();
  size_ = runtime.size();
  check_heap_fits_node(runtime, config.heap_size);
  alive_ = runtime.lifetime();
  state_ = std::make_unique<State>(runtime, config.heap_size);
  State& s = *state_;
  try {
    s.heap = s.transport.allocate(config.heap_size);
  } catch (const Error& e) {
    throw Error(e.code(), rank_,
                "symmetric heap (MPIDSM_HEAP_SIZE=" + std::to_string(config.heap_size) +
                    "): " + e.message());
  }
  s.local_base = static_cast<std::byte*>(s.heap.local_base());
  s.direct_base.resize(size_);
  for (int r = 0; r < size_; ++r)
    s.direct_base[r] = config.direct_access ? static_cast<std::byte*>(s.heap.mapped(r)) : nullptr;
  s.direct_atomics = s.heap.all_mapped() && config.direct_access;
  s.put_calls.emplace(s.transport, s.local_base, config.heap_size, s.direct_base,
                      config.put_by_call);
  try {
    s.barrier_words = s.transport.allocate(kBarrierRounds * sizeof(std::uint64_t), true);
  } catch (const Error&) {
    s.transport.deregister(s.heap);  // the failure was agreed: every rank is here
    throw;
  }
  if (config.direct_access && s.barrier_words.all_mapped())
    for (int r = 0; r < size_; ++r)
      s.barrier_counters.push_back(static_cast<std::uint64_t*>(s.barrier_words.mapped(r)));
}

// After Runtime::finalize UCX has released the heap with everything else:
// nothing is left to do. After MPI_Finalize the heap is released locally.
Pgas::~Pgas() {
  if (!state_) return;
  if (alive_.expired()) {
    state_->put_calls->abandon_transport();
    return;
  }
  try {
    quiet();
    for (Segment& segment : state_->segments) state_->transport.deregister(segment.region);
    state_->transport.deregister(state_->heap);
    state_->transport.deregister(state_->barrier_words);
  } catch (const Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
  }
}

Runtime& Pgas::runtime() const {
  return live("runtime").runtime;
}

std::size_t Pgas::heap_capacity() const {
  return state_->allocator.capacity();
}
std::size_t Pgas::heap_used() const {
  return state_->allocator.used();
}
bool Pgas::direct(int rank) const {
  return rank >= 0 && rank < size_ && state_->direct_base[rank] != nullptr;
}

const detail::Allocation* Pgas::allocate_bytes(std::size_t bytes, std::uint64_t& generation) {
  State& s = live("allocate");
  detail::require_mpi_callable(rank_, "Pgas::allocate");
  MPI_Comm comm = s.runtime.comm();
  // Every rank must ask for the same size, or the heap stops being symmetric.
  const long long mine[] = {static_cast<long long>(bytes)};
  const detail::ValueRange sizes = detail::value_range(comm, rank_, mine, "Pgas::allocate");
  if (!sizes.uniform())
    throw Error(Errc::collective_mismatch, rank_,
                "allocate: ranks asked for different sizes (smallest " +
                    std::to_string(sizes.low[0]) + " bytes, largest " +
                    std::to_string(sizes.high[0]) + ", this rank " + std::to_string(bytes) +
                    "); symmetric allocations must match on every rank");
  if (bytes == 0) throw Error(Errc::invalid_argument, rank_, "allocate: size is 0");
  std::optional<std::size_t> offset = s.allocator.allocate(bytes);
  if (!offset)
    throw Error(Errc::no_memory, rank_,
                "allocate: " + std::to_string(bytes) + " bytes do not fit the symmetric heap (" +
                    "MPIDSM_HEAP_SIZE=" + std::to_string(s.allocator.capacity()) + " bytes, " +
                    std::to_string(s.allocator.used()) + " used, largest free block " +
                    std::to_string(s.allocator.largest_free()) + ")");
  detail::Allocation* record = nullptr;
  for (auto& slot : s.allocations)
    if (slot.generation == 0) record = &slot;
  if (!record) record = &s.allocations.emplace_back();
  *record = {*offset, bytes, s.next_generation++, &s};
  s.index_allocation(record);
  generation = record->generation;
  return record;
}

void Pgas::free_at(const void* local) {
  const State& s = live("free");
  const auto* at = static_cast<const std::byte*>(local);
  if (at >= s.local_base)
    if (const detail::Allocation* allocation =
            s.allocation_at(static_cast<std::size_t>(at - s.local_base));
        allocation && s.local_base + allocation->offset == at)
      return free_bytes(allocation, allocation->generation);
  free_bytes(nullptr, 0, local);  // fails on every rank, naming the address
}

void Pgas::free_bytes(const detail::Allocation* allocation, std::uint64_t generation,
                      const void* local) {
  State& s = live("free");
  detail::require_mpi_callable(rank_, "Pgas::free");
  MPI_Comm comm = s.runtime.comm();
  std::optional<Error> failure;
  if (!allocation || allocation->generation != generation)
    failure.emplace(Errc::unregistered, rank_,
                    allocation ? "Pgas::free: the allocation was already freed"
                    : local    ? "Pgas::free: no live allocation of this Pgas starts at " +
                                  detail::describe_address(local)
                            : "Pgas::free: the array holds no allocation: it was freed already "
                              "(a free empties it), or never allocated");
  else if (allocation->owner != &s)
    failure.emplace(Errc::unregistered, rank_,
                    "Pgas::free: the array was allocated by another Pgas");
  detail::throw_if_any_failed(comm, rank_, failure, "Pgas::free");
  const long long mine[] = {static_cast<long long>(allocation->offset)};
  const detail::ValueRange offsets = detail::value_range(comm, rank_, mine, "Pgas::free");
  if (!offsets.uniform())
    throw Error(Errc::collective_mismatch, rank_,
                "Pgas::free: ranks freed different allocations (heap offsets " +
                    std::to_string(offsets.low[0]) + " to " + std::to_string(offsets.high[0]) +
                    ")");
  barrier();  // nobody still reads or writes the allocation
  s.allocator.free(allocation->offset);
  s.unindex_allocation(allocation);
  const_cast<detail::Allocation*>(allocation)->generation = 0;
}

void* Pgas::local_address(const detail::Allocation& allocation) const {
  return state_->local_base + allocation.offset;
}

detail::GlobalAddress Pgas::symmetric_address(const void* local, int rank,
                                              const char* operation) const {
  State& s = live(operation);
  const auto* at = static_cast<const std::byte*>(local);
  // Programs address one object many times in a row: the last one found first.
  if (const detail::Allocation* last = s.last_found.load(std::memory_order_relaxed);
      last && last->generation != 0) {
    const std::byte* start = s.start_of(*last);
    if (at >= start && at < start + last->bytes)
      return {last, last->generation, rank, static_cast<std::size_t>(at - start)};
  }
  auto found = [&](const detail::Allocation& allocation) -> detail::GlobalAddress {
    s.last_found.store(&allocation, std::memory_order_relaxed);
    return {&allocation, allocation.generation, rank,
            static_cast<std::size_t>(at - s.start_of(allocation))};
  };
  if (at >= s.local_base)
    if (const detail::Allocation* allocation =
            s.allocation_at(static_cast<std::size_t>(at - s.local_base)))
      return found(*allocation);
  for (const Segment& segment : s.segments)
    if (at >= segment.base && at < segment.base + segment.allocation.bytes)
      return found(segment.allocation);
  throw Error(Errc::unregistered, rank_,
              std::string(operation) + ": address " + detail::describe_address(local) +
                  " is in no live allocation of this rank's symmetric heap");
}

namespace {

// memcpy, with `local` (a buffer of the caller's) pinned while it runs when
// DSM ranges exist. Without them no guard object lives across the copy: its
// flag, reloaded after memcpy's store, cost 14 ns per 8-byte get when the
// destination aliased its stack slot (measured with perf on EPYC).
void copy_pinned(void* to, const void* from, std::size_t bytes, const void* local, bool write) {
  if (detail::pinned_ranges.load(std::memory_order_relaxed) == 0) [[likely]] {
    std::memcpy(to, from, bytes);
    return;
  }
  detail::ScopedPin pin(local, bytes, write);
  std::memcpy(to, from, bytes);
}

}  // namespace

std::byte* Pgas::direct_target(const void* local, std::size_t bytes, int rank,
                               const char* operation) const {
  State& s = live(operation);
  if (rank < 0 || rank >= size_ || !s.direct_base[rank]) return nullptr;
  const detail::Allocation* last = s.last_found.load(std::memory_order_relaxed);
  if (!last || last->generation == 0 || last->segment) return nullptr;
  const auto* at = static_cast<const std::byte*>(local);
  const std::byte* start = s.local_base + last->offset;
  if (at < start || at > start + last->bytes || bytes > last->bytes - std::size_t(at - start))
    return nullptr;
  return s.direct_base[rank] + (at - s.local_base);
}

void Pgas::put_to(void* dest, const void* source, std::size_t bytes, int rank, bool nbi) {
  if (std::byte* to = direct_target(dest, bytes, rank, "put"); to && source) [[likely]] {
    copy_pinned(to, source, bytes, source, false);
    return;
  }
  const char* operation = nbi ? "put_nbi" : "put";
  put_bytes(symmetric_address(dest, rank, operation), source, bytes,
            nbi ? Completion::at_quiet : Completion::request, operation)
      .wait();
}

void Pgas::get_from(void* dest, const void* source, std::size_t bytes, int rank, bool nbi) {
  if (const std::byte* from = direct_target(source, bytes, rank, "get"); from && dest) [[likely]] {
    copy_pinned(dest, from, bytes, dest, true);
    return;
  }
  const char* operation = nbi ? "get_nbi" : "get";
  get_bytes(dest, symmetric_address(source, rank, operation), bytes,
            nbi ? Completion::at_quiet : Completion::request, operation)
      .wait();
}

std::uint64_t Pgas::atomic_at(AtomicOp op, const void* word, std::size_t width, int rank,
                              std::uint64_t operand, std::uint64_t compare, bool fetch) {
  if (state_ && state_->direct_atomics && (width == 4 || width == 8) &&
      reinterpret_cast<std::uintptr_t>(word) % width == 0)
    if (std::byte* at = direct_target(word, width, rank, "atomic")) [[likely]]
      return width == 4 ? cpu_atomic<std::uint32_t>(op, at, operand, compare)
                        : cpu_atomic<std::uint64_t>(op, at, operand, compare);
  return atomic_bytes(op, symmetric_address(word, rank, fetch ? "atomic fetch" : "atomic"), width,
                      operand, compare, fetch);
}

Request Pgas::put_bytes(const detail::GlobalAddress& dst, const void* src, std::size_t bytes,
                        Completion completion, const char* operation) {
  State& s = live(operation);
  const std::size_t offset = s.resolve(dst, bytes, operation);
  if (bytes == 0) return Request();
  check_local(src, bytes, operation, "source");
  if (Segment* segment = s.segment_of(dst)) [[unlikely]]
    return segment_transfer(*segment, dst.rank, offset, const_cast<void*>(src), bytes, true,
                            completion);
  if (std::byte* base = s.direct_base[dst.rank]) {
    // The same checks as UCX's path (a DSM buffer must lie in an allocation).
    copy_pinned(base + offset, src, bytes, src, false);
    return Request();
  }
  s.ucx_pending = true;  // remote completion waits for quiet() either way
  if (completion == Completion::at_quiet && s.put_calls->gathers(bytes)) {
    detail::ScopedPin pin(src, bytes, false);
    s.put_calls->gather(dst.rank, offset, src, bytes);  // copied: src is free again
    return Request();
  }
  if (s.put_calls->takes(bytes)) {
    detail::ScopedPin pin(src, bytes, false);
    s.put_calls->put(dst.rank, offset, src, bytes);  // src is free again: complete locally
    return Request();
  }
  if (s.put_calls->lands(bytes)) {
    if (completion == Completion::request) return s.put_calls->land(dst.rank, offset, src, bytes);
    s.put_calls->land_nbi(dst.rank, offset, src, bytes);
    return Request();
  }
  s.put_calls->send(dst.rank);  // gathered puts first: they were issued first
  if (completion == Completion::request)
    return s.transport.put_nb(dst.rank, s.heap, offset, src, bytes);
  s.transport.put_nbi(dst.rank, s.heap, offset, src, bytes);
  return Request();
}

Request Pgas::get_bytes(void* dst, const detail::GlobalAddress& src, std::size_t bytes,
                        Completion completion, const char* operation) {
  State& s = live(operation);
  const std::size_t offset = s.resolve(src, bytes, operation);
  if (bytes == 0) return Request();
  check_local(dst, bytes, operation, "destination");
  if (Segment* segment = s.segment_of(src)) [[unlikely]]
    return segment_transfer(*segment, src.rank, offset, dst, bytes, false, completion);
  if (std::byte* base = s.direct_base[src.rank]) {
    copy_pinned(dst, base + offset, bytes, dst, true);
    return Request();
  }
  s.put_calls->send(src.rank);  // a get sees the puts issued before it
  if (completion == Completion::request)
    return s.transport.get_nb(src.rank, s.heap, offset, dst, bytes);
  s.ucx_pending = true;
  s.transport.get_nbi(src.rank, s.heap, offset, dst, bytes);
  return Request();
}

void Pgas::strided(bool is_put, const detail::GlobalAddress& remote, void* local,
                   std::size_t element, std::ptrdiff_t remote_stride, std::ptrdiff_t local_stride,
                   std::size_t block, std::size_t blocks) {
  const char* operation = is_put ? "iput" : "iget";
  if (blocks == 0 || block == 0) return;
  if (remote_stride < 0 || local_stride < 0 ||
      (blocks > 1 && (static_cast<std::size_t>(remote_stride) < block ||
                      static_cast<std::size_t>(local_stride) < block)))
    throw Error(Errc::invalid_argument, rank_,
                std::string(operation) + ": strides (" + std::to_string(remote_stride) + ", " +
                    std::to_string(local_stride) + ") must be at least the block length " +
                    std::to_string(block));
  // Check the whole footprint once (remote and local: a product that wraps
  // would land every block on the first), then move block by block.
  auto footprint = [&](std::ptrdiff_t stride, const char* side) {
    std::size_t elements = 0, bytes = 0;
    if (__builtin_mul_overflow(static_cast<std::size_t>(stride), blocks - 1, &elements) ||
        __builtin_add_overflow(elements, block, &elements) ||
        __builtin_mul_overflow(elements, element, &bytes))
      throw Error(Errc::out_of_range, rank_,
                  std::string(operation) + ": " + std::to_string(blocks) + " blocks at " + side +
                      " stride " + std::to_string(stride) + " overflow the address space");
    return bytes;
  };
  footprint(local_stride, "local");
  live(operation).resolve(remote, footprint(remote_stride, "remote"), operation);
  auto* bytes = static_cast<std::byte*>(local);
  detail::GlobalAddress at = remote;
  for (std::size_t i = 0; i < blocks; ++i) {
    at.byte = remote.byte + i * static_cast<std::size_t>(remote_stride) * element;
    std::byte* here = bytes + i * static_cast<std::size_t>(local_stride) * element;
    if (is_put)
      put_bytes(at, here, block * element, Completion::at_quiet, operation);
    else
      get_bytes(here, at, block * element, Completion::at_quiet, operation);
  }
  // Blocking semantics: the whole transfer is complete at the target.
  if (state_->ucx_pending) {
    state_->put_calls->send(remote.rank);
    state_->transport.flush(remote.rank);
  }
}

void Pgas::add_symmetric_segment(void* base, std::size_t bytes) {
  State& s = live("add_symmetric_segment");
  detail::require_mpi_callable(rank_, "Pgas::add_symmetric_segment");
  const long long mine[] = {static_cast<long long>(bytes)};
  const detail::ValueRange sizes =
      detail::value_range(s.runtime.comm(), rank_, mine, "Pgas::add_symmetric_segment");
  if (!sizes.uniform())
    throw Error(Errc::collective_mismatch, rank_,
                "add_symmetric_segment: ranks passed different sizes (smallest " +
                    std::to_string(sizes.low[0]) + " bytes, largest " +
                    std::to_string(sizes.high[0]) + ", this rank " + std::to_string(bytes) +
                    "): is every rank running the same executable?");
  Segment& segment = s.segments.emplace_back();
  try {
    segment.region = s.transport.register_memory(base, bytes);
  } catch (...) {
    s.segments.pop_back();  // the failure was agreed: every rank is here
    throw;
  }
  segment.base = static_cast<std::byte*>(base);
  segment.allocation = {0, bytes, s.next_generation++, &s, s.segments.size()};
}

Request Pgas::segment_transfer(Segment& segment, int rank, std::size_t offset, void* local,
                               std::size_t bytes, bool is_put, Completion completion) {
  State& s = *state_;
  if (rank == rank_) {  // this rank's own copy: no transport
    detail::ScopedPin pin(local, bytes, !is_put);
    if (is_put)
      std::memmove(segment.base + offset, local, bytes);
    else
      std::memmove(local, segment.base + offset, bytes);
    return Request();
  }
  s.put_calls->send(rank);  // ordered after the gathered puts issued before it
  s.ucx_pending = true;
  if (completion == Completion::request)
    return is_put ? s.transport.put_nb(rank, segment.region, offset, local, bytes)
                  : s.transport.get_nb(rank, segment.region, offset, local, bytes);
  if (is_put)
    s.transport.put_nbi(rank, segment.region, offset, local, bytes);
  else
    s.transport.get_nbi(rank, segment.region, offset, local, bytes);
  return Request();
}

void Pgas::fence() {
  State& s = live("fence");
  std::atomic_thread_fence(std::memory_order_release);
  if (!s.ucx_pending) return;
  s.put_calls->wait_all_landed();
  s.transport.fence();
}

void Pgas::quiet() {
  State& s = live("quiet");
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (!s.ucx_pending) return;
  s.put_calls->send_all();
  s.transport.flush_all();
  s.put_calls->forget_landed();
  s.ucx_pending = false;
}

Pgas::State& Pgas::live(const char* operation) const {
  if (detail::forked_child.load(std::memory_order_relaxed)) [[unlikely]]
    detail::refuse_in_forked_child(rank_, ("Pgas::" + std::string(operation)).c_str());
  if (alive_.expired()) [[unlikely]]
    throw Error(Errc::not_initialized, rank_,
                std::string("Pgas::") + operation + ": the Pgas's Runtime was finalized");
  return *state_;
}

void Pgas::barrier() {
  quiet();
  State& s = live("barrier");
  detail::require_mpi_callable(rank_, "Pgas::barrier");
  // Every wait checks that every peer lives: a blocking MPI_Barrier would
  // wait for ever for a dead one.
  if (!s.barrier_counters.empty()) {
    detail::dissemination_barrier(
        s.transport, ++s.barriers,
        [&](int rank, std::size_t round) -> std::uint64_t& {
          return s.barrier_counters[static_cast<std::size_t>(rank)][round];
        },
        "Pgas::barrier");
    return;
  }
  // The transport's wait drives UCX meanwhile (faster than waking the
  // progress thread for every remote operation).
  detail::barrier(s.runtime.comm(), rank_, "Pgas::barrier");
}

std::uint64_t Pgas::atomic_bytes(AtomicOp op, const detail::GlobalAddress& p, std::size_t width,
                                 std::uint64_t operand, std::uint64_t compare, bool fetch) {
  State& s = live("atomic");
  const char* operation = fetch ? "atomic fetch" : "atomic";
  const std::size_t offset = s.resolve(p, width, operation);
  if (offset % width != 0)
    throw Error(Errc::invalid_argument, rank_,
                describe_pointer(operation, p.rank) + ": byte " + std::to_string(p.byte) +
                    " of the allocation is not aligned to the " + std::to_string(width) +
                    "-byte word");
  const Segment* segment = s.segment_of(p);
  const MemoryRegion& region = segment ? segment->region : s.heap;
  if (s.direct_atomics && !segment) {
    void* word = s.direct_base[p.rank] + offset;
    return width == 4 ? cpu_atomic<std::uint32_t>(op, word, operand, compare)
                      : cpu_atomic<std::uint64_t>(op, word, operand, compare);
  }
  s.put_calls->send(p.rank);  // ordered after the puts issued before it
  if (!fetch) {
    s.ucx_pending = true;
    if (width == 4)
      s.transport.atomic_post<std::uint32_t>(op, p.rank, region, offset,
                                             static_cast<std::uint32_t>(operand));
    else
      s.transport.atomic_post<std::uint64_t>(op, p.rank, region, offset, operand);
    return 0;
  }
  if (width == 4)
    return s.transport.atomic_fetch<std::uint32_t>(op, p.rank, region, offset,
                                                   static_cast<std::uint32_t>(operand),
                                                   static_cast<std::uint32_t>(compare));
  return s.transport.atomic_fetch<std::uint64_t>(op, p.rank, region, offset, operand, compare);
}

void Pgas::put_signal_bytes(const detail::GlobalAddress& dst, const void* src, std::size_t bytes,
                            const detail::GlobalAddress& signal, std::uint64_t value, SignalOp op,
                            Completion completion) {
  State& s = live("put_signal");
  if (op != SignalOp::set && op != SignalOp::add)
    throw Error(Errc::invalid_argument, rank_,
                "put_signal: signal operation " + std::to_string(static_cast<int>(op)) +
                    " is neither SignalOp::set nor SignalOp::add");
  const std::size_t signal_offset = s.resolve(signal, sizeof(std::uint64_t), "put_signal");
  if (signal.rank != dst.rank)
    throw Error(Errc::invalid_argument, rank_,
                "put_signal: data goes to rank " + std::to_string(dst.rank) +
                    " but the signal word is on rank " + std::to_string(signal.rank));
  if (signal_offset % sizeof(std::uint64_t) != 0)
    throw Error(Errc::invalid_argument, rank_, "put_signal: signal word is not 8-byte aligned");
  const bool in_heap = !dst.allocation->segment && !signal.allocation->segment;
  if (in_heap && !s.direct_base[dst.rank] && s.put_calls->takes(bytes)) {
    const std::size_t offset = s.resolve(dst, bytes, "put_signal");
    check_local(src, bytes, "put_signal", "source");
    s.ucx_pending = true;
    detail::ScopedPin pin(src, bytes, false);
    s.put_calls->put_signal(dst.rank, offset, src, bytes, signal_offset, value, op);
    return;
  }
  // put_signal_nbi leaves the data's completion to quiet(); the fence
  // still orders it before the signal. Only a swap sets a word, and UCX
  // has it only as a fetching atomic: a set waits for it.
  put_bytes(dst, src, bytes, completion, "put_signal").wait();
  // Release ordering: the data lands before the signal changes.
  fence();
  const AtomicOp signal_op = op == SignalOp::set ? AtomicOp::swap : AtomicOp::add;
  atomic_bytes(signal_op, signal, sizeof(std::uint64_t), value, 0, op == SignalOp::set);
}

void Pgas::zero_before_use(void* local, std::size_t bytes) {
  std::memset(local, 0, bytes);
  barrier();  // no rank's put lands before every rank has zeroed its copy
}

void* Pgas::direct_address(const detail::GlobalAddress& p, std::size_t bytes,
                           const char* operation) {
  State& s = live(operation);
  const std::size_t offset = s.resolve(p, bytes, operation);
  // This rank's own data is always here, even when MPIDSM_DIRECT_ACCESS=off
  // sends its operations through UCX.
  if (const Segment* segment = s.segment_of(p))
    return p.rank == rank_ ? segment->base + offset : nullptr;
  std::byte* base = p.rank == rank_ ? s.local_base : s.direct_base[p.rank];
  return base ? base + offset : nullptr;
}

void Pgas::check_waits(const void* words, std::size_t count, std::size_t width, Compare cmp,
                       const char* operation) const {
  if (count == 0)
    throw Error(Errc::invalid_argument, rank_,
                std::string(operation) + ": an empty array of words (count 0)");
  check_wait(words, width, cmp, operation);
  check_wait(static_cast<const std::byte*>(words) + (count - 1) * width, width, cmp, operation);
}

void Pgas::check_values(const void* values, const char* operation) const {
  if (values == nullptr)
    throw Error(Errc::invalid_argument, rank_,
                std::string(operation) + ": the array of values to compare with is null");
}

void Pgas::check_local(const void* buffer, std::size_t bytes, const char* operation,
                       const char* role) const {
  if (buffer == nullptr) [[unlikely]]
    throw Error(Errc::invalid_argument, rank_,
                std::string(operation) + ": " + role + " buffer is null but size is " +
                    std::to_string(bytes));
}

void Pgas::check_wait(const void* word, std::size_t width, Compare cmp,
                      const char* operation) const {
  if (static_cast<unsigned>(cmp) > static_cast<unsigned>(Compare::le))
    throw Error(Errc::invalid_argument, rank_,
                std::string(operation) + ": comparison " + std::to_string(static_cast<int>(cmp)) +
                    " is not one of Compare's values");
  // A word past an allocation's end, or in a freed one, would never change.
  const detail::GlobalAddress at = symmetric_address(word, rank_, operation);
  if (at.byte + width > at.allocation->bytes)
    throw Error(Errc::unregistered, rank_,
                std::string(operation) + ": the " + std::to_string(width) + "-byte word at " +
                    detail::describe_address(word) + " runs past the end of its allocation");
  if (reinterpret_cast<std::uintptr_t>(word) % width != 0)
    throw Error(
        Errc::invalid_argument, rank_,
        std::string(operation) + ": word is not aligned to " + std::to_string(width) + " bytes");
}

// Every wait and test comes here: gathered puts go out, so a rank that
// waits never holds back what its peers may be waiting for.
bool Pgas::progress() {
  State& s = live("progress");
  s.put_calls->send_all();
  return s.transport.progress();
}
void Pgas::yield() {
  State& s = live("wait_until");
  s.transport.check_peers("Pgas::wait_until");
  if (s.transport.yield_when_idle()) sched_yield();
}

}  // namespace mpidsm
