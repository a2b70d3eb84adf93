#include "put_calls.hpp"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "transport/library_messaging.hpp"

namespace mpidsm::detail {

PutCalls::PutCalls(Transport& transport, std::byte* heap, std::size_t size,
                   const std::vector<std::byte*>& mapped, bool wanted)
    : transport_(&transport),
      heap_(heap),
      size_(size),
      used_(detail::LibraryMessaging(transport).all_reach_through_messages(
          wanted, [&](int peer) { return mapped[static_cast<std::size_t>(peer)] != nullptr; })),
      staging_(kMaxBytes + sizeof(Signal)),
      pool_(used_ ? kBuffers * kBatchBytes : 0),
      batch_of_(static_cast<std::size_t>(transport.size()), kNone),
      filled_(kBuffers, 0),
      landing_(std::make_unique<std::atomic<bool>[]>(static_cast<std::size_t>(transport.size()))),
      write_id_(transport.add_remote_handler(write, this)),
      signal_id_(transport.add_remote_handler(write_and_signal, this)),
      batch_id_(transport.add_remote_handler(write_batch, this)),
      landing_id_(detail::LibraryMessaging(transport).add_landing_handler(place, this)) {
  for (int b = static_cast<int>(kBuffers); b-- > 0;) free_.push_back(b);
  waiting_.reserve(kBuffers);
}

PutCalls::~PutCalls() {
  if (!transport_) return;
  transport_->remove_remote_handler(landing_id_);
  transport_->remove_remote_handler(batch_id_);
  transport_->remove_remote_handler(signal_id_);
  transport_->remove_remote_handler(write_id_);
}

void PutCalls::put(int rank, std::size_t offset, const void* src, std::size_t bytes) {
  send(rank);
  transport_->call(rank, write_id_, src, bytes, offset);
}

void PutCalls::land_nbi(int rank, std::size_t offset, const void* src, std::size_t bytes) {
  send_batch_of(rank);
  detail::LibraryMessaging(*transport_).call_landing_nbi(rank, landing_id_, offset, src, bytes);
  note_landing(rank);
}

Request PutCalls::land(int rank, std::size_t offset, const void* src, std::size_t bytes) {
  send_batch_of(rank);
  Request sending =
      detail::LibraryMessaging(*transport_).call_landing(rank, landing_id_, offset, src, bytes);
  note_landing(rank);
  return sending;
}

void PutCalls::note_landing(int rank) {
  landing_[static_cast<std::size_t>(rank)].store(true, std::memory_order_relaxed);
  landing_any_.store(true, std::memory_order_release);
}

void PutCalls::wait_landed(int rank) {
  auto& landing = landing_[static_cast<std::size_t>(rank)];
  if (landing.load(std::memory_order_acquire) && landing.exchange(false, std::memory_order_acq_rel))
    detail::LibraryMessaging(*transport_).wait_for_calls(rank);
}

void PutCalls::wait_all_landed() {
  if (!landing_any_.exchange(false, std::memory_order_acq_rel)) return;
  for (int rank = 0; rank < transport_->size(); ++rank) wait_landed(rank);
}

void PutCalls::forget_landed() {
  if (!landing_any_.exchange(false, std::memory_order_acq_rel)) return;
  for (int rank = 0; rank < transport_->size(); ++rank)
    landing_[static_cast<std::size_t>(rank)].store(false, std::memory_order_relaxed);
}

std::byte* PutCalls::place(void* self_pointer, int source, std::uint64_t offset, std::size_t size) {
  auto& self = *static_cast<PutCalls*>(self_pointer);
  self.check(source, offset, size, "large put");
  return self.heap_ + offset;
}

void PutCalls::gather(int rank, std::size_t offset, const void* src, std::size_t bytes) {
  const std::size_t record = sizeof(Record) + (bytes + 7) / 8 * 8;
  std::lock_guard<std::mutex> hold(mutex_);
  int& batch = batch_of_[static_cast<std::size_t>(rank)];
  if (batch != kNone && kBatchBytes - filled_[static_cast<std::size_t>(batch)] < record)
    send_batch(rank);
  if (batch == kNone) {
    if (free_.empty()) send_batch(waiting_.front());  // the oldest batch makes room
    batch = free_.back();
    free_.pop_back();
    waiting_.push_back(rank);
    pending_.store(waiting_.size(), std::memory_order_release);
  }
  std::size_t& filled = filled_[static_cast<std::size_t>(batch)];
  std::byte* at = buffer(batch) + filled;
  const Record header{offset, bytes};
  std::memcpy(at, &header, sizeof header);
  std::memcpy(at + sizeof header, src, bytes);
  filled += record;
}

void PutCalls::send_locked(int rank) {
  std::lock_guard<std::mutex> hold(mutex_);
  if (batch_of_[static_cast<std::size_t>(rank)] != kNone) send_batch(rank);
}

void PutCalls::send_all_locked() {
  std::lock_guard<std::mutex> hold(mutex_);
  while (!waiting_.empty()) send_batch(waiting_.front());
}

// The batch's bytes may be reused once call() returns: its buffer is free at once.
void PutCalls::send_batch(int rank) {
  int& batch = batch_of_[static_cast<std::size_t>(rank)];
  const int index = batch;
  std::size_t& filled = filled_[static_cast<std::size_t>(index)];
  batch = kNone;
  std::erase(waiting_, rank);
  pending_.store(waiting_.size(), std::memory_order_release);
  const std::size_t bytes = filled;
  filled = 0;
  free_.push_back(index);
  transport_->call(rank, batch_id_, buffer(index), bytes, 0);
}

void PutCalls::put_signal(int rank, std::size_t offset, const void* src, std::size_t bytes,
                          std::size_t signal_offset, std::uint64_t value, SignalOp op) {
  send(rank);
  std::lock_guard<std::mutex> hold(mutex_);
  std::memcpy(staging_.data(), src, bytes);
  const Signal signal{signal_offset, value, op == SignalOp::add ? 1u : 0u};
  std::memcpy(staging_.data() + bytes, &signal, sizeof signal);
  transport_->call(rank, signal_id_, staging_.data(), bytes + sizeof signal, offset);
}

void PutCalls::check(int source, std::uint64_t offset, std::size_t size, const char* what) const {
  if (offset > size_ || size > size_ - offset) malformed(source, offset, size, what);
}

void PutCalls::malformed(int source, std::uint64_t offset, std::size_t size,
                         const char* what) const {
  std::fprintf(stderr, "mpidsm: rank %d: malformed %s call from rank %d (%zu bytes at %llu)\n",
               transport_ ? transport_->rank() : -1, what, source, size,
               static_cast<unsigned long long>(offset));
  std::abort();
}

void PutCalls::write(void* self_pointer, int source, std::uint64_t offset, const std::byte* bytes,
                     std::size_t size) {
  auto& self = *static_cast<PutCalls*>(self_pointer);
  self.check(source, offset, size, "put");
  std::memcpy(self.heap_ + offset, bytes, size);
}

void PutCalls::write_batch(void* self_pointer, int source, std::uint64_t, const std::byte* bytes,
                           std::size_t size) {
  auto& self = *static_cast<PutCalls*>(self_pointer);
  for (std::size_t at = 0; at < size;) {
    Record header{};
    if (size - at < sizeof header) self.malformed(source, at, size, "put batch");
    std::memcpy(&header, bytes + at, sizeof header);
    at += sizeof header;
    if (header.bytes > size - at) self.malformed(source, header.offset, header.bytes, "put batch");
    self.check(source, header.offset, header.bytes, "put batch");
    std::memcpy(self.heap_ + header.offset, bytes + at, header.bytes);
    at += std::min<std::size_t>((header.bytes + 7) / 8 * 8, size - at);
  }
}

void PutCalls::write_and_signal(void* self_pointer, int source, std::uint64_t offset,
                                const std::byte* bytes, std::size_t size) {
  auto& self = *static_cast<PutCalls*>(self_pointer);
  Signal signal{};
  if (size < sizeof signal) self.malformed(source, offset, size, "put_signal");
  const std::size_t data = size - sizeof signal;
  std::memcpy(&signal, bytes + data, sizeof signal);
  self.check(source, offset, data, "put_signal");
  self.check(source, signal.offset, sizeof(std::uint64_t), "put_signal");
  if (signal.offset % sizeof(std::uint64_t) != 0)
    self.malformed(source, signal.offset, sizeof(std::uint64_t), "put_signal");
  std::memcpy(self.heap_ + offset, bytes, data);
  // Seq_cst, as the rank's own atomics and UCX's emulated ones on this word:
  // a waiter that sees the signal sees the data written before it.
  std::atomic_ref<std::uint64_t> word(
      *reinterpret_cast<std::uint64_t*>(self.heap_ + signal.offset));
  if (signal.add)
    word.fetch_add(signal.value);
  else
    word.exchange(signal.value);
}

}  // namespace mpidsm::detail
