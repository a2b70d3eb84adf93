// Which pages a miss fetches. Prefetch serves misses along a stream only:
// a miss on the page right after an earlier miss of the same kind (or its
// batch). An isolated miss (a neighbour's boundary row, a pointer chase)
// fetches one page, since a prefetched page is a copy its home must then
// track (sharing.hpp).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

namespace mpidsm::detail {

// Where the recent read streams and write streams would continue, several
// of each kind, as a CPU's prefetcher tracks several: a loop reading two
// arrays and writing a third interleaves three streams, and a scatter into
// P buckets (a bucket or radix sort's exchange) one write stream per
// bucket. With one stream per kind each such miss would end the other's
// stream and fetch a single page. A new stream takes the slot used least
// recently. A write stream also batches first writes to cached pages (their
// twins and one mprotect), so it is advanced by those as well as by write
// misses.
class MissStreams {
 public:
  static constexpr std::size_t kStreams = 16;  // per kind

  // Whether a miss (or first write) on `page` continues a stream of its kind.
  bool continues(std::size_t page, bool write) const { return find(kind(write), page) != kStreams; }
  // A batch of this kind ran from `page` to just before `next`: the stream
  // that `page` continued (or a new one, replacing the least recently
  // advanced) now continues at `next`.
  void advance(bool write, std::size_t page, std::size_t next) {
    Kind& k = kind(write);
    std::size_t slot = find(k, page);
    if (slot == kStreams) {
      slot = 0;
      for (std::size_t s = 1; s < kStreams; ++s)
        if (k.last_used[s] < k.last_used[slot]) slot = s;
    }
    k.next[slot] = next;
    k.last_used[slot] = ++k.clock;
  }

 private:
  static constexpr std::size_t kUnused = ~std::size_t{0};
  struct Kind {
    // Unused slots continue nothing, but the first waits at page 0: the
    // region's start begins a stream. It is the first a new stream takes.
    Kind() {
      next.fill(kUnused);
      next[0] = 0;
    }
    std::array<std::size_t, kStreams> next;
    std::array<std::uint64_t, kStreams> last_used{};
    std::uint64_t clock = 0;
  };
  const Kind& kind(bool write) const { return write ? write_ : read_; }
  Kind& kind(bool write) { return write ? write_ : read_; }
  static std::size_t find(const Kind& k, std::size_t page) {
    for (std::size_t s = 0; s < kStreams; ++s)
      if (k.next[s] == page) return s;
    return kStreams;
  }

  Kind read_, write_;
};

// The pages a read miss on a stream fetches: the missed page, then up to
// `prefetch` later pages that `wanted` accepts (not cached here, same home),
// looking at most `max_checking` pages past the miss. Stops at the region's end.
template <class Wanted>
std::size_t select_prefetch(std::size_t page, std::size_t region_pages, std::size_t prefetch,
                            std::size_t max_checking, Wanted&& wanted, std::size_t* out) {
  std::size_t count = 0;
  out[count++] = page;
  for (std::size_t q = page + 1; q < region_pages && q <= page + max_checking && count <= prefetch;
       ++q)
    if (wanted(q)) out[count++] = q;
  return count;
}

}  // namespace mpidsm::detail
