// The symmetric heap's routines: shmem_malloc and its relatives over the PGAS
// face's collective allocations (64-byte aligned; MPIDSM_HEAP_SIZE bytes per
// PE). A request the heap cannot hold returns NULL on every PE, as the
// specification asks; mismatched sizes end the job with a message.
#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstring>
#include <string>

#include "common/mpi_exchange.hpp"
#include "library.hpp"

namespace mpidsm::shmem {
namespace {

constexpr std::size_t kHeapAlignment = 64;  // every Pgas allocation's

void* allocate(std::size_t size, bool zeroed, const char* function) {
  Pgas& p = pgas(function);
  if (size == 0) return nullptr;
  try {
    return zeroed ? p.allocate_zeroed<unsigned char>(size).local()
                  : p.allocate<unsigned char>(size).local();
  } catch (const Error& e) {
    // The heap is symmetric, so a full heap fails alike on every PE.
    if (e.code() == Errc::no_memory) return nullptr;
    throw;
  }
}

void release(void* ptr, const char* function) {
  Library& lib = library(function);
  if (!ptr) return;
  if (auto it = lib.aligned.find(ptr); it != lib.aligned.end()) {
    ptr = it->second;
    lib.aligned.erase(it);
  }
  lib.pgas.free_at(ptr);
}

// The bytes of `ptr`'s allocation from `ptr` on (this PE's copy).
std::size_t bytes_from(const void* ptr, const char* function) {
  const auto address = pgas(function).global(static_cast<const unsigned char*>(ptr), 0).address();
  return address.allocation->bytes - address.byte;
}

// Alignments past the heap's own: the allocation is padded so that the
// aligned address is the same offset into every PE's heap (checked: heaps
// mapped at addresses that differ modulo `alignment` cannot give one).
void* allocate_aligned(std::size_t alignment, std::size_t size, const char* function) {
  Library& lib = library(function);
  if (alignment == 0 || !std::has_single_bit(alignment))
    throw Error(Errc::invalid_argument, lib.pgas.rank(),
                std::string(function) + ": alignment " + std::to_string(alignment) +
                    " is not a power of two");
  if (alignment <= kHeapAlignment || size == 0) return allocate(size, false, function);
  auto* base =
      static_cast<unsigned char*>(allocate(size + alignment - kHeapAlignment, false, function));
  if (!base) return nullptr;
  const auto at = reinterpret_cast<std::uintptr_t>(base);
  const long long pad[] = {static_cast<long long>((alignment - at % alignment) % alignment)};
  if (!detail::value_range(lib.runtime.comm(), lib.pgas.rank(), pad, function).uniform()) {
    lib.pgas.free_at(base);
    throw Error(Errc::invalid_argument, lib.pgas.rank(),
                std::string(function) + ": the PEs' heaps lie at addresses that differ modulo " +
                    std::to_string(alignment) + "; no symmetric object can have that alignment");
  }
  unsigned char* aligned = base + pad[0];
  if (aligned != base) lib.aligned.emplace(aligned, base);
  return aligned;
}

void* reallocate(void* ptr, std::size_t size, const char* function) {
  if (!ptr) return allocate(size, false, function);
  if (size == 0) {
    release(ptr, function);
    return nullptr;
  }
  const std::size_t old_bytes = bytes_from(ptr, function);
  void* fresh = allocate(size, false, function);
  if (!fresh) return nullptr;  // the old object stays, as realloc's does
  std::memcpy(fresh, ptr, std::min(old_bytes, size));
  release(ptr, function);  // its barrier: every PE has copied before any returns
  return fresh;
}

}  // namespace
}  // namespace mpidsm::shmem

using namespace mpidsm::shmem;

extern "C" {

void* shmem_malloc(size_t size) {
  return guarded("shmem_malloc", [&] { return allocate(size, false, "shmem_malloc"); });
}
void* shmalloc(size_t size) {
  return guarded("shmalloc", [&] { return allocate(size, false, "shmalloc"); });
}
void* shmem_malloc_with_hints(size_t size, long) {
  // Hints only tune placement: every allocation serves atomics and signals.
  return guarded("shmem_malloc_with_hints",
                 [&] { return allocate(size, false, "shmem_malloc_with_hints"); });
}
void* shmem_calloc(size_t count, size_t size) {
  return guarded("shmem_calloc", [&] {
    return allocate(mpidsm::array_bytes(count, size, mpidsm::no_rank, "shmem_calloc"), true,
                    "shmem_calloc");
  });
}
void* shmem_align(size_t alignment, size_t size) {
  return guarded("shmem_align", [&] { return allocate_aligned(alignment, size, "shmem_align"); });
}
void* shmemalign(size_t alignment, size_t size) {
  return guarded("shmemalign", [&] { return allocate_aligned(alignment, size, "shmemalign"); });
}
void* shmem_realloc(void* ptr, size_t size) {
  return guarded("shmem_realloc", [&] { return reallocate(ptr, size, "shmem_realloc"); });
}
void* shrealloc(void* ptr, size_t size) {
  return guarded("shrealloc", [&] { return reallocate(ptr, size, "shrealloc"); });
}
void shmem_free(void* ptr) {
  guarded("shmem_free", [&] { release(ptr, "shmem_free"); });
}
void shfree(void* ptr) {
  guarded("shfree", [&] { release(ptr, "shfree"); });
}

}  // extern "C"
