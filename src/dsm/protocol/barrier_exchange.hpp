// The DSM barrier's exchange: every rank's count of write notices (or a mark
// that it holds a lock or that its release failed), which is the barrier
// itself, then the notices. On one node the counts go through words every
// rank maps, published by a dissemination barrier on shared words; across
// nodes they travel through a sparse allgather over UCX (sparse_allgather.hpp),
// with the notices and the ranks the barrier updates' masks name
// (barrier_updates.hpp): log N rounds, and only what ranks with something
// to say said. A rank that died ends the wait with an error naming it.
//
// A barrier entered inside a critical section can end (with an error on
// every rank) only if the lock's waiters join it: the holder raises every
// rank's beacon word first, and a waiter that sees its own raised abandons
// its wait and joins the barrier.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "dsm/memory/lazy_vector.hpp"
#include "dsm/memory/shared_words.hpp"
#include "mpidsm/transport.hpp"
#include "sparse_allgather.hpp"

namespace mpidsm::detail {

class BarrierExchange {
 public:
  // What a rank contributes instead of its count when it called the barrier
  // inside a critical section, or when its release failed.
  static constexpr std::int64_t kHoldsLock = -1;
  static constexpr std::int64_t kFailed = -2;
  // A count's bits from kVoteShift carry a small vote the exchange passes on
  // without reading it (home_moves.hpp: 0 is the usual vote, so a clean
  // barrier's count stays 0).
  static constexpr unsigned kVoteShift = 56;
  static constexpr std::int64_t kVoteMask = std::int64_t{3} << kVoteShift;
  static constexpr std::int64_t with_vote(std::int64_t notices, unsigned vote) {
    return notices | (static_cast<std::int64_t>(vote) << kVoteShift);
  }
  // What a count (or kHoldsLock, kFailed) says: notices, and the vote.
  static constexpr std::int64_t notices_in(std::int64_t count) {
    return count < 0 ? 0 : count & ~kVoteMask;
  }
  static constexpr unsigned vote_in(std::int64_t count) {
    return count < 0 ? 0 : static_cast<unsigned>((count & kVoteMask) >> kVoteShift);
  }

  // Kept across barriers, so a barrier allocates nothing once warm.
  struct Scratch {
    LazyVector<std::int64_t> outgoing;   // this rank's notices; reserved for every page
    std::vector<std::int64_t> counts;    // per rank: its count (or kHoldsLock, kFailed)
    std::vector<std::int64_t> incoming;  // every rank's notices, laid out by sizes and offsets
    std::vector<int> sizes, offsets;
    std::vector<std::int64_t> records;  // across nodes, what this rank says: count, notices, marks
    // The barrier updates' masks of a bit per rank each (empty on one node).
    std::vector<std::uint64_t> mask;
    std::vector<int> subscribers;  // ranks subscribed to this one's pages
    std::vector<int> renewers;     // of those, ranks that sent new runs
    std::vector<int> pushers;      // ranks that pushed pages to this one
    // Across nodes: the lock moves this rank proposes (lock_homes.hpp), and
    // every rank's, which the records carry after their marks.
    std::vector<std::int64_t> lock_moves_out, lock_moves_in;
  };

  // Collective. `pages`: the most notices a rank sends.
  BarrierExchange(MPI_Comm comm, Transport& transport, const MappablePeers& mappable,
                  std::size_t pages);
  // The transport is gone: forget the words without deregistering them.
  void abandon_transport() { slots_.abandon_transport(); }

  // Every rank's words are mapped here (one node): counts go through them.
  bool direct() const { return slots_.direct(); }
  Scratch& scratch() { return scratch_; }

  // The barrier: `mine` (x.outgoing.size() with a vote, kHoldsLock or kFailed) from
  // every rank into x.counts. Across nodes x.mask travels too and
  // x.subscribers, x.renewers and x.pushers get the ranks whose masks name
  // this one; `while_in_flight` runs once this rank's part has left. True
  // when the notices rode along (across nodes, always: x.incoming, x.sizes,
  // x.offsets filled). Across nodes `rider` travels as the sparse
  // allgather's (to rider_to(), and from rider_from() into rider_in()).
  bool exchange_counts(std::int64_t mine, Scratch& x, SparseAllgather::Rider rider,
                       const std::function<void()>& while_in_flight);
  int rider_to() const { return direct() ? -1 : gather_.rider_to(); }
  int rider_from() const { return direct() ? -1 : gather_.rider_from(); }
  std::span<const std::uint64_t> rider_in() const { return gather_.rider_in(); }
  // Every rank's notices into x.incoming (`total` of them), when they did
  // not ride along.
  void gather_notices(Scratch& x, std::int64_t total);

  // This rank's beacon word, which a lock wait gives up on once raised.
  const std::uint64_t& beacon() const { return slots_.local<std::uint64_t>(beacon_offset()); }
  // As a barrier's caller that holds a lock: every rank's beacon, raised.
  void raise_beacons();
  // Once the barrier failed: no waiter of a later barrier sees this one's beacon.
  void lower_beacon();

 private:
  std::size_t beacon_offset() const {
    return (2 * static_cast<std::size_t>(ranks_) + 64) * sizeof(std::uint64_t);
  }
  static void lay_out_incoming(Scratch& x, std::int64_t total);
  bool exchange_records(std::int64_t mine, Scratch& x, SparseAllgather::Rider rider,
                        const std::function<void()>& while_in_flight);
  void exchange_on_node(std::int64_t mine, Scratch& x);
  // The dissemination barrier on the mapped slots; counts a rank stored into
  // its peers' slots before are visible to them after.
  void node_barrier();

  MPI_Comm comm_;
  Transport& transport_;
  int rank_;
  int ranks_;
  SparseAllgather gather_;  // across nodes
  // Per rank, 2 x ranks int64: the counts peers stored, by barrier parity;
  // then one word per round of the node barrier; then the beacon.
  SharedWords slots_;
  Scratch scratch_;
  std::uint64_t exchanges_ = 0;      // count exchanges, for the slot parity
  std::uint64_t node_barriers_ = 0;  // node_barrier() calls, for its round words
};

}  // namespace mpidsm::detail
