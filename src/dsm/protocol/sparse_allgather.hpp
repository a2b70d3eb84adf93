// A dissemination (Bruck) allgather of what ranks have to say, where most
// ranks say nothing: every rank learns every non-empty contribution in
// ceil(log2 N) rounds of one message each way, and receives each
// contribution exactly once. A rank's cost is then log N messages plus the
// words the others said, not N records: a clean DSM barrier across nodes
// moves a word per round, as MPI_Barrier's own dissemination does, and a
// barrier after a few written pages the notices of those pages.
//
// Messages travel through UCX as agreed messages (LibraryMessaging) on the
// lane that wakes no progress thread (the receiver waits for them), each
// round's first in one message of up to kFirstWords words (after its
// two-word head), whose head says how many follow in a second. The first
// round's first message may carry a rider: words its sender has for that
// one peer (a barrier's push of pages to a reader, barrier_updates.hpp),
// which then costs no message of its own. Across hosts a send runs the
// sender's whole network stack, so one message instead of two is most of
// what a barrier with a halo page costs beyond a clean one. Waits end with
// an error naming a rank that died.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "mpidsm/transport.hpp"
#include "transport/library_messaging.hpp"

namespace mpidsm::detail {

class SparseAllgather {
 public:
  // Words of a round's first message's contributions at most (after its
  // head): 8 KiB with the head. A second message costs more than its
  // bytes: it arrives before its receive is posted, and across hosts UCX
  // sent even 2 KiB by rendezvous (a DSM barrier after 256 written pages
  // took 27.7 us with 64-word first messages, 10.2 us with these).
  static constexpr std::size_t kFirstWords = 1022;

  // What rides in the first round's message: `out` goes to rider_to(), and
  // up to `in_capacity` words may come from rider_from().
  struct Rider {
    std::span<const std::uint64_t> out;
    std::size_t in_capacity = 0;
  };

  // Collective over the transport's ranks.
  explicit SparseAllgather(Transport& transport);
  SparseAllgather(const SparseAllgather&) = delete;
  SparseAllgather& operator=(const SparseAllgather&) = delete;

  // The peers of the first round: the one this rank's rider goes to, and
  // the one whose rider it may receive (the same rank when there are two;
  // none, -1, when there is one).
  int rider_to() const { return ranks_ > 1 ? (rank_ + ranks_ - 1) % ranks_ : -1; }
  int rider_from() const { return ranks_ > 1 ? (rank_ + 1) % ranks_ : -1; }

  // Collective: `mine` (empty: this rank has nothing to say) reaches every
  // rank. Returns the contributions, each as [rank, size, size words], of
  // every rank whose contribution was not empty, this rank's first, then by
  // rank distance after it. `after_first_send` runs once `mine` has been
  // handed to UCX, while the first round is in flight (what it sends
  // travels beside the exchange, not after it). Valid until the next
  // exchange, as is rider_in().
  std::span<const std::int64_t> exchange(std::span<const std::int64_t> mine, Rider rider,
                                         const std::function<void()>& after_first_send,
                                         const char* operation);
  // The rider rider_from() sent in the last exchange (empty: none).
  std::span<const std::uint64_t> rider_in() const { return rider_in_; }

  // Calls f(rank, words) for each contribution of an exchange's result.
  template <class F>
  static void for_each(std::span<const std::int64_t> entries, F&& f) {
    for (std::size_t at = 0; at < entries.size();) {
      const auto size = static_cast<std::size_t>(entries[at + 1]);
      f(static_cast<int>(entries[at]), entries.subspan(at + 2, size));
      at += 2 + size;
    }
  }

 private:
  // A round's first message starts with the words of contributions it and
  // its second carry, then the rider's words.
  static constexpr std::size_t kHead = 2;
  // The records wake no progress thread: their receiver waits for them.
  static constexpr LibraryMessaging::Lane kLane = LibraryMessaging::Lane::messages;
  // Agreed-message keys an exchange takes: two per round.
  static constexpr std::uint64_t kKeysPerExchange = 64;

  // One round: sends the contributions held that lie less than `limit`
  // ranks after this one to the rank `distance` before, and appends those
  // the rank `distance` after sends. `after_send` (if any) runs once the
  // sends are posted; when it throws, the round completes first.
  void round(int distance, int limit, unsigned index, const Rider& rider, const char* operation,
             const std::function<void()>* after_send);
  // The words of held_ that belong to contributions less than `limit`
  // ranks after this one.
  std::size_t words_within(int limit) const;
  // What a round's first message that arrived says of itself: the words of
  // contributions it and its second carry, those it carries, its rider's.
  struct Head {
    std::size_t words, first, riding;
  };
  Head head_in() const;
  void receive_rest(Request& first, int from, unsigned index, std::size_t rider_capacity,
                    const char* operation);
  std::uint32_t key(unsigned round, unsigned part) const;

  LibraryMessaging messaging_;
  int rank_;
  int ranks_;
  std::uint64_t exchanges_ = 0;
  std::vector<std::int64_t> held_;       // contributions, by rank distance from this one
  std::vector<std::int64_t> first_out_;  // a round's first message: head, words, rider
  std::vector<std::int64_t> first_in_;
  std::vector<std::int64_t> rest_in_;
  std::vector<std::uint64_t> rider_in_;
};

}  // namespace mpidsm::detail
