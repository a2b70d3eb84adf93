#include "node_collectives.hpp"

#include <algorithm>
#include <cstring>

#include "transport/node_barrier.hpp"

namespace mpidsm::detail {

std::unique_ptr<NodeCollectives> NodeCollectives::create(MPI_Comm comm, int member, bool usable,
                                                         Transport& transport) {
  auto memory = NodeTeamMemory::map(comm, member, usable, kPartBytes);
  if (!memory) return nullptr;
  int members = 0;
  MPI_Comm_size(comm, &members);
  return std::unique_ptr<NodeCollectives>(
      new NodeCollectives(std::move(memory), transport, member, members));
}

void NodeCollectives::pass(const char* operation) {
  dissemination_barrier(
      transport_, me_, members_, ++epoch_,
      [&](int member, std::size_t round) -> std::uint64_t& {
        return reinterpret_cast<std::uint64_t*>(memory_->part(member))[round];
      },
      operation);
}

void NodeCollectives::contribute(const void* source, std::size_t bytes) {
  std::byte* mine = slot(me_, epoch_ + 1);
  *reinterpret_cast<std::uint64_t*>(mine) = bytes;
  if (bytes > 0 && fits(bytes)) std::memcpy(mine + kHeader, source, bytes);
}

void NodeCollectives::sync(const char* operation) {
  pass(operation);
}

void NodeCollectives::broadcast(void* dest, const void* source, std::size_t bytes, int root,
                                const char* operation) {
  const std::uint64_t b = ++broadcasts_;
  if (me_ == root) {
    // Every member's read word is looked at only when the last look no
    // longer covers b - kBroadcastDepth: about once per kBroadcastDepth
    // broadcasts while readers keep up, not once each (their lines would
    // bounce between the cores).
    if (b > kBroadcastDepth && all_read_ < b - kBroadcastDepth) {
      std::uint64_t oldest = b;
      for (int m = 0; m < members_; ++m) {
        spin_until(
            transport_,
            [&] { return read(m).load(std::memory_order_acquire) >= b - kBroadcastDepth; },
            operation);
        oldest = std::min(oldest, read(m).load(std::memory_order_acquire));
      }
      all_read_ = oldest;
    }
    if (bytes > 0) std::memcpy(broadcast_slot(me_, b) + kHeader, source, bytes);
    published(me_).store(b, std::memory_order_release);
  } else {
    spin_until(
        transport_, [&] { return published(root).load(std::memory_order_acquire) >= b; },
        operation);
    if (bytes > 0) std::memcpy(dest, broadcast_slot(root, b) + kHeader, bytes);
  }
  read(me_).store(b, std::memory_order_release);
}

void NodeCollectives::fcollect(void* dest, const void* source, std::size_t bytes,
                               const char* operation) {
  contribute(source, bytes);
  pass(operation);
  if (bytes == 0) return;
  auto* out = static_cast<std::byte*>(dest);
  for (int m = 0; m < members_; ++m)
    std::memcpy(out + static_cast<std::size_t>(m) * bytes, data(m), bytes);
}

void NodeCollectives::alltoall(void* dest, const void* source, std::size_t bytes,
                               const char* operation) {
  contribute(source, bytes * static_cast<std::size_t>(members_));
  pass(operation);
  if (bytes == 0) return;
  auto* out = static_cast<std::byte*>(dest);
  const std::size_t mine = static_cast<std::size_t>(me_) * bytes;
  for (int m = 0; m < members_; ++m)
    std::memcpy(out + static_cast<std::size_t>(m) * bytes, data(m) + mine, bytes);
}

void NodeCollectives::reduce(void* dest, const void* source, int count, MPI_Datatype type,
                             MPI_Op op, const char* operation) {
  int element = 0;
  MPI_Type_size(type, &element);
  const std::size_t bytes = static_cast<std::size_t>(count) * static_cast<std::size_t>(element);
  contribute(source, bytes);
  pass(operation);
  if (bytes == 0) return;
  std::memcpy(dest, data(0), bytes);
  // MPI_Reduce_local folds its input into its output: dest = member m's op dest.
  for (int m = 1; m < members_; ++m) MPI_Reduce_local(data(m), dest, count, type, op);
}

bool NodeCollectives::collect(void* dest, const void* source, std::size_t bytes,
                              std::span<std::size_t> sizes, const char* operation) {
  contribute(source, bytes);
  pass(operation);
  bool all_fit = true;
  for (int m = 0; m < members_; ++m) {
    sizes[static_cast<std::size_t>(m)] = length(m);
    all_fit = all_fit && fits(length(m));
  }
  if (!all_fit) return false;
  auto* out = static_cast<std::byte*>(dest);
  for (int m = 0; m < members_; ++m) {
    if (length(m) > 0) std::memcpy(out, data(m), length(m));
    out += length(m);
  }
  return true;
}

}  // namespace mpidsm::detail
