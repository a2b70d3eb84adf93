// Barrier updates (MPIDSM_BARRIER_REFETCH): across nodes, the pages a
// barrier invalidates that a rank used in the ending interval (an iterative
// code's halo rows) come back inside the barrier, sent by their homes.
//
// A reader subscribes at each barrier to the pages it used, per home (runs
// of pages, a bit per home in its exchange record; the runs travel only when
// they differ from the last ones, another bit). A home remembers each
// reader's last subscription, and at its next release pushes the pages of
// it that the home itself wrote, before the exchange (a bit per reader in
// its record): an iterative code's halo rows then arrive with the barrier
// itself. After the exchange every rank knows every notice, and every diff
// is at its home (writers flush before they exchange), so a home sends each
// subscriber, in a late answer, the subscribed pages some notice names that
// its push does not cover up to date: pages other ranks wrote, and pages
// new to the subscription. Reader and home decide the late answer's pages
// alike from the same facts (the subscription, the push, the notices), so
// the reader waits for one exactly when the home sends one.
//
// All of it travels as agreed messages (LibraryMessaging::send_agreed), keyed by
// the barrier, so no handler runs and nothing waits beyond what both sides
// know will come. A push to the rank the exchange's first record goes to
// rides in that record (SparseAllgather's rider): no message of its own.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <utility>
#include <vector>

#include "agreed_keys.hpp"
#include "mpidsm/transport.hpp"
#include "release_notice.hpp"
#include "transport/library_messaging.hpp"

namespace mpidsm::detail {

class BarrierUpdates {
 public:
  // `candidates`: the pages an interval may fetch through UCX at most
  // before note_fetched() stops listing them (room reserved up front).
  BarrierUpdates(Transport& transport, std::size_t page_size, std::size_t candidates);
  BarrierUpdates(const BarrierUpdates&) = delete;
  BarrierUpdates& operator=(const BarrierUpdates&) = delete;

  // Pages one push or late answer carries at most; further pages are
  // dropped by the reader as any invalidated copy is.
  static constexpr std::size_t kMaxPages = 64;
  // Runs of pages one subscription lists at most.
  static constexpr std::size_t kMaxRuns = 32;
  // Words of a rank's masks (a bit per rank each) in the exchange record:
  // homes subscribed to, homes sent new runs, readers pushed to.
  static constexpr std::size_t kMasks = 3;
  static std::size_t mask_words(int ranks) { return (static_cast<std::size_t>(ranks) + 63) / 64; }

  // What the barrier's notices say of a page: no definite notice, a
  // definite notice by its home alone, or one by another rank.
  enum class Noticed { no, by_home_only, by_others };
  using BytesOf = std::function<const std::byte*(std::size_t page)>;
  using HomeOf = std::function<int(std::size_t page)>;

  // --- between barriers, as a reader ---
  // A page fetched through UCX in this interval: a candidate for the next
  // barrier's subscriptions. Never allocates (the fault path calls it).
  void note_fetched(std::size_t page) {
    if (candidates_.size() < candidates_.capacity()) candidates_.push_back(page);
  }
  // The candidates, each once, sorted by `order` (home, then page).
  template <class Order>
  std::span<const std::size_t> candidates(Order&& order) {
    std::sort(candidates_.begin(), candidates_.end(), order);
    candidates_.erase(std::unique(candidates_.begin(), candidates_.end()), candidates_.end());
    return candidates_;
  }
  // The interval is over: its candidates go (later fetches are the next one's).
  void drop_candidates() { candidates_.clear(); }

  // --- before the exchange (the barrier's release is done) ---
  // Starts barrier `barrier`, after forget().
  void begin(std::uint64_t barrier) { barrier_ = barrier; }
  // Subscribes to `page` at `home`, in increasing (home, page) order; false
  // (not subscribed) when that would take more than kMaxRuns runs.
  bool subscribe(int home, std::size_t page);
  // As a home: composes a push for each reader whose last subscription
  // names pages this release surely changed (the definite notices of
  // `released` whose page `home_of` says is homed here).
  void prepare_pushes(std::span<const std::int64_t> released, const HomeOf& home_of,
                      const BytesOf& bytes_of);
  // The record's kMasks masks of `words` words each (zeroed).
  void mark(std::uint64_t* masks, std::size_t words);
  // The push to `reader` (none: empty), which then rides in the exchange's
  // message to it rather than in a message of its own (send() leaves it out).
  std::span<const std::uint64_t> push_riding_to(int reader);
  // Words a push from `home` takes at most: room for one riding in.
  std::size_t push_capacity_from(int home) const;
  // Sends the subscriptions and the pushes that do not ride (once the
  // record has left: a tcp send took 10-20 us on a simulated host).
  void send();

  // --- after the exchange ---
  // The push `home` sent riding in the exchange (empty: none did).
  void push_rode_from(int home, std::span<const std::uint64_t> words);

  // What the barrier's notices say: every writer's notices, writer r's
  // `sizes[r]` of them at `offsets[r]` of `incoming` (none: a failed barrier).
  void learn_notices(std::span<const std::int64_t> incoming, std::span<const int> sizes,
                     std::span<const int> offsets, const HomeOf& home_of);
  Noticed noticed(std::size_t page) const;
  // A subscribed page a notice names: its update is awaited.
  void await(std::size_t page) { awaited_.push_back(page); }
  // This barrier's subscribed and awaited pages (until forget()).
  std::span<const std::size_t> subscribed_pages() const { return subscribed_; }
  std::span<const std::size_t> awaited_pages() const { return awaited_; }
  // Receives the new runs of `renewers` (subscribers' runs are kept for the
  // next push; others' are forgotten), the pushes of `pushers`, and sends
  // and receives the late answers;
  // waits until every message has arrived or left. A `failed` barrier
  // sends no late answers.
  // `barrier` as begin() had it (a rank that holds a lock calls no begin()).
  void finish(std::uint64_t barrier, const std::vector<int>& subscribers,
              const std::vector<int>& renewers, const std::vector<int>& pushers, bool failed,
              const BytesOf& bytes_of);
  // After finish(): f(page, bytes) for each page to install: from a late
  // answer, or from a push when only its home noticed it (late answers
  // first: a page in both is installed from the late one).
  void for_each_update(const std::function<void(std::size_t, const std::byte*)>& f) const;
  // Pages this rank sent as a home (pushes and late answers) since the last
  // call.
  std::uint64_t take_pages_sent() { return std::exchange(pages_sent_, 0); }
  // Forgets this barrier's messages and pages; a reader's subscriptions go too
  // (after a failure in the exchange, a home may still hold them: its next
  // push is received and dropped). `resend`: the next subscriptions travel
  // whole, as homes may not hold what this rank believes they do.
  void forget(bool resend = false);

 private:
  // A list of pages with their bytes: count, page numbers, then the pages.
  struct PageList {
    std::vector<std::uint64_t> words;
    std::uint64_t count() const { return words.empty() ? 0 : words[0]; }
    std::uint64_t page(std::size_t i) const { return words[1 + i]; }
    const std::byte* bytes(std::size_t i, std::size_t page_size) const {
      return reinterpret_cast<const std::byte*>(words.data() + 1 + count()) + i * page_size;
    }
    bool contains(std::uint64_t page) const;
  };
  struct Subscription {  // this rank's, to one home
    int home;
    std::size_t begin, end;  // its runs in outgoing_: (first, count) pairs
    std::size_t pages;
    bool renewed;  // the runs differ from those the home holds: they travel
  };
  struct Peer {
    std::vector<std::uint64_t> standing;  // as a home: the reader's last subscription's runs
    std::vector<std::uint64_t> held;      // as a reader: the runs the home holds of ours
    PageList push_out;                    // as a home: this barrier's push to the reader
    PageList push_in;                     // as a reader: the home's push
    PageList late_out;                    // as a home: the late answer to the reader
    PageList late_in;                     // as a reader: the home's late answer
    std::size_t last_pages = 0;           // as a reader: pages last subscribed to at the home
    bool push_rides = false;              // as a home: push_out rides in the exchange
    bool push_rode = false;               // as a reader: push_in rode in the exchange
  };
  enum Kind : std::uint32_t { kSubscription, kPush, kLate };
  std::uint32_t key(Kind kind) const { return barrier_update_key(barrier_ * 3 + kind); }
  std::size_t list_words(std::size_t pages) const {
    return 1 + pages + pages * page_size_ / sizeof(std::uint64_t);
  }
  // The pages of `runs` (first, count pairs) a late answer carries.
  template <class F>
  void late_pages(const std::uint64_t* runs, std::size_t run_words, const PageList& push,
                  F&& f) const;
  void fill(PageList& list, const std::vector<std::uint64_t>& pages, const BytesOf& bytes_of) const;
  // Throws unless `bytes` of a push from `home` whose head says `pages` are
  // a list of pages.
  void check_push(int home, std::uint64_t pages, std::size_t bytes) const;
  void wait_all();

  Transport& transport_;
  LibraryMessaging messaging_;
  std::size_t page_size_;
  std::uint64_t barrier_ = 0;
  std::uint64_t pages_sent_ = 0;
  std::vector<Subscription> subscriptions_;
  std::vector<std::uint64_t> outgoing_;  // every subscription's runs
  std::vector<Peer> peers_;              // per rank
  std::vector<std::uint64_t> scratch_;   // page lists being composed
  std::vector<Request> sends_;           // subscriptions and pushes, until finish()
  std::vector<Request> requests_;        // finish()'s receives and late answers
  std::vector<std::size_t> candidates_;  // note_fetched's pages (capacity reserved)
  std::vector<std::size_t> subscribed_;  // this barrier's subscriptions
  std::vector<std::size_t> awaited_;     // subscribed pages a notice names
  std::vector<std::size_t> written_;     // sorted: pages homed here this release surely changed
  // Sorted: each definite notice of the barrier, and whether its writer is the page's home.
  std::vector<std::pair<std::size_t, bool>> noticed_;
};

}  // namespace mpidsm::detail
