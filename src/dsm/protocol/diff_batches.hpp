// Diffs bound for homes reached through UCX, gathered per home and sent as
// remote calls the home applies (diff_message.hpp): a release costs one
// message per home (and per batch of pages that fills a buffer), not a put
// per run of changed bytes. Buffers come from a fixed pool, so releases and
// evictions never allocate; when the pool runs dry, what is gathered is sent
// and completed first.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "diff_kernels.hpp"
#include "dsm/memory/lazy_array.hpp"
#include "mpidsm/transport.hpp"

namespace mpidsm::detail {

class DiffBatches {
 public:
  // Collective: registers `apply` (with `context`) as the remote handler
  // that applies diffs at a home, until destruction. Every message sent
  // adds one to `messages`.
  DiffBatches(Transport& transport, const DiffKernelOps& kernel, std::size_t page_size,
              Transport::RemoteHandler apply, void* context, std::uint64_t& messages);
  ~DiffBatches();
  DiffBatches(const DiffBatches&) = delete;
  DiffBatches& operator=(const DiffBatches&) = delete;
  // The transport is gone: nothing to unregister.
  void abandon_transport() { transport_ = nullptr; }

  // Bytes one batch holds at most.
  static std::size_t capacity_for(std::size_t page_size);

  // Gathers the changes of `page` (against `twin`) for `home`; an unchanged
  // page adds nothing. Completion: send() and then a flush of the home.
  DiffShape add(int home, std::size_t page, const std::byte* twin, const std::byte* data);
  // Sends every batch gathered so far.
  void send();
  // A batch to `home` was sent since the last recycle(): a flush of it is due.
  bool in_flight(int home) const { return batches_[static_cast<std::size_t>(home)].sent; }
  // The batch gathered for `home` and not sent, taken out for the caller to
  // deliver in a message of its own (a lock's release: diffs_message.hpp's
  // format); empty when there is none. The bytes stay until the next add().
  std::span<const std::byte> take(int home);
  // Every home sent to has been flushed since the last send(): the buffers
  // are free again.
  void recycle();

 private:
  static constexpr std::size_t kBuffers = 16;
  static constexpr int kNone = -1;
  std::byte* buffer(int index) { return &pool_[static_cast<std::size_t>(index) * capacity_]; }
  void send(int home);
  void complete_all();  // sends, flushes every peer, recycles

  Transport* transport_;
  const DiffKernelOps& kernel_;
  std::size_t page_size_;
  std::uint32_t handler_;
  std::size_t capacity_;       // bytes per buffer
  LazyArray<std::byte> pool_;  // kBuffers buffers (memory only once used)
  std::vector<int> free_;      // buffer indices
  std::vector<int> sent_;      // buffers in flight until recycle()
  struct Batch {
    int buffer = kNone;
    std::size_t used = 0;
    bool sent = false;  // since the last recycle()
  };
  std::vector<Batch> batches_;   // per home
  std::vector<int> sent_homes_;  // whose `sent` recycle() clears: not a pass over every home
  std::uint64_t& messages_;
};

}  // namespace mpidsm::detail
