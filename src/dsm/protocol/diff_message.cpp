#include "diff_message.hpp"

namespace mpidsm::detail {
namespace {

enum class Body : std::uint32_t { runs = 1, mask = 2 };

struct RecordHeader {
  std::uint64_t page;
  Body body;
  std::uint32_t count;  // runs, or changed bytes
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

}  // namespace

std::size_t max_diff_record(std::size_t page_size) {
  return sizeof(RecordHeader) + page_size / 8 + page_size;
}

std::size_t encode_diff(std::uint64_t page_index, const std::byte* twin, const std::byte* page,
                        std::size_t page_size, std::byte* out, DiffShape& shape) {
  shape = measure_changes(twin, page, page_size);
  const std::size_t words = page_size / 8;
  const bool as_runs = shape.runs * sizeof(Run) <= words;
  std::byte* at = out;
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
  std::byte* masks = at;
  std::byte* packed = at + words;
  for (std::size_t w = 0; w < words; ++w) {
    const std::size_t i = w * 8;
    const unsigned mask = changed_bytes(load_word(twin + i), load_word(page + i));
    masks[w] = static_cast<std::byte>(mask);
    if (mask == 0xFFu) {
      std::memcpy(packed, page + i, 8);
      packed += 8;
    } else {
      for (unsigned bits = mask; bits != 0; bits &= bits - 1)
        *packed++ = page[i + static_cast<std::size_t>(std::countr_zero(bits))];
    }
  }
  return static_cast<std::size_t>(packed - out);
}

bool apply_diffs(const std::byte* message, std::size_t size, std::byte* base, std::size_t pages,
                 std::size_t page_size) {
  const std::byte* in = message;
  const std::byte* const end = message + size;
  const std::size_t words = page_size / 8;
  while (in != end) {
    RecordHeader header;
    if (!take(in, end, header) || header.page >= pages) return false;
    std::byte* target = base + header.page * page_size;
    if (header.body == Body::runs) {
      for (std::uint32_t r = 0; r < header.count; ++r) {
        Run run;
        if (!take(in, end, run) || run.offset > page_size || run.length > page_size - run.offset ||
            static_cast<std::size_t>(end - in) < run.length)
          return false;
        std::memcpy(target + run.offset, in, run.length);
        in += run.length;
      }
    } else if (header.body == Body::mask) {
      if (static_cast<std::size_t>(end - in) < words + header.count) return false;
      const std::byte* masks = in;
      const std::byte* packed = in + words;
      const std::byte* const packed_end = packed + header.count;
      for (std::size_t w = 0; w < words; ++w) {
        const auto mask = static_cast<unsigned>(masks[w]);
        if (static_cast<std::size_t>(packed_end - packed) < kBitsSet[mask]) return false;
        if (mask == 0xFFu) {
          std::memcpy(target + w * 8, packed, 8);
          packed += 8;
        } else {
          for (unsigned bits = mask; bits != 0; bits &= bits - 1)
            target[w * 8 + static_cast<std::size_t>(std::countr_zero(bits))] = *packed++;
        }
      }
      if (packed != packed_end) return false;
      in = packed_end;
    } else {
      return false;
    }
  }
  return true;
}

}  // namespace mpidsm::detail
