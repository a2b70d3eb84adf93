#include "diff_message.hpp"

#include "diff_blocks.hpp"

namespace mpidsm::detail {
namespace {

enum class Body : std::uint32_t { runs = 1, mask = 2, words = 3 };

struct RecordHeader {
  std::uint64_t page;
  Body body;
  std::uint32_t count;  // runs, changed bytes, or changed words
};

struct Run {
  std::uint32_t offset;
  std::uint32_t length;
};

template <class T>
void put_at(std::byte*& out, const T& value) {
  std::memcpy(out, &value, sizeof value);
  out += sizeof value;
}

// Reads a T if the message holds one more; false otherwise.
template <class T>
bool take(const std::byte*& in, const std::byte* end, T& value) {
  if (static_cast<std::size_t>(end - in) < sizeof value) return false;
  std::memcpy(&value, in, sizeof value);
  in += sizeof value;
  return true;
}

// The `words` body after its mask bytes: each changed word whole, its mask
// byte written at `masks`. Returns the words written.
std::uint32_t pack_changed_words(const std::byte* twin, const std::byte* page,
                                 std::size_t page_size, std::byte* masks, std::byte* out) {
  std::uint32_t changed_words = 0;
  for (std::size_t i = 0; i < page_size; i += 8) {
    const std::uint64_t now = load_word(page + i);
    const unsigned mask = changed_bytes(load_word(twin + i), now);
    masks[i / 8] = static_cast<std::byte>(mask);
    if (mask == 0) continue;
    std::memcpy(out + 8 * std::size_t{changed_words++}, &now, sizeof now);
  }
  return changed_words;
}

// Stores a `words` body's changed bytes into `target`: a word at a time,
// blended, under PageAccess::exclusive or where all of its bytes changed,
// otherwise exactly the changed bytes. False, having written nothing, when
// the mask bytes name other than `count` words.
bool unpack_changed_words(const std::byte* masks, const std::byte* words, std::uint32_t count,
                          std::byte* target, std::size_t page_size, PageAccess access) {
  std::uint32_t named = 0;
  for (std::size_t w = 0; w < page_size / 8; ++w) named += masks[w] != std::byte{0};
  if (named != count) return false;
  for (std::size_t w = 0; w < page_size / 8; ++w) {
    const auto mask = static_cast<unsigned>(masks[w]);
    if (mask == 0) continue;
    std::byte* const to = target + 8 * w;
    if (access == PageAccess::exclusive || mask == 0xFFu)
      blend_word(to, load_word(words), kByteMasks[mask]);
    else
      store_changed_bytes(to, words, mask);
    words += 8;
  }
  return true;
}

}  // namespace

std::size_t max_diff_record(std::size_t page_size) {
  return sizeof(RecordHeader) + page_size / 8 + page_size + kPackSlack;
}

std::size_t encode_diff(const DiffKernelOps& kernel, std::uint64_t page_index,
                        const std::byte* twin, const std::byte* page, std::size_t page_size,
                        std::byte* out, DiffShape& shape) {
  shape = kernel.measure(twin, page, page_size);
  const std::size_t words = page_size / 8;
  const bool as_runs = shape.runs * sizeof(Run) <= words;
  std::byte* at = out;
  if (!as_runs && kernel.kind == DiffKernel::words) {
    std::byte* const body = out + sizeof(RecordHeader);
    const std::uint32_t changed_words =
        pack_changed_words(twin, page, page_size, body, body + words);
    put_at(at, RecordHeader{page_index, Body::words, changed_words});
    return sizeof(RecordHeader) + words + 8 * std::size_t{changed_words};
  }
  put_at(at, RecordHeader{page_index, as_runs ? Body::runs : Body::mask,
                          static_cast<std::uint32_t>(as_runs ? shape.runs : shape.bytes)});
  if (as_runs) {
    for_each_changed_run(twin, page, page_size, [&](std::size_t offset, std::size_t length) {
      put_at(at, Run{static_cast<std::uint32_t>(offset), static_cast<std::uint32_t>(length)});
      std::memcpy(at, page + offset, length);
      at += length;
    });
    return static_cast<std::size_t>(at - out);
  }
  return static_cast<std::size_t>(at - out) + words +
         kernel.pack(twin, page, page_size, at, at + words);
}

bool apply_diffs(const DiffKernelOps& kernel, const std::byte* message, std::size_t size,
                 std::byte* base, std::size_t pages, std::size_t page_size, PageGuard& guard) {
  const std::byte* in = message;
  const std::byte* const end = message + size;
  const std::size_t words = page_size / 8;
  while (in != end) {
    RecordHeader header;
    if (!take(in, end, header) || header.page >= pages) return false;
    std::byte* target = base + header.page * page_size;
    const PageAccess access = guard.acquire(header.page);
    bool applied = true;
    if (header.body == Body::runs) {
      for (std::uint32_t r = 0; r < header.count; ++r) {
        Run run;
        applied = take(in, end, run) && run.offset <= page_size &&
                  run.length <= page_size - run.offset &&
                  static_cast<std::size_t>(end - in) >= run.length;
        if (!applied) break;
        std::memcpy(target + run.offset, in, run.length);
        in += run.length;
      }
    } else if (header.body == Body::mask) {
      applied = static_cast<std::size_t>(end - in) >= words + header.count &&
                kernel.unpack(in, in + words, header.count, target, page_size, access);
      in += applied ? words + header.count : 0;
    } else if (header.body == Body::words) {
      const std::size_t body = words + 8 * std::size_t{header.count};
      applied = static_cast<std::size_t>(end - in) >= body &&
                unpack_changed_words(in, in + words, header.count, target, page_size, access);
      in += applied ? body : 0;
    } else {
      applied = false;
    }
    guard.release(header.page);
    if (!applied) return false;
  }
  return true;
}

}  // namespace mpidsm::detail
