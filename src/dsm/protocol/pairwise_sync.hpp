// Pairwise synchronisation (Dsm::sync_with): a release, then one message
// each way with every listed peer (sync_message.hpp) carrying the write
// notices that peer is owed (sync_log.hpp), then the acquire of what the
// peers' messages name. A stencil code syncs with its neighbours only, as
// its MPI twin exchanges halos with them only: no rank waits for ranks it
// shares nothing with, which a barrier makes it do.
//
// A noticed page this rank used keeps its copy (and its home's count of it)
// and is brought up to date in place; the other noticed pages leave the
// cache. Up to date how:
//   - Pushed: a home sends, with its notices, the bytes of the pages it
//     wrote that the peer asked for (the pages it used when they last
//     changed: a stencil's halo rows). No round trip.
//   - Fetched: every other used page, from its home, all at once (one call
//     or get per run). Every diff is complete at its home before its
//     writer's message leaves, so the fetch holds the writes of the peers.
//
// A push is a copy of the home's page taken as the home entered this sync,
// so it may lack changes that reached the home since: another rank's diff,
// or this rank's own. Installing it would then hide writes this rank has
// already acquired (or made). So this rank stamps each page when it learns
// of such a change (it releases the page, or a notice from a rank other
// than the home invalidates or updates it), with a counter it advances at
// each sync as its messages leave. A push from home q is installed only if
// the page's stamp is no later than this rank's previous sync with q: every
// such change then reached q before this rank's previous message did, and
// so before q's copy was taken. Otherwise the page is fetched.
//
// This type owns the protocol's state and messages; the engine owns the
// pages, and answers for them through the acquire's PageSide.
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <span>
#include <vector>

#include "dsm/memory/lazy_array.hpp"
#include "mpidsm/transport.hpp"
#include "release_notice.hpp"
#include "sync_log.hpp"
#include "sync_message.hpp"

namespace mpidsm::detail {

class PairwiseSync {
 public:
  // What the sync asks the engine of a page, and tells it to do.
  class PageSide {
   public:
    // The page is in the region and not homed here (a notice of it concerns a copy).
    virtual bool copied(std::size_t page) const = 0;
    virtual int home_of(std::size_t page) const = 0;
    // The bytes of a page homed here, to push.
    virtual const std::byte* home_bytes(std::size_t page) const = 0;
    // This rank used its copy since it was last brought up to date.
    virtual bool used(std::size_t page) = 0;
    virtual void invalidate(std::size_t page) = 0;
    // A page homed here that a peer changed (its diff is in this rank's
    // copy already, which no notice needs to update).
    virtual void changed_at_home(std::size_t page) = 0;
    // Installs a pushed page's bytes as its copy.
    virtual void install(std::size_t page, const std::byte* bytes) = 0;

   protected:
    ~PageSide() = default;
  };

  PairwiseSync(int rank, int ranks, std::size_t pages, std::size_t page_size);

  // Held for a whole sync_with (taken before the engine's lock): the scratch
  // and the order of the messages belong to one call at a time.
  std::mutex& one_call() { return one_call_; }

  // This rank released `notice`'s page: owed to every peer until a barrier,
  // and a push taken before now may lack it.
  void record_release(std::int64_t notice) {
    log_.record(notice);
    changed_[ReleaseNotice::page(notice)] = stamp_;
  }
  // Another rank's change to `page` reached this rank (a notice dropped or
  // refreshed the copy): a push taken before now may lack it.
  void record_change(std::size_t page) { changed_[page] = stamp_; }
  // A barrier delivered every notice a sync still owed.
  void barrier_delivered() { log_.reset(); }

  // Errc::invalid_rank or Errc::invalid_argument unless every peer is
  // another rank, listed once.
  void check_peers(std::span<const int> peers);
  // This sync's release comes next.
  void begin() { ++stamp_; }
  // Each peer's message (status 0: this rank's release succeeded, then with
  // the notices owed from `since_barrier`, this rank's notices since the
  // last barrier, and the bytes of the pages it pushes).
  void compose(std::span<const int> peers, std::int64_t status,
               std::span<const std::int64_t> since_barrier, const PageSide& pages);
  // Sends the messages and receives the peers'; returns the first peer whose
  // release failed, or -1. Errc::transport on a malformed message.
  int exchange(Transport& transport, std::span<const int> peers);
  // The Errc of peer `i`'s failed release (its status word).
  std::int64_t status(std::size_t i) const { return views_[i].status; }

  // The acquire of the peers' notices: pages this rank did not use leave
  // the cache; used ones are installed from a safe push, or listed in
  // `refresh` to be fetched afresh.
  void acquire(std::span<const int> peers, PageSide& pages, std::vector<std::size_t>& refresh);

  // For tests: peer `i`'s composed first message, and a first message
  // received from peer `i` (as exchange() would parse it); false when malformed.
  std::span<const std::int64_t> outgoing(std::size_t i) const { return outgoing_[i]; }
  bool accept(std::size_t i, std::span<const std::int64_t> words);

 private:
  struct Peer {                         // per rank
    std::uint64_t count = 0;            // syncs with it: the message keys
    std::uint64_t stamp = 0;            // stamp_ as this rank's last message to it left (0: none)
    std::vector<std::int64_t> asked;    // pages homed there asked for at the last sync
    std::vector<std::int64_t> wanted;   // pages homed there to ask for at the next one
    std::vector<std::int64_t> push_to;  // pages homed here it asked for at its last sync
  };
  // Calls f(page) for each page peer i's notices name.
  template <class F>
  void for_each_notice(std::size_t i, F&& f) const;
  // Calls f(page) for each page peer i's notices name that pages.copied accepts.
  template <class F>
  void for_each_noticed(std::size_t i, const PageSide& pages, F&& f) const;

  int rank_;
  std::size_t pages_;
  std::size_t page_words_;
  std::mutex one_call_;
  SyncLog log_;                       // notices each peer is owed
  std::vector<Peer> peers_;           // per rank
  std::uint64_t stamp_ = 1;           // advanced as each sync starts and as its messages leave
  LazyArray<std::uint64_t> changed_;  // per page: stamp_ when it last changed (see above)
  // Scratch, per listed peer (but listed_: per rank).
  std::vector<std::vector<std::int64_t>> outgoing_, notices_, incoming_, overflow_;
  std::vector<SyncMessage::View> views_;
  std::vector<std::uint64_t> previous_stamp_;
  std::vector<std::size_t> expected_pushes_;
  std::vector<std::uint64_t> keys_;  // the first of the sync's two message keys
  std::vector<std::int64_t> pushed_;
  std::vector<Request> requests_;
  std::vector<bool> listed_;
};

}  // namespace mpidsm::detail
