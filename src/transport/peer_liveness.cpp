#include "peer_liveness.hpp"

#include <unistd.h>

#include <chrono>
#include <string>

#include "common/mpi_exchange.hpp"
#include "common/process_watch.hpp"

namespace mpidsm::detail {
namespace {

constexpr std::uint64_t kLookEveryNs = 100'000'000;

std::uint64_t now_ns() {
  return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                        std::chrono::steady_clock::now().time_since_epoch())
                                        .count());
}

}  // namespace

void PeerLiveness::exchange(MPI_Comm comm, int rank) {
  int ranks = 0;
  MPI_Comm_size(comm, &ranks);
  const std::int64_t mine[2] = {static_cast<std::int64_t>(pid_space()),
                                static_cast<std::int64_t>(getpid())};
  std::vector<std::int64_t> all(2 * static_cast<std::size_t>(ranks));
  allgather(comm, rank, mine, all.data(), 2, MPI_INT64_T, "Runtime construction (pids)");
  pids_.assign(static_cast<std::size_t>(ranks), 0);
  gone_ = std::make_unique<std::atomic<bool>[]>(static_cast<std::size_t>(ranks));
  for (std::size_t r = 0; r < pids_.size(); ++r)
    if (static_cast<int>(r) != rank && all[2 * r] == mine[0]) pids_[r] = all[2 * r + 1];
}

void PeerLiveness::report_gone(int peer) noexcept {
  // A survivor tells before it closes (Transport::Impl::tell_connected_peers),
  // so what it told is here by the time its closing reports it.
  take_told();
  mark_gone(peer);
}

void PeerLiveness::mark_gone(int peer) noexcept {
  gone_[static_cast<std::size_t>(peer)].store(true, std::memory_order_relaxed);
  int none = -1;
  dead_.compare_exchange_strong(none, peer);
}

void PeerLiveness::take_told() noexcept {
  if (!told_) return;
  const std::uint64_t told =
      std::atomic_ref<const std::uint64_t>(*told_).load(std::memory_order_relaxed);
  if (told != 0 && told <= pids_.size()) mark_gone(static_cast<int>(told - 1));
}

int PeerLiveness::dead_peer() {
  take_told();
  const int known = dead_.load(std::memory_order_relaxed);
  if (known >= 0) return known;
  const std::uint64_t now = now_ns();
  std::uint64_t due = next_look_ns_.load(std::memory_order_relaxed);
  if (now < due || !next_look_ns_.compare_exchange_strong(due, now + kLookEveryNs)) return -1;
  return look_now();
}

int PeerLiveness::look_now() {
  take_told();
  for (std::size_t r = 0; r < pids_.size(); ++r)
    if (pids_[r] != 0 && process_gone(pids_[r])) report_gone(static_cast<int>(r));
  return dead_.load(std::memory_order_relaxed);
}

std::string PeerLiveness::describe_gone() const {
  std::vector<std::size_t> ranks;
  for (std::size_t r = 0; r < pids_.size(); ++r)
    if (gone_[r].load(std::memory_order_relaxed)) ranks.push_back(r);
  return detail::describe_gone(ranks);
}

}  // namespace mpidsm::detail
