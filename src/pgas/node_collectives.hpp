// A team's collectives when the whole team shares a node: through memory
// every member maps (node_team_memory.hpp), with no MPI call and no request.
// Measured against the non-blocking MPI collectives mpidsm waits for
// otherwise (benchmarks/collective_latency; docs/pgas.md), they take a third
// to a half of the time at 2 and 4 ranks.
//
// Each member's part holds its dissemination barrier's counters and two
// slots. A collective writes this member's contribution into slot (epoch %
// 2), passes the barrier, then reads what it needs from the others' slots.
// Two slots are enough: a member that writes slot (e % 2) again, in
// collective e + 2, has left barrier e + 1, which every member entered only
// after reading collective e's slots.
//
// A broadcast synchronises nobody but the root's readers (as MPI_Bcast's
// eager path): it has kBroadcastDepth slots of its own per member, a
// `published` word (the root's last broadcast) and a `read` word (the last
// broadcast this member copied). The root of broadcast b waits until every
// member read broadcast b - kBroadcastDepth, whose slot it then rewrites;
// readers wait until the root published b. The depth lets a root run that
// many broadcasts ahead of its slowest reader, as MPI's eager messages do
// (with 2, a root at 4 ranks on 2 cores waited for its readers' turns and
// took 7x MPI_Bcast's time).
//
// Contributions above kSlotBytes go through MPI instead (the caller asks
// fits() first; every member gets the same answer for the same sizes).
#pragma once

#include <mpi.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

#include "mpidsm/transport.hpp"
#include "node_team_memory.hpp"

namespace mpidsm::detail {

class NodeCollectives {
 public:
  static constexpr std::size_t kSlotBytes = 8192;

  // Collective over `comm`; null unless the team shares a node and every
  // member maps its memory (`usable`: direct access is on here).
  static std::unique_ptr<NodeCollectives> create(MPI_Comm comm, int member, bool usable,
                                                 Transport& transport);

  // Whether a contribution of `bytes` goes through the slots.
  static bool fits(std::size_t bytes) { return bytes <= kSlotBytes; }

  void sync(const char* operation);
  // fits(bytes) for all of these.
  void broadcast(void* dest, const void* source, std::size_t bytes, int root,
                 const char* operation);
  void fcollect(void* dest, const void* source, std::size_t bytes, const char* operation);
  // fits(bytes * members).
  void alltoall(void* dest, const void* source, std::size_t bytes, const char* operation);
  // fits(count * size of type): every member folds the contributions in
  // member order, so all get the same result, floating point included.
  void reduce(void* dest, const void* source, int count, MPI_Datatype type, MPI_Op op,
              const char* operation);
  // Contributions of different sizes: `sizes` (a member each) receives every
  // member's. True when every contribution fitted and `dest` holds them all
  // in member order; false when the caller must move them (through MPI).
  bool collect(void* dest, const void* source, std::size_t bytes, std::span<std::size_t> sizes,
               const char* operation);

 private:
  NodeCollectives(std::unique_ptr<NodeTeamMemory> memory, Transport& transport, int member,
                  int members)
      : memory_(std::move(memory)), transport_(transport), me_(member), members_(members) {}

  // A member's part: barrier counters (2^64 members), the broadcast words
  // (published, read) on a line of their own, the two slots of the
  // barrier's collectives, then the broadcasts'.
  static constexpr std::uint64_t kBroadcastDepth = 32;
  static constexpr std::size_t kRounds = 64;
  static constexpr std::size_t kHeader = 64;  // a slot's length word, on its own line
  static constexpr std::size_t kSlotStride = kHeader + kSlotBytes;
  static constexpr std::size_t kBroadcastWords = kRounds * sizeof(std::uint64_t);
  static constexpr std::size_t kSlots = kBroadcastWords + 64;
  static constexpr std::size_t kBroadcastSlots = kSlots + 2 * kSlotStride;
  static constexpr std::size_t kPartBytes = kBroadcastSlots + kBroadcastDepth * kSlotStride;

  // Member `member`'s slot for the collective whose barrier is `epoch`.
  std::byte* slot(int member, std::uint64_t epoch) const {
    return memory_->part(member) + kSlots + (epoch % 2) * kSlotStride;
  }
  std::byte* broadcast_slot(int member, std::uint64_t broadcast) const {
    return memory_->part(member) + kBroadcastSlots + (broadcast % kBroadcastDepth) * kSlotStride;
  }
  std::atomic_ref<std::uint64_t> published(int member) const {
    return std::atomic_ref<std::uint64_t>(
        reinterpret_cast<std::uint64_t*>(memory_->part(member) + kBroadcastWords)[0]);
  }
  std::atomic_ref<std::uint64_t> read(int member) const {
    return std::atomic_ref<std::uint64_t>(
        reinterpret_cast<std::uint64_t*>(memory_->part(member) + kBroadcastWords)[1]);
  }
  // After pass(): the collective's contributions.
  std::uint64_t length(int member) const {
    return *reinterpret_cast<const std::uint64_t*>(slot(member, epoch_));
  }
  const std::byte* data(int member) const { return slot(member, epoch_) + kHeader; }
  // Before pass(): this member's contribution, `bytes` of `source` (only the
  // length when it does not fit).
  void contribute(const void* source, std::size_t bytes);
  // The barrier that ends the writing of this collective's slots.
  void pass(const char* operation);

  std::unique_ptr<NodeTeamMemory> memory_;
  Transport& transport_;
  int me_, members_;
  std::uint64_t epoch_ = 0;       // barriers passed; the current collective's is epoch_ + 1
  std::uint64_t broadcasts_ = 0;  // broadcasts begun, this one included
  std::uint64_t all_read_ = 0;  // as a root: every member had read this broadcast when last looked
};

}  // namespace mpidsm::detail
