#include "mpidsm/config.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <limits>

#include "mpidsm/error.hpp"
#include "transport/mailbox_ring.hpp"

namespace mpidsm {
namespace {

constexpr const char* kProgressThread = "MPIDSM_PROGRESS_THREAD";
constexpr const char* kProgressSpin = "MPIDSM_PROGRESS_SPIN_US";
constexpr const char* kProgressSlice = "MPIDSM_PROGRESS_SLICE_US";
constexpr const char* kProgressInMpi = "MPIDSM_PROGRESS_IN_MPI";
constexpr const char* kYieldWhenIdle = "MPIDSM_YIELD_WHEN_IDLE";
constexpr const char* kRndvThresh = "MPIDSM_RNDV_THRESH";
constexpr const char* kShmEagerLimit = "MPIDSM_SHM_EAGER_LIMIT";
constexpr const char* kHeapSize = "MPIDSM_HEAP_SIZE";
constexpr const char* kDirectAccess = "MPIDSM_DIRECT_ACCESS";
constexpr const char* kDsmSize = "MPIDSM_DSM_SIZE";
constexpr const char* kCachePages = "MPIDSM_CACHE_PAGES";
constexpr const char* kPrefetchPages = "MPIDSM_PREFETCH_PAGES";
constexpr const char* kMaxCheckingPages = "MPIDSM_MAX_CHECKING_PAGES";
constexpr const char* kLocks = "MPIDSM_LOCKS";
constexpr const char* kStats = "MPIDSM_STATS";
constexpr const char* kBarrierRefetch = "MPIDSM_BARRIER_REFETCH";
constexpr const char* kAdaptiveUpdates = "MPIDSM_ADAPTIVE_UPDATES";
constexpr const char* kFetchByCall = "MPIDSM_FETCH_BY_CALL";
constexpr const char* kPutByCall = "MPIDSM_PUT_BY_CALL";
constexpr const char* kEagerConnect = "MPIDSM_EAGER_CONNECT";
constexpr const char* kTerminateHandler = "MPIDSM_TERMINATE_HANDLER";
constexpr const char* kHomeMigration = "MPIDSM_HOME_MIGRATION";
constexpr const char* kCoherence = "MPIDSM_COHERENCE";
constexpr const char* kDiffKernel = "MPIDSM_DIFF_KERNEL";

constexpr std::array kVariables{
    ConfigVariable{kProgressThread, "auto",
                   "auto|on|off: a sleeping thread that gives remote ranks' emulated RMA and "
                   "atomics target-side progress; auto starts it when some peer's memory is "
                   "not mappable (tcp, RDMA NICs, memory UCX did not allocate)"},
    ConfigVariable{kProgressSpin, "200",
                   "<microseconds>: how long the progress thread keeps polling after it last "
                   "found work before it sleeps (a wake-up costs tens of microseconds; 0 "
                   "sleeps at once)"},
    ConfigVariable{kProgressSlice, "100",
                   "0|<microseconds, 100 to 100000>: the progress thread's scheduling slice "
                   "(Linux 6.12 and later); shorter than the computing thread's, it lets a "
                   "peer's request preempt that thread at once; 0 keeps the kernel's default"},
    ConfigVariable{kProgressInMpi, "1",
                   "0|1: while the progress thread runs, Open MPI's progress loop (any blocking "
                   "MPI call of this rank) also drives mpidsm's UCX worker, so peers' operations "
                   "on this rank need no wake-up of the thread"},
    ConfigVariable{kYieldWhenIdle, "auto",
                   "auto|on|off: blocking waits yield the CPU after a short run of idle polls "
                   "(like Open MPI's mpi_yield_when_idle); auto when the node runs more ranks "
                   "than it has CPUs, on for loaded nodes or hosts sharing cores"},
    ConfigVariable{kRndvThresh, "auto",
                   "auto|<size>: tagged messages of at least this many bytes use UCX's "
                   "rendezvous protocol (sets UCX's RNDV_THRESH for mpidsm's context only)"},
    ConfigVariable{kShmEagerLimit, "4096",
                   "<size>: tagged messages to ranks of the same node up to this size travel "
                   "through shared-memory mailboxes (at most 16360; larger ones are announced "
                   "there and follow by UCX rendezvous); 0 sends every message through UCX's "
                   "tag matching"},
    ConfigVariable{kHeapSize, "128M",
                   "<size>: symmetric heap per rank for PGAS allocations (shared memory "
                   "allocated by UCX, so same-node peers reach it by load/store)"},
    ConfigVariable{kDirectAccess, "auto",
                   "auto|off: put/get/atomics on same-node peers as plain loads, stores and CPU "
                   "atomics; off sends every one-sided operation through UCX"},
    ConfigVariable{kDsmSize, "256M",
                   "<size>: the coherent DSM region, reserved at the same virtual address on "
                   "every rank (a multiple of the page size)"},
    ConfigVariable{kCachePages, "16384",
                   "<count>: remote DSM pages cached per rank at most; the least recently "
                   "faulted page is evicted (its changes written home first)"},
    ConfigVariable{kPrefetchPages, "16",
                   "<count>: on a DSM read miss, also fetch up to this many following pages "
                   "with the same home in the same batch (0 disables prefetch)"},
    ConfigVariable{kMaxCheckingPages, "32",
                   "<count>: how far past a read miss prefetch looks for such pages"},
    ConfigVariable{kLocks, "16384", "<count>: DSM lock ids available (0 .. count-1)"},
    ConfigVariable{kStats, "0",
                   "0|1: print every rank's DSM statistics as a table when a Dsm is destroyed"},
    ConfigVariable{kBarrierRefetch, "1",
                   "0|1: a DSM barrier across nodes fetches again, before any rank leaves it, "
                   "the remote pages each rank used since the previous barrier and the barrier "
                   "invalidates (no miss, and no wake-up of their home, after it)"},
    ConfigVariable{kAdaptiveUpdates, "1",
                   "0|1: an adaptive DSM page a rank fetches again after two acquires dropped "
                   "its copy is kept up to date at acquires instead, until two updates in a "
                   "row go unread (0: adaptive pages are only invalidated)"},
    ConfigVariable{kFetchByCall, "1",
                   "0|1: when UCX reaches every remote home through active messages (tcp), a "
                   "DSM fetch asks the home for its pages in one call, which the home answers "
                   "with them (0: one-sided atomics and gets, two round trips)"},
    ConfigVariable{kPutByCall, "1",
                   "0|1: when UCX reaches every peer not on this node through active messages "
                   "(tcp), a PGAS put (or put_signal) of up to 8 KiB is one call the target "
                   "acknowledges, and a put of 128 KiB or more a rendezvous into the target's "
                   "heap (0: UCX's emulated put, whose flush costs another round trip and which "
                   "sends, copies and acknowledges large data 8 KiB at a time)"},
    ConfigVariable{kEagerConnect, "0",
                   "0|1: connect every pair of ranks at start-up (0: to ranks of this node at "
                   "start-up, to other ranks on first use, so a rank pays only for the peers "
                   "it talks to)"},
    ConfigVariable{kTerminateHandler, "1",
                   "0|1: an error the program does not catch prints one line per rank and "
                   "aborts the job with MPI_Abort (0: the C++ library's std::terminate, whose "
                   "abort Open MPI and UCX report with a backtrace per rank)"},
    ConfigVariable{kHomeMigration, "adaptive",
                   "off|adaptive|on: at a DSM barrier, a page that one rank alone wrote in the "
                   "ending interval moves home to that rank, so its next writes need no twin, "
                   "diff or notice (JIAJIA's home migration); adaptive waits until the same "
                   "rank was the only writer in two intervals in a row; every rank must use "
                   "the same value"},
    ConfigVariable{kCoherence, "adaptive",
                   "adaptive|invalidate|update|read_mostly|single_writer: the coherence policy "
                   "of DSM allocations that name none (docs/consistency.md, \"Coherence "
                   "policies\"); every rank must use the same value"},
    ConfigVariable{kDiffKernel, "auto",
                   "auto|avx512|avx2|neon|words: the instructions that compare DSM pages with "
                   "their twins and move the changed bytes (auto: the widest this CPU runs); "
                   "all give the same bytes, and ranks may differ"},
};

[[noreturn]] void bad_value(const char* variable, const std::string& value, const char* allowed) {
  throw Error(Errc::config, no_rank,
              std::string(variable) + "='" + value + "' is invalid: expected " + allowed);
}

// auto|on|off (and the usual spellings of on and off) for either mode type.
template <class Mode>
Mode parse_mode(const char* variable, const std::string& text) {
  if (text == "auto") return Mode::automatic;
  if (text == "on" || text == "1" || text == "yes") return Mode::on;
  if (text == "off" || text == "0" || text == "no") return Mode::off;
  bad_value(variable, text, "one of auto, on, off");
}

// The choice among `choices` that to_string spells as `text`; an error that
// lists them all otherwise.
template <class Choice>
Choice parse_choice(const char* variable, const std::string& text,
                    std::initializer_list<Choice> choices) {
  std::string allowed = "one of";
  for (Choice choice : choices) {
    if (text == to_string(choice)) return choice;
    allowed += std::string(allowed.size() > 6 ? ", " : " ") + to_string(choice);
  }
  bad_value(variable, text, allowed.c_str());
}

}  // namespace

const char* to_string(HomeMigration mode) {
  switch (mode) {
    case HomeMigration::off:
      return "off";
    case HomeMigration::adaptive:
      return "adaptive";
    case HomeMigration::on:
      return "on";
  }
  return "?";
}

const char* to_string(Coherence policy) {
  switch (policy) {
    case Coherence::adaptive:
      return "adaptive";
    case Coherence::invalidate:
      return "invalidate";
    case Coherence::update:
      return "update";
    case Coherence::read_mostly:
      return "read_mostly";
    case Coherence::single_writer:
      return "single_writer";
  }
  return "?";
}

const char* to_string(DiffKernel kernel) {
  switch (kernel) {
    case DiffKernel::automatic:
      return "auto";
    case DiffKernel::avx512:
      return "avx512";
    case DiffKernel::avx2:
      return "avx2";
    case DiffKernel::neon:
      return "neon";
    case DiffKernel::words:
      return "words";
  }
  return "?";
}

std::size_t parse_size(const char* variable, const std::string& text) {
  constexpr const char* allowed = "a size in bytes with an optional K, M, G or T suffix";
  if (text.empty() || !std::isdigit(static_cast<unsigned char>(text[0])))
    bad_value(variable, text, allowed);
  errno = 0;
  char* end = nullptr;
  unsigned long long value = std::strtoull(text.c_str(), &end, 10);
  if (errno == ERANGE) bad_value(variable, text, allowed);
  unsigned shift = 0;
  std::string suffix(end);
  if (suffix == "K" || suffix == "k" || suffix == "KB" || suffix == "KiB")
    shift = 10;
  else if (suffix == "M" || suffix == "m" || suffix == "MB" || suffix == "MiB")
    shift = 20;
  else if (suffix == "G" || suffix == "g" || suffix == "GB" || suffix == "GiB")
    shift = 30;
  else if (suffix == "T" || suffix == "t" || suffix == "TB" || suffix == "TiB")
    shift = 40;
  else if (!suffix.empty())
    bad_value(variable, text, allowed);
  if (value > (std::numeric_limits<std::size_t>::max() >> shift))
    bad_value(variable, text, "a size that fits in 64 bits");
  return static_cast<std::size_t>(value) << shift;
}

namespace {

// A plain decimal count (no suffix).
std::size_t parse_count(const char* variable, const std::string& text) {
  constexpr const char* allowed = "a non-negative integer";
  if (text.empty() ||
      !std::all_of(text.begin(), text.end(), [](unsigned char c) { return std::isdigit(c) != 0; }))
    bad_value(variable, text, allowed);
  errno = 0;
  const unsigned long long value = std::strtoull(text.c_str(), nullptr, 10);
  if (errno == ERANGE || value > (std::size_t{1} << 40))
    bad_value(variable, text, "an integer of at most 2^40 (1099511627776)");
  return static_cast<std::size_t>(value);
}

bool parse_switch(const char* variable, const std::string& text) {
  if (text == "1" || text == "on" || text == "yes") return true;
  if (text == "0" || text == "off" || text == "no") return false;
  bad_value(variable, text, "0 or 1");
}

}  // namespace

Config Config::parse(const std::function<const char*(const char*)>& lookup) {
  Config config;
  if (const char* v = lookup(kProgressThread))
    config.progress_thread = parse_mode<ProgressMode>(kProgressThread, v);
  if (const char* v = lookup(kYieldWhenIdle))
    config.yield_when_idle = parse_mode<YieldMode>(kYieldWhenIdle, v);
  if (const char* v = lookup(kProgressInMpi))
    config.progress_in_mpi = parse_switch(kProgressInMpi, v);
  if (const char* v = lookup(kProgressSpin)) {
    config.progress_spin_us = parse_count(kProgressSpin, v);
    if (config.progress_spin_us > 1000000) bad_value(kProgressSpin, v, "at most 1000000 (1 s)");
  }
  if (const char* v = lookup(kProgressSlice)) {
    config.progress_slice_us = parse_count(kProgressSlice, v);
    if (config.progress_slice_us != 0 &&
        (config.progress_slice_us < 100 || config.progress_slice_us > 100000))
      bad_value(kProgressSlice, v, "0, or 100 to 100000 (the kernel's range)");
  }
  if (const char* v = lookup(kRndvThresh); v && std::strcmp(v, "auto") != 0) {
    config.rndv_threshold = parse_size(kRndvThresh, v);
    if (config.rndv_threshold == 0) bad_value(kRndvThresh, v, "'auto' or a size above 0");
  }
  if (const char* v = lookup(kShmEagerLimit)) {
    config.shm_eager_limit = parse_size(kShmEagerLimit, v);
    if (config.shm_eager_limit > detail::RingLayout::max_eager)
      bad_value(kShmEagerLimit, v, "a size of at most 16360 (0 disables the mailboxes)");
  }
  if (const char* v = lookup(kHeapSize)) {
    config.heap_size = parse_size(kHeapSize, v);
    if (config.heap_size < 4096) bad_value(kHeapSize, v, "a size of at least 4K");
  }
  if (const char* v = lookup(kDsmSize)) {
    config.dsm_size = parse_size(kDsmSize, v);
    if (config.dsm_size == 0 || config.dsm_size % 4096 != 0)
      bad_value(kDsmSize, v, "a positive multiple of 4K");
  }
  if (const char* v = lookup(kCachePages)) {
    config.cache_pages = parse_count(kCachePages, v);
    if (config.cache_pages == 0) bad_value(kCachePages, v, "a page count of at least 1");
  }
  if (const char* v = lookup(kPrefetchPages))
    config.prefetch_pages = parse_count(kPrefetchPages, v);
  if (const char* v = lookup(kMaxCheckingPages))
    config.max_checking_pages = parse_count(kMaxCheckingPages, v);
  if (const char* v = lookup(kLocks)) {
    config.dsm_locks = parse_count(kLocks, v);
    if (config.dsm_locks == 0) bad_value(kLocks, v, "a lock count of at least 1");
  }
  if (const char* v = lookup(kStats)) config.dsm_stats = parse_switch(kStats, v);
  if (const char* v = lookup(kBarrierRefetch))
    config.barrier_refetch = parse_switch(kBarrierRefetch, v);
  if (const char* v = lookup(kAdaptiveUpdates))
    config.adaptive_updates = parse_switch(kAdaptiveUpdates, v);
  if (const char* v = lookup(kFetchByCall)) config.fetch_by_call = parse_switch(kFetchByCall, v);
  if (const char* v = lookup(kPutByCall)) config.put_by_call = parse_switch(kPutByCall, v);
  if (const char* v = lookup(kEagerConnect)) config.eager_connect = parse_switch(kEagerConnect, v);
  if (const char* v = lookup(kTerminateHandler))
    config.terminate_handler = parse_switch(kTerminateHandler, v);
  if (const char* v = lookup(kHomeMigration)) {
    const std::string text(v);
    if (text == "off" || text == "0")
      config.home_migration = HomeMigration::off;
    else if (text == "adaptive")
      config.home_migration = HomeMigration::adaptive;
    else if (text == "on" || text == "1")
      config.home_migration = HomeMigration::on;
    else
      bad_value(kHomeMigration, text, "one of off, adaptive, on");
  }
  if (const char* v = lookup(kCoherence))
    config.coherence = parse_choice(kCoherence, v,
                                    {Coherence::adaptive, Coherence::invalidate, Coherence::update,
                                     Coherence::read_mostly, Coherence::single_writer});
  if (const char* v = lookup(kDiffKernel))
    config.diff_kernel = parse_choice(kDiffKernel, v,
                                      {DiffKernel::automatic, DiffKernel::avx512, DiffKernel::avx2,
                                       DiffKernel::neon, DiffKernel::words});
  if (const char* v = lookup(kDirectAccess)) {
    std::string text(v);
    if (text == "auto" || text == "on")
      config.direct_access = true;
    else if (text == "off")
      config.direct_access = false;
    else
      bad_value(kDirectAccess, text, "one of auto, off");
  }
  return config;
}

Config Config::from_environment() {
  return parse([](const char* name) { return std::getenv(name); });
}

std::vector<std::pair<std::string, std::string>> Config::describe() const {
  return {
      {kProgressThread, to_string(progress_thread)},
      {kProgressSpin, std::to_string(progress_spin_us)},
      {kProgressSlice, std::to_string(progress_slice_us)},
      {kProgressInMpi, progress_in_mpi ? "1" : "0"},
      {kYieldWhenIdle, to_string(yield_when_idle)},
      {kRndvThresh, rndv_threshold == 0 ? "auto" : std::to_string(rndv_threshold)},
      {kShmEagerLimit, std::to_string(shm_eager_limit)},
      {kHeapSize, std::to_string(heap_size)},
      {kDirectAccess, direct_access ? "auto" : "off"},
      {kDsmSize, std::to_string(dsm_size)},
      {kCachePages, std::to_string(cache_pages)},
      {kPrefetchPages, std::to_string(prefetch_pages)},
      {kMaxCheckingPages, std::to_string(max_checking_pages)},
      {kLocks, std::to_string(dsm_locks)},
      {kStats, dsm_stats ? "1" : "0"},
      {kBarrierRefetch, barrier_refetch ? "1" : "0"},
      {kAdaptiveUpdates, adaptive_updates ? "1" : "0"},
      {kFetchByCall, fetch_by_call ? "1" : "0"},
      {kPutByCall, put_by_call ? "1" : "0"},
      {kEagerConnect, eager_connect ? "1" : "0"},
      {kTerminateHandler, terminate_handler ? "1" : "0"},
      {kHomeMigration, to_string(home_migration)},
      {kCoherence, to_string(coherence)},
      {kDiffKernel, to_string(diff_kernel)},
  };
}

std::span<const ConfigVariable> Config::variables() {
  return kVariables;
}

std::vector<std::string> Config::unknown_variables(char* const* env) {
  std::vector<std::string> unknown;
  for (; env && *env; ++env) {
    std::string entry(*env);
    // MPIDSM_TEST_* are the test suite's aids (docs/testing.md), not settings.
    if (entry.rfind("MPIDSM_", 0) != 0 || entry.rfind("MPIDSM_TEST_", 0) == 0) continue;
    std::string name = entry.substr(0, entry.find('='));
    bool known = false;
    for (const auto& variable : kVariables) known = known || name == variable.name;
    if (!known) unknown.push_back(name);
  }
  return unknown;
}

}  // namespace mpidsm
