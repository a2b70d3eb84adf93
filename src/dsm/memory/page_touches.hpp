// Whether this process touched a page of its own address space since the
// page was last mapped or dropped (MADV_DONTNEED): the "present" bit of its
// page-table entry, read from /proc/self/pagemap. The DSM asks this of
// prefetched pages (used, or fetched in vain?) and of pages updated in
// place at a synchronisation (still in use, so worth updating again?),
// without a fault per page to find out.
#pragma once

#include <cstddef>

namespace mpidsm::detail {

class PageTouches {
 public:
  PageTouches();  // opens /proc/self/pagemap (without it, nothing counts as touched)
  ~PageTouches();
  PageTouches(const PageTouches&) = delete;
  PageTouches& operator=(const PageTouches&) = delete;

  // True when the page holding `address` has a page-table entry.
  bool touched(const void* address) const;

 private:
  int fd_ = -1;
  std::size_t page_size_;
};

}  // namespace mpidsm::detail
