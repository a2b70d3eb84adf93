// Which pages a miss fetches. Prefetch serves misses along a stream only:
// a miss on the page right after an earlier miss of the same kind (or its
// batch). An isolated miss (a neighbour's boundary row, a pointer chase)
// fetches one page, since a prefetched page is a copy its home must then
// track (sharing.hpp).
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>

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
  bool continues(std::size_t page, bool write) const {
    const Streams& streams = write ? write_ : read_;
    return std::find(streams.begin(), streams.end(), page) != streams.end();
  }
  // A batch of this kind ran from `page` to just before `next`: the stream
  // that `page` continued (or a new one, replacing the least recently
  // advanced) now continues at `next`.
  void advance(bool write, std::size_t page, std::size_t next) {
    Streams& streams = write ? write_ : read_;
    auto slot = std::find(streams.begin(), streams.end(), page);
    if (slot == streams.end()) --slot;
    std::move_backward(streams.begin(), slot, slot + 1);
    streams.front() = next;
  }

 private:
  // Where each stream continues, the most recently advanced first.
  using Streams = std::array<std::size_t, kStreams>;
  // Unused slots continue nothing, but the last waits at page 0: the
  // region's start begins a stream, and the first new stream replaces it.
  static Streams unused() {
    Streams streams;
    streams.fill(~std::size_t{0});
    streams.back() = 0;
    return streams;
  }

  Streams read_ = unused(), write_ = unused();
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
