// Which pages a miss fetches. Prefetch serves misses along a stream only:
// a miss on the page right after the previous miss of the same kind (or its
// batch). An isolated miss (a neighbour's boundary row, a pointer chase)
// fetches one page, since a prefetched page is a copy its home must then
// track (sharing.hpp).
#pragma once

#include <cstddef>

namespace mpidsm::detail {

// Where the current read stream and write stream would continue. A write
// stream also batches first writes to cached pages (their twins and one
// mprotect), so it is advanced by those as well as by write misses.
class MissStreams {
 public:
  // Whether a miss (or first write) on `page` continues the stream of its kind.
  bool continues(std::size_t page, bool write) const {
    return page == (write ? write_next_ : read_next_);
  }
  // The stream of this kind now continues at `next` (just past the batch).
  void advance(bool write, std::size_t next) { (write ? write_next_ : read_next_) = next; }

 private:
  std::size_t read_next_ = 0;
  std::size_t write_next_ = 0;
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
