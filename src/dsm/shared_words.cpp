#include "shared_words.hpp"

#include <atomic>
#include <cstdio>

#include "mpidsm/error.hpp"

namespace mpidsm::detail {

SharedWords::SharedWords(Transport& transport, std::size_t bytes, bool direct_access)
    : transport_(transport), memory_(transport.allocate(bytes, true)) {
  if (direct_access && memory_.all_mapped())
    for (int peer = 0; peer < transport.size(); ++peer)
      mapped_.push_back(static_cast<std::byte*>(memory_.mapped(peer)));
}

SharedWords::~SharedWords() {
  if (!memory_.valid()) return;  // abandoned
  try {
    transport_.deregister(memory_);
  } catch (const Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
  }
}

std::uint32_t SharedWords::swap32(int rank, std::size_t offset, std::uint32_t value) {
  if (!direct())
    return transport_.atomic_fetch<std::uint32_t>(AtomicOp::swap, rank, memory_, offset, value);
  return std::atomic_ref<std::uint32_t>(mapped<std::uint32_t>(rank, offset)).exchange(value);
}

std::uint32_t SharedWords::compare_swap32(int rank, std::size_t offset, std::uint32_t expected,
                                          std::uint32_t desired) {
  if (!direct())
    return transport_.atomic_fetch<std::uint32_t>(AtomicOp::compare_swap, rank, memory_, offset,
                                                  desired, expected);
  std::atomic_ref<std::uint32_t>(mapped<std::uint32_t>(rank, offset))
      .compare_exchange_strong(expected, desired);
  return expected;  // the previous value either way
}

std::uint32_t SharedWords::load32(int rank, std::size_t offset) {
  if (!direct())
    return transport_.atomic_fetch<std::uint32_t>(AtomicOp::add, rank, memory_, offset, 0);
  return std::atomic_ref<std::uint32_t>(mapped<std::uint32_t>(rank, offset)).load();
}

void SharedWords::add64(int rank, std::size_t offset, std::uint64_t value) {
  if (!direct()) {
    transport_.atomic_post<std::uint64_t>(AtomicOp::add, rank, memory_, offset, value);
    transport_.flush(rank);
    return;
  }
  std::atomic_ref<std::uint64_t>(mapped<std::uint64_t>(rank, offset)).fetch_add(value);
}

}  // namespace mpidsm::detail
