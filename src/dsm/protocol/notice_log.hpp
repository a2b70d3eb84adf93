// The write-notice log each lock keeps at its home, for scope consistency:
// the holder appends the pages it wrote before passing the lock on, the next
// holder reads what was appended since it last held the lock and invalidates
// those pages. A fixed ring per lock, so the log never allocates: a reader
// that fell more than a ring behind cannot know which pages changed and must
// invalidate every cached page (rare; counted in the statistics).
//
// Entries carry the writer, so a rank never invalidates its own writes. The
// log is valid for one barrier epoch: a barrier delivers every notice to every
// rank, so a header from an older epoch means an empty log.
#pragma once

#include <cstddef>
#include <cstdint>

namespace mpidsm::detail {

struct NoticeLogHeader {
  std::uint64_t epoch;  // barrier epoch the entries belong to
  std::uint64_t count;  // entries appended in that epoch (the ring keeps the last ones)
};

// A lock's record at its home: the MCS queue tail, the lock's flag (for
// Dsm::set_flag), then the log.
struct LockRecordLayout {
  static constexpr std::size_t tail = 0;
  static constexpr std::size_t flag = 8;
  static constexpr std::size_t header = 16;
  static constexpr std::size_t ring = header + sizeof(NoticeLogHeader);
  static constexpr std::size_t ring_entries = 124;
  static constexpr std::size_t bytes = ring + ring_entries * sizeof(std::uint64_t);  // 1 KiB
};

// Notice = page (low 40 bits) and writer rank (high 24 bits).
inline constexpr unsigned kNoticePageBits = 40;
inline constexpr std::uint64_t encode_notice(std::size_t page, int writer) {
  return (static_cast<std::uint64_t>(writer) << kNoticePageBits) | page;
}
inline constexpr std::size_t notice_page(std::uint64_t notice) {
  return static_cast<std::size_t>(notice & ((std::uint64_t{1} << kNoticePageBits) - 1));
}
inline constexpr int notice_writer(std::uint64_t notice) {
  return static_cast<int>(notice >> kNoticePageBits);
}

// The ring positions of log entries [from, to) as at most two contiguous
// spans (index into the ring, length). Requires to - from <= ring_entries.
struct RingSpan {
  std::size_t index = 0;
  std::size_t length = 0;
};
inline int ring_spans(std::uint64_t from, std::uint64_t to, std::size_t capacity, RingSpan out[2]) {
  if (to == from) return 0;
  const std::size_t start = static_cast<std::size_t>(from % capacity);
  const std::size_t total = static_cast<std::size_t>(to - from);
  const std::size_t first = total < capacity - start ? total : capacity - start;
  out[0] = {start, first};
  if (first == total) return 1;
  out[1] = {0, total - first};
  return 2;
}

}  // namespace mpidsm::detail
