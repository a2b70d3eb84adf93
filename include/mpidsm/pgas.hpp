// The PGAS face: a symmetric heap per runtime, global pointers, one-sided
// put/get (blocking, non-blocking with a handle, implicit non-blocking,
// strided), atomics, put-with-signal, wait_until, fence, quiet and barrier —
// the model of OpenSHMEM, over one MPI communicator.
//
// Completion rules:
//   put, iput            return when the source may be reused (local completion)
//   get, iget            return when the data has arrived
//   put_nb / get_nb      return a Request; its completion is local completion
//   put_nbi / get_nbi    completed by quiet(): then the source may be reused,
//                        the put is visible at the target and the get arrived
//   fence()              operations to one target issued before the fence are
//                        delivered before those issued after it
//   quiet()              every operation issued so far is complete at its target
//   barrier()            quiet() on every rank, then all ranks synchronise
//   put_signal           the data is visible at the target before the signal changes
// Same-node peers are reached with loads, stores and CPU atomics (the heap is
// shared memory UCX allocated), others through UCX; both follow these rules.
#pragma once

#include "mpidsm/language.hpp"

#include <mpi.h>

#include <atomic>
#include <bit>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>

#include "mpidsm/error.hpp"
#include "mpidsm/runtime.hpp"
#include "mpidsm/transport.hpp"

namespace mpidsm {

/// \addtogroup pgas
/// @{

class Pgas;

namespace detail {

/// One collective allocation. Records are kept (and reused) by the Pgas, so a
/// global pointer can always ask whether its allocation is still alive.
struct Allocation {
  std::size_t offset = 0;        ///< in the symmetric heap (0 in a segment)
  std::size_t bytes = 0;         ///< as requested
  std::uint64_t generation = 0;  ///< 0 once freed
  const void* owner = nullptr;   ///< the Pgas whose heap holds it
  std::size_t segment = 0;       ///< 0: the heap; n: the Pgas's n-th added segment
};

/// A global address: an allocation, its generation when the pointer was made,
/// a rank and a byte offset inside the allocation.
struct GlobalAddress {
  const Allocation* allocation = nullptr;
  std::uint64_t generation = 0;
  int rank = no_rank;
  std::size_t byte = 0;
};

}  // namespace detail

/// Points at an element of a symmetric allocation on one rank. Arithmetic is
/// free; bounds, rank and liveness are checked when the pointer is used.
template <class T>
class global_ptr {
 public:
  global_ptr() = default;
  /// The rank whose memory this points into.
  int rank() const noexcept { return address_.rank; }
  /// Element index from the allocation's start.
  std::ptrdiff_t index() const noexcept {
    return static_cast<std::ptrdiff_t>(address_.byte) / static_cast<std::ptrdiff_t>(sizeof(T));
  }
  /// n elements further on the same rank.
  global_ptr operator+(std::ptrdiff_t n) const {
    global_ptr p = *this;
    p.address_.byte += static_cast<std::size_t>(n * static_cast<std::ptrdiff_t>(sizeof(T)));
    return p;
  }
  /// n elements back on the same rank.
  global_ptr operator-(std::ptrdiff_t n) const { return *this + (-n); }
  /// The same element on another rank.
  global_ptr on(int rank) const {
    global_ptr p = *this;
    p.address_.rank = rank;
    return p;
  }
  /// The same bytes viewed as U (like reinterpret_cast; alignment is checked at use).
  template <class U>
  global_ptr<U> as() const {
    return global_ptr<U>(address_);
  }
  /// The allocation, rank and byte offset this names.
  const detail::GlobalAddress& address() const noexcept { return address_; }

 private:
  friend class Pgas;
  template <class U>
  friend class global_ptr;
  template <class U>
  friend class SymmetricArray;
  explicit global_ptr(const detail::GlobalAddress& address) : address_(address) {}
  detail::GlobalAddress address_{};
};

/// The local view and the global pointers of one collective allocation.
template <class T>
class SymmetricArray {
 public:
  SymmetricArray() = default;
  /// Elements per rank.
  std::size_t size() const noexcept { return count_; }
  /// This rank's elements.
  T* local() const noexcept { return local_; }
  /// Element i of this rank's copy.
  T& operator[](std::size_t i) const noexcept { return local_[i]; }
  /// Element i on `rank` (i may equal size(): a one-past-the-end pointer).
  global_ptr<T> at(int rank, std::size_t i = 0) const {
    return global_ptr<T>(detail::GlobalAddress{allocation_, generation_, rank, i * sizeof(T)});
  }

 private:
  friend class Pgas;
  T* local_ = nullptr;
  std::size_t count_ = 0;
  const detail::Allocation* allocation_ = nullptr;
  std::uint64_t generation_ = 0;
};

/// Comparisons for wait_until and test: word `cmp` value.
enum class Compare { eq, ne, gt, ge, lt, le };
/// float and double: OpenSHMEM's extended atomics (fetch, set, swap) take them.
template <class T>
concept AtomicFloat = std::same_as<T, float> || std::same_as<T, double>;
/// The words wait_until and test watch: 16-, 32- and 64-bit integers.
template <class T>
concept WaitWord = std::integral<T> &&(sizeof(T) == 2 || sizeof(T) == 4 || sizeof(T) == 8);
/// What put_signal does to the signal word: store or add the value.
enum class SignalOp { set, add };

/// The PGAS face of a Runtime: a symmetric heap and OpenSHMEM's one-sided operations.
class Pgas {
 public:
  /// Collective over the runtime's communicator: allocates the symmetric heap
  /// (MPIDSM_HEAP_SIZE bytes per rank). The runtime must outlive the Pgas.
  explicit Pgas(Runtime& runtime);
  ~Pgas();  ///< collective
  Pgas(const Pgas&) = delete;
  Pgas& operator=(const Pgas&) = delete;

  /// This rank's number.
  int rank() const noexcept { return rank_; }
  /// Ranks of the runtime.
  int size() const noexcept { return size_; }
  /// The runtime this Pgas belongs to (its communicator numbers the ranks).
  Runtime& runtime() const;
  /// Bytes of symmetric heap per rank (MPIDSM_HEAP_SIZE).
  std::size_t heap_capacity() const;
  /// Bytes of it allocated now.
  std::size_t heap_used() const;

  // --- allocation (collective; every rank must pass the same count) -----------
  /// Collective: `count` elements of T on every rank, 64-byte aligned, uninitialised.
  template <class T>
  SymmetricArray<T> allocate(std::size_t count) {
    static_assert(std::is_trivially_copyable_v<T>, "symmetric data must be trivially copyable");
    static_assert(alignof(T) <= 64, "symmetric allocations are aligned to 64 bytes");
    SymmetricArray<T> array;
    array.allocation_ =
        allocate_bytes(array_bytes(count, sizeof(T), rank_, "allocate"), array.generation_);
    array.local_ = static_cast<T*>(local_address(*array.allocation_));
    array.count_ = count;
    return array;
  }
  /// Collective: as allocate(), with every element zero on every rank
  /// before any rank can reach it (OpenSHMEM's shmem_calloc).
  template <class T>
  SymmetricArray<T> allocate_zeroed(std::size_t count) {
    SymmetricArray<T> array = allocate<T>(count);
    zero_before_use(array.local_, count * sizeof(T));
    return array;
  }
  /// Collective: frees an allocation and empties `array`.
  template <class T>
  void free(SymmetricArray<T>& array) {
    free_bytes(array.allocation_, array.generation_);
    array = SymmetricArray<T>();
  }
  /// Collective: frees the allocation that starts at `local` (this rank's
  /// copy), as free() does; for callers that keep addresses, not arrays.
  void free_at(const void* local);

  // --- put and get -------------------------------------------------------------
  /// Blocking: `count` elements to `dst`, remotely complete on return.
  template <class T>
  void put(global_ptr<T> dst, const T* src, std::size_t count) {
    put_bytes(dst.address(), src, array_bytes(count, sizeof(T), rank_, "put"), Completion::request,
              "put")
        .wait();
  }
  /// Blocking: `count` elements from `src`, arrived on return.
  template <class T>
  void get(T* dst, global_ptr<T> src, std::size_t count) {
    get_bytes(dst, src.address(), array_bytes(count, sizeof(T), rank_, "get"), Completion::request,
              "get")
        .wait();
  }
  /// Non-blocking: `src` may be reused after quiet().
  template <class T>
  void put_nbi(global_ptr<T> dst, const T* src, std::size_t count) {
    put_bytes(dst.address(), src, array_bytes(count, sizeof(T), rank_, "put_nbi"),
              Completion::at_quiet, "put_nbi");
  }
  /// Non-blocking: `dst` may be read after quiet().
  template <class T>
  void get_nbi(T* dst, global_ptr<T> src, std::size_t count) {
    get_bytes(dst, src.address(), array_bytes(count, sizeof(T), rank_, "get_nbi"),
              Completion::at_quiet, "get_nbi");
  }
  /// Non-blocking: the Request completes when `src` may be reused; quiet() for remote completion.
  template <class T>
  Request put_nb(global_ptr<T> dst, const T* src, std::size_t count) {
    return put_bytes(dst.address(), src, array_bytes(count, sizeof(T), rank_, "put_nb"),
                     Completion::request, "put_nb");
  }
  /// Non-blocking: the Request completes when the data has arrived.
  template <class T>
  Request get_nb(T* dst, global_ptr<T> src, std::size_t count) {
    return get_bytes(dst, src.address(), array_bytes(count, sizeof(T), rank_, "get_nb"),
                     Completion::request, "get_nb");
  }
  /// Strided: blocks of `block` elements, `blocks` of them; block i starts at
  /// element i*dst_stride of dst and i*src_stride of src (OpenSHMEM's ibput/ibget).
  template <class T>
  void iput(global_ptr<T> dst, const T* src, std::ptrdiff_t dst_stride, std::ptrdiff_t src_stride,
            std::size_t block, std::size_t blocks) {
    strided(true, dst.address(), const_cast<T*>(src), sizeof(T), dst_stride, src_stride, block,
            blocks);
  }
  /// Strided get: element i of `src` (stride src_stride) into `dst` (stride dst_stride).
  template <class T>
  void iget(T* dst, global_ptr<T> src, std::ptrdiff_t dst_stride, std::ptrdiff_t src_stride,
            std::size_t block, std::size_t blocks) {
    strided(false, src.address(), dst, sizeof(T), src_stride, dst_stride, block, blocks);
  }

  /// Orders: operations issued after it reach each target after those issued before.
  void fence();
  /// Completes every operation issued so far, at its target.
  void quiet();
  /// Collective: quiet() on every rank, then all ranks synchronise.
  void barrier();

  // --- atomics on 32- and 64-bit integers -------------------------------------
  /// Atomically reads *p.
  template <AtomicWord T>
  T atomic_fetch(global_ptr<T> p) {
    return fetch_op(AtomicOp::add, p, T(0));
  }
  /// Atomically stores `value` in *p.
  template <AtomicWord T>
  void atomic_set(global_ptr<T> p, T value) {
    fetch_op(AtomicOp::swap, p, value);
  }
  /// Stores `value` in *p and returns the previous value.
  template <AtomicWord T>
  T atomic_swap(global_ptr<T> p, T value) {
    return fetch_op(AtomicOp::swap, p, value);
  }
  /// Returns the old value; stores desired only if the old value equals expected.
  template <AtomicWord T>
  T atomic_compare_swap(global_ptr<T> p, T expected, T desired) {
    return static_cast<T>(atomic_bytes(AtomicOp::compare_swap, p.address(), sizeof(T),
                                       static_cast<std::uint64_t>(desired),
                                       static_cast<std::uint64_t>(expected), true));
  }
  /// Adds `value` to *p and returns the previous value.
  template <AtomicWord T>
  T atomic_fetch_add(global_ptr<T> p, T value) {
    return fetch_op(AtomicOp::add, p, value);
  }
  /// Adds 1 to *p and returns the previous value.
  template <AtomicWord T>
  T atomic_fetch_inc(global_ptr<T> p) {
    return fetch_op(AtomicOp::add, p, T(1));
  }
  /// ANDs `value` into *p and returns the previous value.
  template <AtomicWord T>
  T atomic_fetch_and(global_ptr<T> p, T value) {
    return fetch_op(AtomicOp::bit_and, p, value);
  }
  /// ORs `value` into *p and returns the previous value.
  template <AtomicWord T>
  T atomic_fetch_or(global_ptr<T> p, T value) {
    return fetch_op(AtomicOp::bit_or, p, value);
  }
  /// XORs `value` into *p and returns the previous value.
  template <AtomicWord T>
  T atomic_fetch_xor(global_ptr<T> p, T value) {
    return fetch_op(AtomicOp::bit_xor, p, value);
  }
  /// Non-fetching: complete at the next quiet.
  template <AtomicWord T>
  void atomic_add(global_ptr<T> p, T value) {
    post_op(AtomicOp::add, p, value);
  }
  /// Adds 1 to *p; complete at the next quiet().
  template <AtomicWord T>
  void atomic_inc(global_ptr<T> p) {
    post_op(AtomicOp::add, p, T(1));
  }
  /// ANDs `value` into *p; complete at the next quiet().
  template <AtomicWord T>
  void atomic_and(global_ptr<T> p, T value) {
    post_op(AtomicOp::bit_and, p, value);
  }
  /// ORs `value` into *p; complete at the next quiet().
  template <AtomicWord T>
  void atomic_or(global_ptr<T> p, T value) {
    post_op(AtomicOp::bit_or, p, value);
  }
  /// XORs `value` into *p; complete at the next quiet().
  template <AtomicWord T>
  void atomic_xor(global_ptr<T> p, T value) {
    post_op(AtomicOp::bit_xor, p, value);
  }

  // --- float and double (OpenSHMEM's extended atomics) -------------------------
  /// Atomically reads *p.
  template <AtomicFloat T>
  T atomic_fetch(global_ptr<T> p) {
    return std::bit_cast<T>(atomic_fetch(p.template as<FloatBits<T>>()));
  }
  /// Atomically stores `value` in *p.
  template <AtomicFloat T>
  void atomic_set(global_ptr<T> p, T value) {
    atomic_set(p.template as<FloatBits<T>>(), std::bit_cast<FloatBits<T>>(value));
  }
  /// Stores `value` in *p and returns the previous value.
  template <AtomicFloat T>
  T atomic_swap(global_ptr<T> p, T value) {
    return std::bit_cast<T>(
        atomic_swap(p.template as<FloatBits<T>>(), std::bit_cast<FloatBits<T>>(value)));
  }

  // --- non-blocking fetching atomics (OpenSHMEM's *_nbi) -----------------------
  // The old value is in *fetch after quiet(). This version completes each
  // before it returns (correct, without overlap yet).
  /// atomic_fetch into *fetch.
  template <class T>
  void atomic_fetch_nbi(T* fetch, global_ptr<T> p) {
    *fetch = atomic_fetch(p);
  }
  /// atomic_swap, the old value into *fetch.
  template <class T>
  void atomic_swap_nbi(T* fetch, global_ptr<T> p, T value) {
    *fetch = atomic_swap(p, value);
  }
  /// atomic_compare_swap, the old value into *fetch.
  template <AtomicWord T>
  void atomic_compare_swap_nbi(T* fetch, global_ptr<T> p, T expected, T desired) {
    *fetch = atomic_compare_swap(p, expected, desired);
  }
  /// atomic_fetch_add, the old value into *fetch.
  template <AtomicWord T>
  void atomic_fetch_add_nbi(T* fetch, global_ptr<T> p, T value) {
    *fetch = atomic_fetch_add(p, value);
  }
  /// atomic_fetch_inc, the old value into *fetch.
  template <AtomicWord T>
  void atomic_fetch_inc_nbi(T* fetch, global_ptr<T> p) {
    *fetch = atomic_fetch_inc(p);
  }
  /// atomic_fetch_and, the old value into *fetch.
  template <AtomicWord T>
  void atomic_fetch_and_nbi(T* fetch, global_ptr<T> p, T value) {
    *fetch = atomic_fetch_and(p, value);
  }
  /// atomic_fetch_or, the old value into *fetch.
  template <AtomicWord T>
  void atomic_fetch_or_nbi(T* fetch, global_ptr<T> p, T value) {
    *fetch = atomic_fetch_or(p, value);
  }
  /// atomic_fetch_xor, the old value into *fetch.
  template <AtomicWord T>
  void atomic_fetch_xor_nbi(T* fetch, global_ptr<T> p, T value) {
    *fetch = atomic_fetch_xor(p, value);
  }

  // --- signals -------------------------------------------------------------------
  /// Puts count elements, then sets or adds to the signal word on the same rank;
  /// the data is visible there before the signal changes. Local completion.
  template <class T>
  void put_signal(global_ptr<T> dst, const T* src, std::size_t count,
                  global_ptr<std::uint64_t> signal, std::uint64_t value, SignalOp op) {
    put_signal_bytes(dst.address(), src, array_bytes(count, sizeof(T), rank_, "put_signal"),
                     signal.address(), value, op);
  }
  /// put_signal without waiting for the data to leave: `src` may be reused
  /// after quiet(); the signal still changes only after the data landed.
  template <class T>
  void put_signal_nbi(global_ptr<T> dst, const T* src, std::size_t count,
                      global_ptr<std::uint64_t> signal, std::uint64_t value, SignalOp op) {
    put_signal_bytes(dst.address(), src, array_bytes(count, sizeof(T), rank_, "put_signal_nbi"),
                     signal.address(), value, op, Completion::at_quiet);
  }
  /// The value of this rank's signal word (OpenSHMEM's shmem_signal_fetch).
  std::uint64_t signal_fetch(const std::uint64_t* signal) {
    check_wait(signal, sizeof *signal, Compare::eq, "signal_fetch");
    return load_acquire(signal);
  }
  /// Waits until *word (a symmetric word of this rank) compares true with value.
  template <WaitWord T>
  T wait_until(const T* word, Compare cmp, T value) {
    check_wait(word, sizeof(T), cmp, "wait_until");
    T seen;
    wait_local([&] { return compare(seen = load_acquire(word), cmp, value); });
    return seen;
  }
  /// Non-blocking wait_until: whether the local word compares true now.
  template <WaitWord T>
  bool test(const T* word, Compare cmp, T value) {
    check_wait(word, sizeof(T), cmp, "test");
    progress();
    return compare(load_acquire(word), cmp, value);
  }

  // --- waits on arrays of words (OpenSHMEM's _all, _any, _some) --------------
  // `words` are `count` symmetric words of this rank; a word whose entry in
  // `status` is nonzero is left out (status may be nullptr: none is). Word i
  // compares with `value`, or in the _vector forms with values[i].
  /// What the _any and _some forms return when every word is left out or none compares true.
  static constexpr std::size_t no_index = static_cast<std::size_t>(-1);
  /// Waits until every word left in compares true with value.
  template <WaitWord T>
  void wait_until_all(const T* words, std::size_t count, const int* status, Compare cmp, T value) {
    wait_all(words, count, status, cmp, &value, 0, "wait_until_all");
  }
  /// Waits until some word left in compares true; returns its index
  /// (no_index when every word is left out).
  template <WaitWord T>
  std::size_t wait_until_any(const T* words, std::size_t count, const int* status, Compare cmp,
                             T value) {
    return wait_any(words, count, status, cmp, &value, 0, "wait_until_any");
  }
  /// Waits until some word left in compares true; writes the indices of
  /// every word that does to `indices` (room for count) and returns how many
  /// (0 when every word is left out).
  template <WaitWord T>
  std::size_t wait_until_some(const T* words, std::size_t count, std::size_t* indices,
                              const int* status, Compare cmp, T value) {
    return wait_some(words, count, indices, status, cmp, &value, 0, "wait_until_some");
  }
  /// wait_until_all, word i against values[i].
  template <WaitWord T>
  void wait_until_all_vector(const T* words, std::size_t count, const int* status, Compare cmp,
                             const T* values) {
    check_values(values, "wait_until_all_vector");
    wait_all(words, count, status, cmp, values, 1, "wait_until_all_vector");
  }
  /// wait_until_any, word i against values[i].
  template <WaitWord T>
  std::size_t wait_until_any_vector(const T* words, std::size_t count, const int* status,
                                    Compare cmp, const T* values) {
    check_values(values, "wait_until_any_vector");
    return wait_any(words, count, status, cmp, values, 1, "wait_until_any_vector");
  }
  /// wait_until_some, word i against values[i].
  template <WaitWord T>
  std::size_t wait_until_some_vector(const T* words, std::size_t count, std::size_t* indices,
                                     const int* status, Compare cmp, const T* values) {
    check_values(values, "wait_until_some_vector");
    return wait_some(words, count, indices, status, cmp, values, 1, "wait_until_some_vector");
  }
  /// Whether every word left in compares true now.
  template <WaitWord T>
  bool test_all(const T* words, std::size_t count, const int* status, Compare cmp, T value) {
    return test_now(words, count, status, cmp, &value, 0, "test_all",
                    [&](auto&&... a) { return test_all_now(a...); });
  }
  /// The index of a word left in that compares true now, or no_index.
  template <WaitWord T>
  std::size_t test_any(const T* words, std::size_t count, const int* status, Compare cmp, T value) {
    return test_now(words, count, status, cmp, &value, 0, "test_any",
                    [&](auto&&... a) { return test_any_now(a...); });
  }
  /// The indices of the words left in that compare true now, into `indices`; how many.
  template <WaitWord T>
  std::size_t test_some(const T* words, std::size_t count, std::size_t* indices, const int* status,
                        Compare cmp, T value) {
    return test_now(words, count, status, cmp, &value, 0, "test_some",
                    [&](auto&&... a) { return test_some_now(indices, a...); });
  }
  /// test_all, word i against values[i].
  template <WaitWord T>
  bool test_all_vector(const T* words, std::size_t count, const int* status, Compare cmp,
                       const T* values) {
    check_values(values, "test_all_vector");
    return test_now(words, count, status, cmp, values, 1, "test_all_vector",
                    [&](auto&&... a) { return test_all_now(a...); });
  }
  /// test_any, word i against values[i].
  template <WaitWord T>
  std::size_t test_any_vector(const T* words, std::size_t count, const int* status, Compare cmp,
                              const T* values) {
    check_values(values, "test_any_vector");
    return test_now(words, count, status, cmp, values, 1, "test_any_vector",
                    [&](auto&&... a) { return test_any_now(a...); });
  }
  /// test_some, word i against values[i].
  template <WaitWord T>
  std::size_t test_some_vector(const T* words, std::size_t count, std::size_t* indices,
                               const int* status, Compare cmp, const T* values) {
    check_values(values, "test_some_vector");
    return test_now(words, count, status, cmp, values, 1, "test_some_vector",
                    [&](auto&&... a) { return test_some_now(indices, a...); });
  }

  /// A pointer through which this rank reaches `p`'s data with loads and
  /// stores (its own heap, or a same-node peer's mapped here), or nullptr
  /// when only put and get reach it (OpenSHMEM's shmem_ptr).
  template <class T>
  T* local_pointer(global_ptr<T> p) {
    return static_cast<T*>(direct_address(p.address(), sizeof(T), "local_pointer"));
  }

  /// OpenSHMEM's symmetric addressing: the object at `local` (in a live
  /// allocation of this rank's heap) as it lives on `rank`. Errc::unregistered
  /// when `local` is in no live allocation; the rank is checked when used.
  template <class T>
  global_ptr<T> global(const T* local, int rank) const {
    return global_ptr<T>(symmetric_address(local, rank, "global"));
  }

  /// Whether `rank`'s heap is reached with loads and stores from here.
  bool direct(int rank) const;

  // --- OpenSHMEM's addressing: data named by this rank's copy -----------------
  // For faces that name remote data as shmem.h does: `dest` (put_to),
  // `source` (get_from) or `word` (atomic_at) lies in this rank's symmetric
  // memory, and the operation reaches the same object on `rank`: one lookup,
  // then the paths and completion rules of put, get and the atomics (nbi:
  // complete at quiet()). Errors as theirs.
  /// `bytes` from `source` to the object at `dest` on `rank`.
  void put_to(void* dest, const void* source, std::size_t bytes, int rank, bool nbi);
  /// `bytes` of the object at `source` on `rank` into `dest`.
  void get_from(void* dest, const void* source, std::size_t bytes, int rank, bool nbi);
  /// An atomic on the 4- or 8-byte word at `word` on `rank`: the old value
  /// when `fetch` (compare: compare_swap's expected value).
  std::uint64_t atomic_at(AtomicOp op, const void* word, std::size_t width, int rank,
                          std::uint64_t operand, std::uint64_t compare, bool fetch);

  /// Collective: [base, base+bytes) on every rank becomes symmetric beside
  /// the heap, one allocation that global() and every operation take, at
  /// the same offsets on every rank: for a program's static data, whose
  /// layout is the same in every process of one executable (OpenSHMEM's
  /// global and static variables). Every rank must pass the same size.
  /// Operations on it go through UCX (this rank's own copy: loads and stores).
  void add_symmetric_segment(void* base, std::size_t bytes);

 private:
  /// request: the returned Request completes locally; at_quiet: quiet() completes it.
  enum class Completion { request, at_quiet };

  template <AtomicFloat T>
  using FloatBits = std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>;

  template <AtomicWord T>
  T fetch_op(AtomicOp op, global_ptr<T> p, T value) {
    return static_cast<T>(
        atomic_bytes(op, p.address(), sizeof(T), static_cast<std::uint64_t>(value), 0, true));
  }
  template <AtomicWord T>
  void post_op(AtomicOp op, global_ptr<T> p, T value) {
    atomic_bytes(op, p.address(), sizeof(T), static_cast<std::uint64_t>(value), 0, false);
  }
  template <class T>
  static T load_acquire(const T* word) {
    return std::atomic_ref<T>(*const_cast<T*>(word)).load(std::memory_order_acquire);
  }
  template <class T>
  static bool compare(T a, Compare cmp, T b) {
    switch (cmp) {
      case Compare::eq:
        return a == b;
      case Compare::ne:
        return a != b;
      case Compare::gt:
        return a > b;
      case Compare::ge:
        return a >= b;
      case Compare::lt:
        return a < b;
      case Compare::le:
        return a <= b;
    }
    return false;
  }
  static bool left_out(const int* status, std::size_t i) { return status && status[i] != 0; }
  static bool all_left_out(std::size_t count, const int* status) {
    for (std::size_t i = 0; i < count; ++i)
      if (!left_out(status, i)) return false;
    return true;
  }
  // Word i compares with values[i * stride]: stride 0 gives every word one value.
  template <class T>
  static bool test_all_now(const T* words, std::size_t count, const int* status, Compare cmp,
                           const T* values, std::size_t stride) {
    for (std::size_t i = 0; i < count; ++i)
      if (!left_out(status, i) && !compare(load_acquire(words + i), cmp, values[i * stride]))
        return false;
    return true;
  }
  template <class T>
  static std::size_t test_any_now(const T* words, std::size_t count, const int* status, Compare cmp,
                                  const T* values, std::size_t stride) {
    for (std::size_t i = 0; i < count; ++i)
      if (!left_out(status, i) && compare(load_acquire(words + i), cmp, values[i * stride]))
        return i;
    return no_index;
  }
  template <class T>
  static std::size_t test_some_now(std::size_t* indices, const T* words, std::size_t count,
                                   const int* status, Compare cmp, const T* values,
                                   std::size_t stride) {
    std::size_t found = 0;
    for (std::size_t i = 0; i < count; ++i)
      if (!left_out(status, i) && compare(load_acquire(words + i), cmp, values[i * stride]))
        indices[found++] = i;
    return found;
  }
  template <class T>
  void wait_all(const T* words, std::size_t count, const int* status, Compare cmp, const T* values,
                std::size_t stride, const char* operation) {
    check_waits(words, count, sizeof(T), cmp, operation);
    wait_local([&] { return test_all_now(words, count, status, cmp, values, stride); });
  }
  template <class T>
  std::size_t wait_any(const T* words, std::size_t count, const int* status, Compare cmp,
                       const T* values, std::size_t stride, const char* operation) {
    check_waits(words, count, sizeof(T), cmp, operation);
    if (all_left_out(count, status)) return no_index;
    std::size_t found = no_index;
    wait_local([&] {
      return (found = test_any_now(words, count, status, cmp, values, stride)) != no_index;
    });
    return found;
  }
  template <class T>
  std::size_t wait_some(const T* words, std::size_t count, std::size_t* indices, const int* status,
                        Compare cmp, const T* values, std::size_t stride, const char* operation) {
    check_waits(words, count, sizeof(T), cmp, operation);
    if (all_left_out(count, status)) return 0;
    std::size_t found = 0;
    wait_local([&] {
      return (found = test_some_now(indices, words, count, status, cmp, values, stride)) > 0;
    });
    return found;
  }
  // The test_* forms: checked, progress made, then `now` over the words.
  template <class T, class Now>
  auto test_now(const T* words, std::size_t count, const int* status, Compare cmp, const T* values,
                std::size_t stride, const char* operation, Now&& now) {
    check_waits(words, count, sizeof(T), cmp, operation);
    progress();
    return now(words, count, status, cmp, values, stride);
  }
  void check_values(const void* values, const char* operation) const;
  template <class Done>
  void wait_local(Done&& done) {
    unsigned idle = 0;
    while (!done()) {
      if (!progress() && ++idle == 64) {
        yield();
        idle = 0;
      }
    }
  }

  const detail::Allocation* allocate_bytes(std::size_t bytes, std::uint64_t& generation);
  /// `local`: the address the caller named, for the message when no live
  /// allocation starts there (nullptr: the caller passed an array).
  void free_bytes(const detail::Allocation* allocation, std::uint64_t generation,
                  const void* local = nullptr);
  void* local_address(const detail::Allocation& allocation) const;
  detail::GlobalAddress symmetric_address(const void* local, int rank, const char* operation) const;
  /// Start a put or get; the Request is empty when the operation is already
  /// complete (load/store path) or left to quiet() (at_quiet).
  Request put_bytes(const detail::GlobalAddress& dst, const void* src, std::size_t bytes,
                    Completion completion, const char* operation);
  Request get_bytes(void* dst, const detail::GlobalAddress& src, std::size_t bytes,
                    Completion completion, const char* operation);
  // Memory added beside the heap (add_symmetric_segment).
  struct Segment;
  // Where [local, local+bytes) of this rank's heap is mapped for `rank`, or
  // null when the general path must take it (another path, a segment, or an
  // address the last lookup did not find: that path checks and reports).
  std::byte* direct_target(const void* local, std::size_t bytes, int rank,
                           const char* operation) const;
  // put_bytes and get_bytes into an added segment.
  Request segment_transfer(Segment& segment, int rank, std::size_t offset, void* local,
                           std::size_t bytes, bool is_put, Completion completion);
  void strided(bool is_put, const detail::GlobalAddress& remote, void* local, std::size_t element,
               std::ptrdiff_t remote_stride, std::ptrdiff_t local_stride, std::size_t block,
               std::size_t blocks);
  std::uint64_t atomic_bytes(AtomicOp op, const detail::GlobalAddress& p, std::size_t width,
                             std::uint64_t operand, std::uint64_t compare, bool fetch);
  void put_signal_bytes(const detail::GlobalAddress& dst, const void* src, std::size_t bytes,
                        const detail::GlobalAddress& signal, std::uint64_t value, SignalOp op,
                        Completion completion = Completion::request);
  // allocate_zeroed: zeroes this rank's copy, then every rank synchronises.
  void zero_before_use(void* local, std::size_t bytes);
  // local_pointer: `bytes` at `p` checked, then its address here or nullptr.
  void* direct_address(const detail::GlobalAddress& p, std::size_t bytes, const char* operation);
  // check_wait for the first and the last of `count` words (an empty array
  // is an error: there is nothing to wait for).
  void check_waits(const void* words, std::size_t count, std::size_t width, Compare cmp,
                   const char* operation) const;
  void check_local(const void* buffer, std::size_t bytes, const char* operation,
                   const char* role) const;
  // For wait_until and test: a live Pgas, `word` inside a live allocation
  // of this rank's heap and aligned, `cmp` one of Compare's values.
  void check_wait(const void* word, std::size_t width, Compare cmp, const char* operation) const;
  bool progress();
  /// Between idle polls of a wait: ends it when a peer's process is gone, and
  /// gives up the CPU when ranks outnumber cores (see Transport::yield_when_idle).
  void yield();

  struct State;
  int rank_ = no_rank;
  int size_ = 0;
  /// The state, or Errc::not_initialized naming `operation` once the runtime
  /// was finalized.
  State& live(const char* operation) const;
  std::unique_ptr<State> state_;
  std::weak_ptr<const void> alive_;  ///< Runtime::lifetime()
};

/// @}

}  // namespace mpidsm
