// One sender's ring in a receiver's mailbox: shared memory that the sender
// writes with plain stores and the receiver reads with plain loads, so a small
// message between ranks of one node costs two copies and one cache-line
// transfer, with no UCX call (Open MPI's shared-memory "fast boxes" work the
// same way). The ring lives in the receiver's memory; the sender maps it.
//
// Layout: one control line (the receiver's count of cells consumed), then
// `ring_cells` cells of 64 bytes. A record is a 24-byte header and its payload
// in consecutive cells; one that would straddle the end is preceded by a skip
// record that fills the rest of the ring. A record is published by storing
// its stamp (its position + 1) last, with release; the receiver knows the
// position it expects next, so stale records from an earlier lap never match
// and the memory needs zeroing only once.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace mpidsm::detail {

enum class RecordKind : std::uint16_t {
  eager = 1,       // the payload is the message
  rendezvous = 2,  // the message follows through UCX under a data tag (`sequence`)
  skip = 3,        // filler up to the end of the ring
};

struct MailboxRecord {
  std::uint64_t stamp;  // position + 1; stored last
  std::uint16_t cells;  // the record's length in cells, header included
  RecordKind kind;
  std::int32_t tag;
  std::uint32_t length;    // message bytes
  std::uint32_t sequence;  // rendezvous: which data tag carries the message
};
static_assert(sizeof(MailboxRecord) == 24);

struct RingLayout {
  static constexpr std::size_t cell = 64;
  static constexpr std::size_t ring_cells = 1024;  // 64 KiB of records per sender
  static constexpr std::size_t ring_bytes = cell * (1 + ring_cells);
  // The largest message a record carries; a quarter of the ring, so several
  // fit at once. Larger ones go by rendezvous.
  static constexpr std::size_t max_eager = ring_cells * cell / 4 - sizeof(MailboxRecord);

  static constexpr std::size_t cells_for(std::size_t length) {
    return (sizeof(MailboxRecord) + length + cell - 1) / cell;
  }
};

inline std::atomic_ref<std::uint64_t> ring_word(std::byte* at) {
  return std::atomic_ref<std::uint64_t>(*reinterpret_cast<std::uint64_t*>(at));
}

// The sender's side of one ring. Not thread-safe: the caller serialises.
class RingWriter {
 public:
  RingWriter() = default;
  explicit RingWriter(std::byte* ring) : ring_(ring) {}

  bool usable() const noexcept { return ring_ != nullptr; }

  // Publishes a record of a `length`-byte message with `payload_size` bytes
  // of payload when the ring has room for it now; false otherwise (the
  // receiver has not consumed enough yet).
  bool try_write(RecordKind kind, std::int32_t tag, std::uint32_t sequence, std::size_t length,
                 const void* payload, std::size_t payload_size) {
    const std::size_t need = RingLayout::cells_for(payload_size);
    const std::size_t at = head_ % RingLayout::ring_cells;
    const std::size_t skip = at + need > RingLayout::ring_cells ? RingLayout::ring_cells - at : 0;
    if (head_ + skip + need - consumed_ > RingLayout::ring_cells) {
      consumed_ = ring_word(ring_).load(std::memory_order_acquire);
      if (head_ + skip + need - consumed_ > RingLayout::ring_cells) return false;
    }
    if (skip != 0) publish(RecordKind::skip, 0, 0, 0, nullptr, 0, skip);
    publish(kind, tag, sequence, length, payload, payload_size, need);
    return true;
  }

 private:
  void publish(RecordKind kind, std::int32_t tag, std::uint32_t sequence, std::size_t length,
               const void* payload, std::size_t payload_size, std::size_t cells) {
    std::byte* at = cell(head_ % RingLayout::ring_cells);
    if (payload_size != 0) std::memcpy(at + sizeof(MailboxRecord), payload, payload_size);
    auto* record = reinterpret_cast<MailboxRecord*>(at);
    record->cells = static_cast<std::uint16_t>(cells);
    record->kind = kind;
    record->tag = tag;
    record->length = static_cast<std::uint32_t>(length);
    record->sequence = sequence;
    ring_word(at).store(head_ + 1, std::memory_order_release);
    head_ += cells;
  }
  std::byte* cell(std::size_t index) const { return ring_ + RingLayout::cell * (1 + index); }

  std::byte* ring_ = nullptr;
  std::uint64_t head_ = 0;      // cells written
  std::uint64_t consumed_ = 0;  // the receiver's count, as last read
};

// The receiver's side of one ring. Not thread-safe: the caller serialises.
class RingReader {
 public:
  RingReader() = default;
  explicit RingReader(std::byte* ring) : ring_(ring) {}

  bool usable() const noexcept { return ring_ != nullptr; }

  // The oldest record not yet consumed, or nullptr when none has arrived.
  const MailboxRecord* peek() {
    for (;;) {
      std::byte* at = ring_ + RingLayout::cell * (1 + consumed_ % RingLayout::ring_cells);
      if (ring_word(at).load(std::memory_order_acquire) != consumed_ + 1) return nullptr;
      const auto* record = reinterpret_cast<const MailboxRecord*>(at);
      if (record->kind != RecordKind::skip) return record;
      pop(record);
    }
  }
  static const std::byte* payload(const MailboxRecord* record) {
    return reinterpret_cast<const std::byte*>(record) + sizeof(MailboxRecord);
  }
  // Hands the record's cells back to the sender.
  void pop(const MailboxRecord* record) {
    consumed_ += record->cells;
    ring_word(ring_).store(consumed_, std::memory_order_release);
  }

 private:
  std::byte* ring_ = nullptr;
  std::uint64_t consumed_ = 0;
};

}  // namespace mpidsm::detail
