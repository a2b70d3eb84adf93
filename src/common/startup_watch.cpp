#include "startup_watch.hpp"

#include <dirent.h>
#include <sched.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>

#include "common/process_watch.hpp"
#include "mpidsm/error.hpp"

namespace mpidsm::detail {
namespace {

using Clock = std::chrono::steady_clock;
constexpr std::int64_t kNoticeMark = 0x6d706964736d2144;  // "mpidsm!D"
constexpr auto kLookEvery = std::chrono::milliseconds(100);
constexpr auto kSayAfter = std::chrono::seconds(10);
constexpr auto kNoticeGrace = std::chrono::milliseconds(50);

// The registry's directory and this job's name, from the launcher (PMIx's
// environment, which Open MPI and Slurm set); empty without one.
struct Registry {
  std::string directory;
  std::string prefix;  // "mpidsm-<job>-", then the rank in the job
  std::uint64_t space = 0;
  bool usable() const { return !directory.empty(); }
};

const Registry& registry() {
  static const Registry known = [] {
    const char* directory = std::getenv("PMIX_SERVER_TMPDIR");
    const char* job = std::getenv("PMIX_NAMESPACE");
    if (!directory || !job || !*directory || !*job) return Registry{};
    return Registry{directory, std::string("mpidsm-") + job + "-", pid_space()};
  }();
  return known;
}

int job_rank() {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return rank;
}

// "<pid space> <pid>", written under a temporary name and renamed, so a
// reader never sees half of it. Without a registry directory that takes it,
// this rank is seen only once the transport watches its peers.
void enter_registry() {
  static std::once_flag once;
  std::call_once(once, [] {
    const Registry& known = registry();
    if (!known.usable()) return;
    const std::string path = known.directory + "/" + known.prefix + std::to_string(job_rank());
    const std::string temporary = path + ".new";
    std::FILE* file = std::fopen(temporary.c_str(), "w");
    if (!file) return;
    const bool written =
        std::fprintf(file, "%llu %lld\n", static_cast<unsigned long long>(known.space),
                     static_cast<long long>(getpid())) > 0;
    if (std::fclose(file) != 0 || !written || std::rename(temporary.c_str(), path.c_str()) != 0)
      std::remove(temporary.c_str());
  });
}

// The pid the file registers in this PID namespace, or 0.
std::int64_t registered_pid(const std::string& path) {
  std::FILE* file = std::fopen(path.c_str(), "r");
  if (!file) return 0;
  unsigned long long space = 0;
  long long pid = 0;
  const bool read = std::fscanf(file, "%llu %lld", &space, &pid) == 2;
  std::fclose(file);
  return read && space == registry().space && pid > 0 ? pid : 0;
}

int notice_tag() {
  void* bound = nullptr;
  int found = 0;
  MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &bound, &found);
  return found ? *static_cast<int*>(bound) : 32767;  // the least MPI guarantees
}

}  // namespace

StartupWatch::StartupWatch(MPI_Comm comm, int rank) : rank_(rank), notice_tag_(notice_tag()) {
  enter_registry();
  int size = 0;
  MPI_Comm_size(comm, &size);
  std::vector<int> ranks(static_cast<std::size_t>(size));
  for (int r = 0; r < size; ++r) ranks[static_cast<std::size_t>(r)] = r;
  job_ranks_.assign(ranks.size(), MPI_UNDEFINED);
  MPI_Group group, world;
  MPI_Comm_group(comm, &group);
  MPI_Comm_group(MPI_COMM_WORLD, &world);
  MPI_Group_translate_ranks(group, size, ranks.data(), world, job_ranks_.data());
  MPI_Group_free(&group);
  MPI_Group_free(&world);
  pids_.assign(ranks.size(), 0);
  gone_.assign(ranks.size(), 0);
  watch(comm);
}

StartupWatch::~StartupWatch() {
  unwatch();
}

MPI_Comm StartupWatch::duplicate(const char* operation) {
  // MPI writes the handle when the idup completes, which may be after a
  // death ended the wait: it then keeps this memory for good.
  auto duplicate = std::make_unique<MPI_Comm>(MPI_COMM_NULL);
  MPI_Request request;
  check_mpi(rank_, operation, MPI_Comm_idup(comm_, duplicate.get(), &request));
  try {
    wait(request, operation);
  } catch (const Error&) {
    static_cast<void>(duplicate.release());
    throw;
  }
  unwatch();
  watch(*duplicate);
  return *duplicate;
}

void StartupWatch::watch(MPI_Comm comm) {
  comm_ = comm;
  attached_ = {&StartupWatch::wait_for, this};
  attach_collective_wait(comm_, &attached_);
  check_mpi(
      rank_, "MPI_Irecv (start-up notices)",
      MPI_Irecv(notice_, 2, MPI_INT64_T, MPI_ANY_SOURCE, notice_tag_, comm_, &notice_request_));
}

void StartupWatch::unwatch() noexcept {
  if (comm_ == MPI_COMM_NULL) return;
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) {
    if (notice_request_ != MPI_REQUEST_NULL) {
      MPI_Cancel(&notice_request_);
      MPI_Wait(&notice_request_, MPI_STATUS_IGNORE);
    }
    detach_collective_wait(comm_, &attached_);  // unless the transport attached its own
  }
  comm_ = MPI_COMM_NULL;
}

void StartupWatch::wait_for(void* watch, MPI_Request& request, const char* operation) {
  static_cast<StartupWatch*>(watch)->wait(request, operation);
}

void StartupWatch::wait(MPI_Request& request, const char* operation) {
  const auto start = Clock::now();
  auto next_look = start + kLookEvery;
  bool said = false;
  for (unsigned polls = 0;; ++polls) {
    int done = 0;
    check_mpi(rank_, operation, MPI_Test(&request, &done, MPI_STATUS_IGNORE));
    if (done) return;
    int told = heard();
    const auto now = Clock::now();
    bool found = false;
    if (told < 0 && now >= next_look) {
      next_look = now + kLookEvery;
      found = look();
      if (found) {
        tell();
        // A survivor that saw the death first told us before it left:
        // its notice names the rank that died, not the survivor.
        const auto grace = Clock::now() + kNoticeGrace;
        while (told < 0 && Clock::now() < grace) told = heard();
      }
    }
    if (told >= 0 || found)
      throw Error(Errc::transport, rank_,
                  std::string(operation) + ": " + describe_gone(told) +
                      "; the runtime cannot be constructed without it");
    if (!said && now - start >= kSayAfter) {
      said = true;
      std::fprintf(stderr,
                   "mpidsm: rank %d: %s has waited %lld s for the other ranks: one has not "
                   "called it, or died where no rank of the communicator can see its process\n",
                   rank_, operation,
                   static_cast<long long>(
                       std::chrono::duration_cast<std::chrono::seconds>(kSayAfter).count()));
    }
    // Start-up is not latency-bound: after a moment, leave the core to
    // the ranks it waits for (oversubscribed nodes).
    if (polls < 1000)
      sched_yield();
    else
      std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
}

int StartupWatch::heard() {
  int arrived = 0;
  MPI_Test(&notice_request_, &arrived, MPI_STATUS_IGNORE);
  if (!arrived) return -1;
  const std::int64_t dead = notice_[1];
  if (notice_[0] == kNoticeMark && dead >= 0 && dead < static_cast<std::int64_t>(pids_.size()))
    return static_cast<int>(dead);
  check_mpi(
      rank_, "MPI_Irecv (start-up notices)",
      MPI_Irecv(notice_, 2, MPI_INT64_T, MPI_ANY_SOURCE, notice_tag_, comm_, &notice_request_));
  return -1;
}

// Reads the registry's directory (the entries of this node's ranks only),
// then looks at every registered peer's process.
bool StartupWatch::look() {
  const Registry& known = registry();
  if (!known.usable()) return false;
  if (DIR* directory = opendir(known.directory.c_str())) {
    while (const dirent* entry = readdir(directory)) {
      const std::string_view name = entry->d_name;
      if (!name.starts_with(known.prefix)) continue;
      char* end = nullptr;
      const long rank_in_job = std::strtol(entry->d_name + known.prefix.size(), &end, 10);
      if (end == entry->d_name + known.prefix.size() || *end != '\0') continue;  // a ".new"
      for (std::size_t r = 0; r < job_ranks_.size(); ++r)
        if (job_ranks_[r] == rank_in_job && pids_[r] == 0 && static_cast<int>(r) != rank_)
          pids_[r] = registered_pid(known.directory + "/" + entry->d_name);
    }
    closedir(directory);
  }
  bool found = false;
  for (std::size_t r = 0; r < pids_.size(); ++r)
    if (pids_[r] != 0 && process_gone(pids_[r])) {
      gone_[r] = 1;
      found = true;
    }
  return found;
}

// The sends are driven for a moment, so they leave before this rank throws
// and perhaps exits, then left to complete on their own (MPI_Request_free):
// a peer that died too would hold them for ever. Their buffer is never
// freed for the same reason; this happens once per death.
void StartupWatch::tell() {
  const auto first = std::find(gone_.begin(), gone_.end(), 1);
  auto* notice = new std::int64_t[2]{kNoticeMark, first - gone_.begin()};
  std::vector<MPI_Request> sends;
  for (int r = 0; r < static_cast<int>(pids_.size()); ++r) {
    if (r == rank_ || gone_[static_cast<std::size_t>(r)]) continue;
    MPI_Request request;
    if (MPI_Isend(notice, 2, MPI_INT64_T, r, notice_tag_, comm_, &request) == MPI_SUCCESS)
      sends.push_back(request);
  }
  const auto until = Clock::now() + kNoticeGrace;
  int done = 0;
  while (!done && Clock::now() < until)
    MPI_Testall(static_cast<int>(sends.size()), sends.data(), &done, MPI_STATUSES_IGNORE);
  for (MPI_Request& request : sends)
    if (request != MPI_REQUEST_NULL) MPI_Request_free(&request);
}

std::string StartupWatch::describe_gone(int told) const {
  std::vector<std::size_t> ranks;
  if (told >= 0) ranks.push_back(static_cast<std::size_t>(told));
  for (std::size_t r = 0; r < gone_.size() && told < 0; ++r)
    if (gone_[r]) ranks.push_back(r);
  return detail::describe_gone(ranks);
}

void startup_point(const char* point) {
  static const char* const setting = std::getenv("MPIDSM_TEST_KILL_AT");
  if (!setting) return;
  const char* colon = std::strrchr(setting, ':');
  if (!colon || std::string_view(setting, static_cast<std::size_t>(colon - setting)) != point)
    return;
  if (std::atoi(colon + 1) == job_rank()) raise(SIGKILL);
}

}  // namespace mpidsm::detail
