// The message each side of a pairwise sync (Dsm::sync_with) sends the
// other, in 64-bit words:
//
//   status   0, or the Errc of the sender's failed release
//   counts   notices, wanted pages, pushed pages
//   notices  the first kInlineNotices of them (the rest follow in a second
//            message, sent only when there are more)
//   wanted   pages homed at the receiver the sender wants pushed at the
//            next sync (it used them when the receiver last changed them)
//   pushed   pages homed at the sender, from the receiver's last wanted
//            list, that its notices name, then their bytes
//
// A receiver sizes its receive from what it asked for at the last sync, so
// the first message always fits.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace mpidsm::detail {

struct SyncMessage {
  static constexpr std::size_t kInlineNotices = 30;
  static constexpr std::size_t kMaxWanted = 16;
  enum Field : std::size_t { kStatus, kNotices, kWanted, kPushed, kHead };

  // Words of a first message carrying at most `pushed` pages of `page_words` words.
  static std::size_t capacity(std::size_t pushed, std::size_t page_words) {
    return kHead + kInlineNotices + kMaxWanted + pushed * (1 + page_words);
  }

  // A view of a received first message `words` (checked against its
  // length: false when malformed).
  struct View {
    std::int64_t status = 0;
    std::size_t notices = 0;  // in all; the inline ones are inline_notices
    std::span<const std::int64_t> inline_notices, wanted, pushed;
    const std::int64_t* bytes = nullptr;  // the pushed pages', in order

    bool parse(std::span<const std::int64_t> words, std::size_t page_words) {
      if (words.size() < kHead || words[kNotices] < 0 || words[kWanted] < 0 || words[kPushed] < 0 ||
          static_cast<std::size_t>(words[kWanted]) > kMaxWanted)
        return false;
      status = words[kStatus];
      notices = static_cast<std::size_t>(words[kNotices]);
      const std::size_t inline_count = notices < kInlineNotices ? notices : kInlineNotices;
      const auto wanted_count = static_cast<std::size_t>(words[kWanted]);
      const auto pushed_count = static_cast<std::size_t>(words[kPushed]);
      const std::size_t need =
          kHead + inline_count + wanted_count + pushed_count * (1 + page_words);
      if (need > words.size()) return false;
      inline_notices = words.subspan(kHead, inline_count);
      wanted = words.subspan(kHead + inline_count, wanted_count);
      pushed = words.subspan(kHead + inline_count + wanted_count, pushed_count);
      bytes = pushed.data() + pushed_count;
      return true;
    }
  };
};

}  // namespace mpidsm::detail
