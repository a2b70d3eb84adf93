#include "peer_liveness.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <functional>
#include <string>

#include "common/mpi_exchange.hpp"

namespace mpidsm::detail {
namespace {

constexpr std::uint64_t kLookEveryNs = 100'000'000;

std::uint64_t now_ns() {
  return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                        std::chrono::steady_clock::now().time_since_epoch())
                                        .count());
}

// Which kernel, and which PID namespace in it: pids compare only within both.
std::uint64_t pid_space() {
  std::ifstream in("/proc/sys/kernel/random/boot_id");
  std::string boot;
  std::getline(in, boot);
  struct stat ns {};
  const std::uint64_t inode = stat("/proc/self/ns/pid", &ns) == 0 ? ns.st_ino : 0;
  return std::hash<std::string>{}(boot) ^ (inode * 0x9E3779B97F4A7C15ull);
}

// Gone: no such process, or a zombie nobody reaped yet. Only system calls
// and a stack buffer: this runs inside waits the DSM's fault handler makes.
bool gone(std::int64_t pid) {
  if (kill(static_cast<pid_t>(pid), 0) != 0) return errno == ESRCH;
  char path[32] = "/proc/";  // then the pid's digits and "/stat"
  char digits[20];
  int count = 0;
  for (auto rest = static_cast<unsigned long long>(pid); count == 0 || rest != 0; rest /= 10)
    digits[count++] = static_cast<char>('0' + rest % 10);
  char* at = path + 6;
  while (count > 0) *at++ = digits[--count];
  std::memcpy(at, "/stat", 6);
  const int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return true;
  char text[512];
  const ssize_t length = read(fd, text, sizeof text - 1);
  close(fd);
  if (length <= 0) return true;
  text[length] = '\0';
  // "pid (command) state ...": the command may hold spaces and parentheses.
  const char* end = std::strrchr(text, ')');
  return end && end[1] == ' ' && (end[2] == 'Z' || end[2] == 'X');
}

}  // namespace

void PeerLiveness::exchange(MPI_Comm comm, int rank) {
  int ranks = 0;
  MPI_Comm_size(comm, &ranks);
  const std::int64_t mine[2] = {static_cast<std::int64_t>(pid_space()),
                                static_cast<std::int64_t>(getpid())};
  std::vector<std::int64_t> all(2 * static_cast<std::size_t>(ranks));
  check_mpi(rank, "MPI_Allgather",
            MPI_Allgather(mine, 2, MPI_INT64_T, all.data(), 2, MPI_INT64_T, comm));
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
    if (pids_[r] != 0 && gone(pids_[r])) report_gone(static_cast<int>(r));
  return dead_.load(std::memory_order_relaxed);
}

std::string PeerLiveness::describe_gone() const {
  std::vector<std::size_t> ranks;
  for (std::size_t r = 0; r < pids_.size(); ++r)
    if (gone_[r].load(std::memory_order_relaxed)) ranks.push_back(r);
  if (ranks.size() == 1) return "rank " + std::to_string(ranks[0]) + " is gone (its process died)";
  std::string list;
  for (std::size_t i = 0; i < ranks.size(); ++i)
    list += (i == 0 ? "" : i + 1 == ranks.size() ? " and " : ", ") + std::to_string(ranks[i]);
  return "ranks " + list + " are gone (their processes died)";
}

}  // namespace mpidsm::detail
