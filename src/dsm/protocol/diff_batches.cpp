#include "diff_batches.hpp"

#include <algorithm>

#include "diff_message.hpp"

namespace mpidsm::detail {

DiffBatches::DiffBatches(Transport& transport, const DiffKernelOps& kernel, std::size_t page_size,
                         Transport::RemoteHandler apply, void* context, std::uint64_t& messages)
    : transport_(&transport),
      kernel_(kernel),
      page_size_(page_size),
      handler_(transport.add_remote_handler(apply, context)),
      capacity_(capacity_for(page_size)),
      pool_(kBuffers * capacity_),
      batches_(static_cast<std::size_t>(transport.size())),
      messages_(messages) {
  free_.reserve(kBuffers);
  sent_.reserve(kBuffers);
  sent_homes_.reserve(batches_.size());
  for (int b = static_cast<int>(kBuffers); b-- > 0;) free_.push_back(b);
}

// 64 KiB: a message of 15 scattered pages, still sent eagerly by UCX.
std::size_t DiffBatches::capacity_for(std::size_t page_size) {
  return std::max<std::size_t>(64 * 1024, 2 * max_diff_record(page_size));
}

DiffBatches::~DiffBatches() {
  if (transport_) transport_->remove_remote_handler(handler_);
}

DiffShape DiffBatches::add(int home, std::size_t page, const std::byte* twin,
                           const std::byte* data) {
  Batch& batch = batches_[static_cast<std::size_t>(home)];
  if (batch.buffer != kNone && capacity_ - batch.used < max_diff_record(page_size_)) send(home);
  if (batch.buffer == kNone) {
    if (free_.empty()) complete_all();
    batch.buffer = free_.back();
    free_.pop_back();
    batch.used = 0;
  }
  DiffShape shape;
  const std::size_t length =
      encode_diff(kernel_, page, twin, data, page_size_, buffer(batch.buffer) + batch.used, shape);
  // An unchanged page changes nothing at its home: its record would only
  // cost a message and a flush (a copy a lock's release kept writable is
  // often found unchanged at the next lock's release, bound for another home).
  if (shape.bytes == 0) {
    if (batch.used == 0) {
      free_.push_back(batch.buffer);
      batch.buffer = kNone;
    }
    return shape;
  }
  batch.used += length;
  return shape;
}

void DiffBatches::send(int home) {
  Batch& batch = batches_[static_cast<std::size_t>(home)];
  // Out of the batch first: a failed call leaves the buffer in flight
  // rather than reused while UCX may still read it.
  const int buffer_index = batch.buffer;
  batch.buffer = kNone;
  sent_.push_back(buffer_index);
  if (!batch.sent) {
    batch.sent = true;
    sent_homes_.push_back(home);
  }
  ++messages_;
  transport_->call_nbi(home, handler_, buffer(buffer_index), batch.used);
}

void DiffBatches::send() {
  for (std::size_t home = 0; home < batches_.size(); ++home)
    if (batches_[home].buffer != kNone) send(static_cast<int>(home));
}

std::span<const std::byte> DiffBatches::take(int home) {
  Batch& batch = batches_[static_cast<std::size_t>(home)];
  if (batch.buffer == kNone) return {};
  const int buffer_index = batch.buffer;
  batch.buffer = kNone;
  free_.push_back(buffer_index);  // reused by the next add() at the earliest
  return {buffer(buffer_index), batch.used};
}

void DiffBatches::recycle() {
  free_.insert(free_.end(), sent_.begin(), sent_.end());
  sent_.clear();
  for (const int home : sent_homes_) batches_[static_cast<std::size_t>(home)].sent = false;
  sent_homes_.clear();
}

// Only when a release fills every buffer (hundreds of scattered pages at
// once): one flush of every peer then costs little beside the messages.
void DiffBatches::complete_all() {
  send();
  transport_->flush_all();
  recycle();
}

}  // namespace mpidsm::detail
