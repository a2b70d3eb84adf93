// Barrier updates (MPIDSM_BARRIER_REFETCH): across nodes, the pages a
// barrier invalidates that a rank used in the ending interval (an iterative
// code's halo rows) come back inside the barrier, sent by their homes.
//
// Before the count exchange, a reader subscribes to each home it used pages
// of: one answered call listing them as runs, and a bit per home in its
// exchange record. After the exchange every home knows its subscribers and
// every notice, and every diff of the interval has reached it (writers
// flush before they exchange), so it answers each subscription with the
// subscribed pages the barrier's notices name, taken from its master copy.
// The reader installs them in place of the copies it would have dropped.
//
// The subscription travels while the exchange does, so the pages arrive
// about one network latency after it: a refetch after the exchange took a
// round trip plus one more collective that kept the homes polling until
// every reader had its pages (measured across two simulated hosts: see
// docs/consistency.md).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <vector>

#include "mpidsm/transport.hpp"

namespace mpidsm::detail {

class BarrierUpdates {
 public:
  // Collective (registers the subscription handler).
  BarrierUpdates(Transport& transport, std::size_t page_size);
  ~BarrierUpdates();
  // The transport is gone: nothing to unregister.
  void abandon_transport() { transport_ = nullptr; }
  BarrierUpdates(const BarrierUpdates&) = delete;
  BarrierUpdates& operator=(const BarrierUpdates&) = delete;

  // Pages one answer carries at most; further noticed pages of a
  // subscription are dropped by the reader as any invalidated copy is.
  static constexpr std::size_t kMaxAnswerPages = 64;
  // Runs of pages one subscription lists at most, so a home keeps every
  // reader's in memory reserved up front: its handler may run inside a
  // fault resolved in the signal handler, where nothing may allocate.
  static constexpr std::size_t kMaxRuns = 32;
  // Words of a rank's subscription mask in the exchange record.
  static std::size_t mask_words(int ranks) { return (static_cast<std::size_t>(ranks) + 63) / 64; }

  // --- as a reader ---
  // Starts barrier `barrier`'s subscriptions (the last ones are forgotten).
  void begin(std::uint64_t barrier);
  // Subscribes to `page` at `home`, in increasing (home, page) order; false
  // (not subscribed) when that would take more than kMaxRuns runs.
  bool add(int home, std::size_t page);
  bool any() const { return !subscriptions_.empty(); }
  // Sets a bit per home subscribed to in `mask` (mask_words).
  void mark(std::uint64_t* mask) const;
  // Sends the subscriptions (once the exchange record has left: the home
  // needs them only once it has every record).
  void subscribe();
  // Waits for every answer, checking its form; Errc::transport naming the
  // home otherwise.
  void await();
  // After await(): f(page, bytes) for each page a home sent.
  void for_each_update(const std::function<void(std::size_t, const std::byte*)>& f) const;
  // Forgets this barrier's subscriptions (answered or not).
  void forget();

  // --- as a home ---
  // Answers the subscription of each of `subscribers` to `barrier` (waiting
  // for those not here yet) with its pages `written` says changed, read at
  // `bytes_of(page)`, and waits until every answer has left. An empty
  // `written` answers with no pages (a barrier that failed).
  void serve(const std::vector<int>& subscribers, std::uint64_t barrier,
             const std::function<bool(std::size_t)>& written,
             const std::function<const std::byte*(std::size_t)>& bytes_of);

 private:
  struct Subscription {
    int home;
    std::size_t begin, end;  // its words in outgoing_: the barrier, then (first, count) runs
    std::size_t pages;
    std::size_t answer;  // its answer's first word in answers_
  };
  struct Pending {
    bool arrived = false;
    Transport::PendingAnswer ticket;
    std::vector<std::uint64_t> words;
  };
  static constexpr std::size_t kMaxWords = 1 + 2 * kMaxRuns;  // a subscription's
  std::size_t answer_bytes(std::size_t pages) const {
    return (1 + pages) * sizeof(std::uint64_t) + pages * page_size_;
  }
  static Transport::Answer take(void* self, int source, const std::byte* bytes, std::size_t size);

  Transport* transport_;
  std::size_t page_size_;
  // Reader side.
  std::vector<Subscription> subscriptions_;
  std::vector<std::uint64_t> outgoing_;
  std::vector<std::uint64_t> answers_;  // count, page numbers, then the pages
  std::vector<Request> requests_;       // per subscription
  // Home side: one subscription per rank at most (a reader subscribes again
  // only after this home answered it).
  std::mutex pending_mutex_;
  std::vector<Pending> pending_;     // per rank
  std::vector<std::uint64_t> runs_;  // serve()'s copy of a subscription
  std::vector<std::vector<std::uint64_t>> replies_;
  std::vector<Request> sends_;
  std::uint32_t handler_;  // registered last: the handler may run at once
};

}  // namespace mpidsm::detail
