// Diffs of a page against its twin: the runs of bytes this rank changed.
// Byte-exact on purpose: with several writers to one page, a run must never
// carry a byte this rank did not change, or it would overwrite another
// writer's byte at the home. Words are compared first, so unchanged memory
// costs one 8-byte compare per word.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace mpidsm::detail {

// Calls emit(offset, length) for every maximal run of bytes where `page`
// differs from `twin`, in increasing offset order; returns the run count.
template <class Emit>
std::size_t for_each_changed_run(const std::byte* twin, const std::byte* page, std::size_t size,
                                 Emit&& emit) {
  std::size_t runs = 0;
  std::size_t run_start = 0;
  bool in_run = false;
  auto close_run = [&](std::size_t end) {
    emit(run_start, end - run_start);
    ++runs;
    in_run = false;
  };
  std::size_t i = 0;
  while (i < size) {
    // Skip whole equal words quickly when not inside a run.
    if (!in_run && i + 8 <= size) {
      std::uint64_t a, b;
      std::memcpy(&a, twin + i, 8);
      std::memcpy(&b, page + i, 8);
      if (a == b) {
        i += 8;
        continue;
      }
    }
    const bool differs = twin[i] != page[i];
    if (differs && !in_run) {
      run_start = i;
      in_run = true;
    } else if (!differs && in_run) {
      close_run(i);
    }
    ++i;
  }
  if (in_run) close_run(size);
  return runs;
}

}  // namespace mpidsm::detail
