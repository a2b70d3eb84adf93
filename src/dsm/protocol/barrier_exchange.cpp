#include "barrier_exchange.hpp"

#include <algorithm>
#include <atomic>

#include "barrier_updates.hpp"
#include "common/mpi_exchange.hpp"
#include "transport/node_barrier.hpp"

namespace mpidsm::detail {
namespace {

// Waits for one of the barrier's collectives, which receives into (or reads
// counts from) `buffers`. A wait that throws (a peer died) abandons the
// collective, and MPI may still write there in any later MPI call as live
// peers' parts arrive: the buffers are then left to MPI for good (their
// storage moved into vectors never freed), never to be reused or freed.
template <class... Buffers>
void wait_receiving(Transport& transport, MPI_Request& request, Buffers&... buffers) {
  try {
    transport.wait_mpi(request, "Dsm::barrier");
  } catch (const Error&) {
    (static_cast<void>(new Buffers(std::move(buffers))), ...);
    throw;
  }
}

}  // namespace

BarrierExchange::BarrierExchange(MPI_Comm comm, Transport& transport, const MappablePeers& mappable,
                                 std::size_t pages)
    : comm_(comm),
      transport_(transport),
      rank_(transport.rank()),
      ranks_(transport.size()),
      slots_(comm, transport,
             (2 * static_cast<std::size_t>(ranks_) + 64 + 1) *
                 sizeof(std::int64_t),  // counts, rounds, beacon
             mappable, "DSM barrier slots") {
  scratch_.outgoing.reserve(pages);
}

void BarrierExchange::gather_notices(Scratch& x, std::int64_t total) {
  lay_out_incoming(x, total);
  MPI_Request request;
  check_mpi(rank_, "MPI_Iallgatherv in Dsm::barrier",
            MPI_Iallgatherv(x.outgoing.data(), static_cast<int>(x.outgoing.size()), MPI_INT64_T,
                            x.incoming.data(), x.sizes.data(), x.offsets.data(), MPI_INT64_T, comm_,
                            &request));
  wait_receiving(transport_, request, x.incoming, x.sizes, x.offsets);
}

void BarrierExchange::raise_beacons() {
  for (int r = 0; r < ranks_; ++r)
    slots_.swap<std::uint64_t>(r, beacon_offset(), static_cast<std::uint64_t>(rank_) + 1);
}

void BarrierExchange::lower_beacon() {
  std::atomic_ref<std::uint64_t>(slots_.local<std::uint64_t>(beacon_offset())).store(0);
}

// Where every rank has counts[r] notices: x.sizes, x.offsets and room in
// x.incoming for all of them, in rank order.
void BarrierExchange::lay_out_incoming(Scratch& x, std::int64_t total) {
  const std::size_t ranks = x.counts.size();
  x.sizes.resize(ranks);
  x.offsets.resize(ranks);
  for (std::size_t r = 0, at = 0; r < ranks; ++r) {
    x.sizes[r] = static_cast<int>(notices_in(x.counts[r]));
    x.offsets[r] = static_cast<int>(at);
    at += static_cast<std::size_t>(x.sizes[r]);
  }
  x.incoming.resize(static_cast<std::size_t>(total));
}

bool BarrierExchange::exchange_counts(std::int64_t mine, Scratch& x,
                                      const std::function<void()>& while_in_flight) {
  x.counts.resize(static_cast<std::size_t>(ranks_));
  x.subscribers.clear();
  x.renewers.clear();
  x.pushers.clear();
  if (!slots_.direct()) return exchange_records(mine, x, while_in_flight);
  exchange_on_node(mine, x);
  return false;
}

// Across nodes: one allgather of every rank's record (count, inline
// notices, the updates' masks).
bool BarrierExchange::exchange_records(std::int64_t mine, Scratch& x,
                                       const std::function<void()>& while_in_flight) {
  std::vector<std::int64_t>& counts = x.counts;
  const std::size_t record = 1 + kInlineNotices + x.mask.size();
  const std::size_t ranks = counts.size();
  x.records.resize(record * (ranks + 1));  // the last record is this rank's to send
  std::int64_t* mine_out = x.records.data() + record * ranks;
  mine_out[0] = mine;
  if (static_cast<std::size_t>(notices_in(mine)) <= kInlineNotices)
    std::copy(x.outgoing.begin(), x.outgoing.end(), mine_out + 1);
  std::copy(x.mask.begin(), x.mask.end(), mine_out + 1 + kInlineNotices);
  MPI_Request request;
  check_mpi(rank_, "MPI_Iallgather in Dsm::barrier",
            MPI_Iallgather(mine_out, static_cast<int>(record), MPI_INT64_T, x.records.data(),
                           static_cast<int>(record), MPI_INT64_T, comm_, &request));
  try {
    while_in_flight();
  } catch (const Error&) {
    wait_receiving(transport_, request, x.records);  // the others' collective completes
    throw;
  }
  wait_receiving(transport_, request, x.records);
  std::int64_t total = 0;
  bool inline_only = true;
  const std::size_t my_word = static_cast<std::size_t>(rank_) / 64,
                    words = x.mask.size() / BarrierUpdates::kMasks;
  const std::uint64_t my_bit = std::uint64_t{1} << (rank_ % 64);
  for (std::size_t r = 0; r < ranks; ++r) {
    counts[r] = x.records[r * record];
    const std::int64_t* masks = x.records.data() + r * record + 1 + kInlineNotices;
    auto marked = [&](std::size_t mask) {
      return (static_cast<std::uint64_t>(masks[mask * words + my_word]) & my_bit) != 0;
    };
    if (marked(0)) x.subscribers.push_back(static_cast<int>(r));
    if (marked(1)) x.renewers.push_back(static_cast<int>(r));
    if (marked(2)) x.pushers.push_back(static_cast<int>(r));
    total += notices_in(counts[r]);
    inline_only = inline_only && notices_in(counts[r]) <= static_cast<std::int64_t>(kInlineNotices);
  }
  if (!inline_only || total == 0) return false;
  lay_out_incoming(x, total);
  for (std::size_t r = 0; r < ranks; ++r)
    std::copy_n(x.records.data() + r * record + 1, x.sizes[r], x.incoming.begin() + x.offsets[r]);
  return true;
}

// On one node: a rank with something to say (notices, or holding a lock)
// stores its count into every rank's slots, and a barrier in shared memory
// publishes them. A clean barrier then reads only this rank's own slots,
// which nobody wrote: no cache line moves beyond the barrier's own. Slots
// alternate with the barrier's parity and the reader zeroes what it found,
// so a rank already in the next barrier never overwrites a count a slower
// rank is still reading.
void BarrierExchange::exchange_on_node(std::int64_t mine, Scratch& x) {
  std::vector<std::int64_t>& counts = x.counts;
  const std::size_t ranks = counts.size();
  const std::size_t base = (exchanges_++ % 2) * ranks;
  const auto me = static_cast<std::size_t>(rank_);
  auto slot_offset = [&](std::size_t writer) { return (base + writer) * sizeof(std::int64_t); };
  if (mine != 0)
    for (std::size_t r = 0; r < ranks; ++r)
      if (r != me)
        std::atomic_ref<std::int64_t>(
            slots_.mapped<std::int64_t>(static_cast<int>(r), slot_offset(me)))
            .store(mine, std::memory_order_release);
  node_barrier();
  for (std::size_t r = 0; r < ranks; ++r) {
    std::atomic_ref<std::int64_t> slot(slots_.local<std::int64_t>(slot_offset(r)));
    counts[r] = slot.load(std::memory_order_acquire);
    if (counts[r] != 0) slot.store(0, std::memory_order_relaxed);
  }
  counts[me] = mine;
}

void BarrierExchange::node_barrier() {
  const auto rounds_base = 2 * static_cast<std::size_t>(ranks_) * sizeof(std::int64_t);
  dissemination_barrier(
      transport_, ++node_barriers_,
      [&](int rank, std::size_t round) -> std::uint64_t& {
        return slots_.mapped<std::uint64_t>(rank, rounds_base + round * sizeof(std::uint64_t));
      },
      "Dsm::barrier");
}

}  // namespace mpidsm::detail
