#include "barrier_exchange.hpp"

#include <algorithm>
#include <atomic>
#include <bit>

#include "barrier_updates.hpp"
#include "common/mpi_exchange.hpp"
#include "lock_homes.hpp"
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
      gather_(transport),
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

bool BarrierExchange::exchange_counts(std::int64_t mine, Scratch& x, SparseAllgather::Rider rider,
                                      const std::function<void()>& while_in_flight) {
  x.counts.resize(static_cast<std::size_t>(ranks_));
  x.subscribers.clear();
  x.renewers.clear();
  x.pushers.clear();
  x.lock_moves_in.clear();
  if (!slots_.direct()) return exchange_records(mine, x, rider, while_in_flight);
  exchange_on_node(mine, x);
  return false;
}

// Across nodes: what each rank has to say (its count, unless 0, then its
// notices and the ranks its updates' masks name) travels through the
// sparse allgather: a clean barrier moves a word per round, and a rank
// receives the notices once each, never a record per rank.
bool BarrierExchange::exchange_records(std::int64_t mine, Scratch& x, SparseAllgather::Rider rider,
                                       const std::function<void()>& while_in_flight) {
  std::vector<std::int64_t>& said = x.records;  // count, notices, marks
  said.clear();
  const std::size_t words = x.mask.size() / BarrierUpdates::kMasks;
  for (std::size_t mask = 0; mask < BarrierUpdates::kMasks; ++mask)
    for (std::size_t w = 0; w < words; ++w)
      for (std::uint64_t bits = x.mask[mask * words + w]; bits != 0; bits &= bits - 1)
        said.push_back(static_cast<std::int64_t>(mask << 32 | (w * 64 + std::countr_zero(bits))));
  said.insert(said.end(), x.lock_moves_out.begin(), x.lock_moves_out.end());  // negative
  if (mine != 0 || !said.empty()) {
    said.insert(said.begin(), x.outgoing.begin(),
                x.outgoing.begin() + static_cast<std::ptrdiff_t>(notices_in(mine)));
    said.insert(said.begin(), mine);
  }
  const auto entries = gather_.exchange(said, rider, while_in_flight, "Dsm::barrier");
  std::vector<std::int64_t>& counts = x.counts;
  std::fill(counts.begin(), counts.end(), 0);
  std::int64_t total = 0;
  std::vector<int>* const marked_by[BarrierUpdates::kMasks] = {&x.subscribers, &x.renewers,
                                                               &x.pushers};
  SparseAllgather::for_each(entries, [&](int r, std::span<const std::int64_t> words_of_r) {
    counts[static_cast<std::size_t>(r)] = words_of_r[0];
    const auto notices = static_cast<std::size_t>(notices_in(words_of_r[0]));
    total += static_cast<std::int64_t>(notices);
    for (std::int64_t mark : words_of_r.subspan(1 + notices))
      if (LockHomes::is_move(mark))
        x.lock_moves_in.push_back(mark);
      else if ((mark & 0xffffffff) == rank_)
        marked_by[mark >> 32]->push_back(r);
  });
  for (std::vector<int>* list : marked_by) std::sort(list->begin(), list->end());
  if (total == 0) return false;
  lay_out_incoming(x, total);
  SparseAllgather::for_each(entries, [&](int r, std::span<const std::int64_t> words_of_r) {
    const auto at = static_cast<std::size_t>(r);
    std::copy_n(words_of_r.begin() + 1, x.sizes[at], x.incoming.begin() + x.offsets[at]);
  });
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
