// Small puts as remote calls, for peers whose memory UCX reaches through
// active messages (tcp). There a put is an active message anyway, which the
// target acknowledges; UCX's flush then adds its own round trip (a
// zero-length put and its acknowledgement), so put + quiet cost two round
// trips where Open MPI's osc/pt2pt takes one. As a call (the heap offset in
// its header, the data as its payload) the put's acknowledgement is its
// remote completion, and quiet waits for nothing else (Transport::flush
// skips UCX's flush where no put, get or atomic went). put_signal is one
// call too: the handler writes the data, then the signal word.
//
// Used only when every rank reaches every peer not mapped on its node
// through messages (agreed at construction): the signal handler changes
// the word with CPU atomics, which must never race a NIC's atomics on it.
// Ordering: fence() keeps its meaning because calls, UCX's emulated puts
// and atomics to one peer all travel as active messages on the endpoint's
// one tcp lane, which the target handles in arrival order.
//
// Larger puts there are landing calls (LibraryMessaging::call_landing):
// UCX's rendezvous moves the data into the target's heap in one transfer,
// where its emulated put sends, copies and acknowledges every 8 KiB. They
// land in any order among themselves (as puts do without a fence); any
// other operation to that peer, and fence, waits until they have landed,
// so everything else keeps its order.
//
// Small non-blocking puts (put_nbi, iput) are gathered per peer, as Open
// MPI's osc/pt2pt gathers a window's puts until its flush: one call then
// carries many, and a put costs a copy instead of a message. A peer's
// batch goes before any other operation to that peer (so their order
// holds), when it fills, and at quiet, barrier and every wait (so a rank
// that waits never holds back the puts its peers may be waiting for).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "mpidsm/pgas.hpp"
#include "mpidsm/transport.hpp"

namespace mpidsm::detail {

class PutCalls {
 public:
  // Puts of at most this many bytes go as calls: one eager message.
  static constexpr std::size_t kMaxBytes = 8192;

  // Collective. `heap`: this rank's part (every rank's has `size` bytes);
  // `mapped[r]`: rank r's heap is mapped here (no call to it).
  PutCalls(Transport& transport, std::byte* heap, std::size_t size,
           const std::vector<std::byte*>& mapped, bool wanted);
  ~PutCalls();
  PutCalls(const PutCalls&) = delete;
  PutCalls& operator=(const PutCalls&) = delete;
  // The transport is gone (its Runtime finalized first): nothing to unregister.
  void abandon_transport() { transport_ = nullptr; }

  // Non-blocking puts of at most this many bytes are gathered: every put
  // that would be a call (puts of 4-8 KiB measured 1.8-2.1x MPI gathered,
  // 0.5-0.8x alone, across 1+1 hosts).
  static constexpr std::size_t kMaxGathered = 8192;
  // Bytes of one peer's batch: still one eager message over tcp.
  static constexpr std::size_t kBatchBytes = 32768;

  bool takes(std::size_t bytes) const { return used_ && bytes <= kMaxBytes; }
  bool gathers(std::size_t bytes) const { return used_ && bytes <= kMaxGathered; }
  // Return once `src` may be reused; remote completion comes with quiet
  // (for a gathered put: once its batch was sent, which quiet does first).
  void put(int rank, std::size_t offset, const void* src, std::size_t bytes);
  void gather(int rank, std::size_t offset, const void* src, std::size_t bytes);
  // Puts of at least this many bytes land by rendezvous. Below it UCX's
  // emulated put, whose fragments stream without waiting for the target,
  // was faster (put_bw across 1+1 hosts, 16-64 KiB: 1.23-1.27x MPI against
  // 0.79-1.15 landing); from 256 KiB landing was (docs/pgas.md).
  static constexpr std::size_t kMinLanding = 131072;
  bool lands(std::size_t bytes) const { return used_ && bytes >= kMinLanding; }
  // Returns at once: `src` stays unchanged until quiet.
  void land_nbi(int rank, std::size_t offset, const void* src, std::size_t bytes);
  // Completes once `src` may be reused; remote completion comes with quiet.
  Request land(int rank, std::size_t offset, const void* src, std::size_t bytes);
  // Before another operation to `rank` (not a large put): sends its batch,
  // if it has one, and waits for its large puts to land.
  void send(int rank) {
    send_batch_of(rank);
    if (landing_any_.load(std::memory_order_acquire)) wait_landed(rank);
  }
  // fence(): every large put issued before it lands before anything after it.
  void wait_all_landed();
  // After quiet, which waited for every call: no large put is in flight.
  void forget_landed();
  // Sends every batch (quiet, barrier, waits).
  void send_all() {
    if (pending_.load(std::memory_order_acquire) != 0) send_all_locked();
  }
  // The data lands before the signal word changes; `src` may be reused on return.
  void put_signal(int rank, std::size_t offset, const void* src, std::size_t bytes,
                  std::size_t signal_offset, std::uint64_t value, SignalOp op);

 private:
  struct Signal {
    std::uint64_t offset;
    std::uint64_t value;
    std::uint64_t add;  // SignalOp::add, else set
  };
  // A gathered put in a batch: its header, then its bytes padded to 8.
  struct Record {
    std::uint64_t offset;
    std::uint64_t bytes;
  };
  static constexpr int kNone = -1;
  static constexpr std::size_t kBuffers = 16;
  std::byte* buffer(int index) { return &pool_[static_cast<std::size_t>(index) * kBatchBytes]; }
  // Sends `rank`'s batch, if it has one (what was gathered goes first).
  void send_batch_of(int rank) {
    if (pending_.load(std::memory_order_acquire) != 0) send_locked(rank);
  }
  void send_locked(int rank);
  void send_all_locked();
  void send_batch(int rank);  // with mutex_ held
  void wait_landed(int rank);
  void note_landing(int rank);
  static std::byte* place(void* self, int source, std::uint64_t offset, std::size_t size);

  static void write(void* self, int source, std::uint64_t offset, const std::byte* bytes,
                    std::size_t size);
  static void write_batch(void* self, int source, std::uint64_t, const std::byte* bytes,
                          std::size_t size);
  static void write_and_signal(void* self, int source, std::uint64_t offset, const std::byte* bytes,
                               std::size_t size);
  // Aborts on a call outside the heap: the caller checked it, so a protocol bug.
  void check(int source, std::uint64_t offset, std::size_t size, const char* what) const;
  [[noreturn]] void malformed(int source, std::uint64_t offset, std::size_t size,
                              const char* what) const;

  Transport* transport_;
  std::byte* heap_;
  std::size_t size_;
  bool used_;
  // One-sided calls may come from any thread: the batches and the staging
  // buffer are shared.
  std::mutex mutex_;
  std::vector<std::byte> staging_;       // put_signal's data and signal, one message
  std::vector<std::byte> pool_;          // kBuffers batches (only where calls are used)
  std::vector<int> free_;                // buffer indices
  std::vector<int> batch_of_;            // per rank: its batch's buffer, or kNone
  std::vector<std::size_t> filled_;      // per buffer: bytes gathered
  std::vector<int> waiting_;             // ranks with a batch, in the order they got one
  std::atomic<std::size_t> pending_{0};  // waiting_.size(), read without the mutex
  // Per rank: large puts that may not have landed yet; and whether any rank has some.
  std::unique_ptr<std::atomic<bool>[]> landing_;
  std::atomic<bool> landing_any_{false};
  std::uint32_t write_id_;
  std::uint32_t signal_id_;
  std::uint32_t batch_id_;
  std::uint32_t landing_id_;
};

}  // namespace mpidsm::detail
