// Run-time configuration from MPIDSM_* environment variables. Read once when
// a Runtime is created; a bad value is an Errc::config error naming the
// variable, the value and what is allowed.
#pragma once

#include "mpidsm/language.hpp"

#include <cstddef>
#include <functional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "mpidsm/coherence.hpp"
#include "mpidsm/progress_modes.hpp"

namespace mpidsm {

/// \addtogroup runtime
/// @{

/// Whether DSM pages move home to the rank that writes them (JIAJIA's home
/// migration), decided at each barrier from its write notices.
enum class HomeMigration {
  off,       ///< every page keeps the home its placement gave it
  adaptive,  ///< a page moves once the same rank was its only writer in two intervals in a row
  on,        ///< a page moves at every barrier whose interval one rank alone wrote it in (JIAJIA)
};

/// The instructions that compare DSM pages with their twins and move the
/// changed bytes. Every kernel writes the same bytes; they differ in speed.
enum class DiffKernel {
  automatic,  ///< the widest this CPU runs: avx512, then avx2 or neon, then words
  avx512,     ///< x86-64 with AVX-512BW: 64-byte compares and byte-masked stores
  avx2,       ///< x86-64 with AVX2: 32-byte compares, stores run by run
  neon,       ///< 64-bit Arm: 16-byte compares, stores run by run
  words,      ///< any CPU: 64-bit word compares
};

/// One documented variable: its name, default and meaning (for mpidsm_info and docs).
struct ConfigVariable {
  /// The environment variable, e.g. MPIDSM_LOCKS.
  const char* name;
  /// Its default, as the user would write it.
  const char* default_value;
  /// What it does and which values it takes.
  const char* description;
};

/// Every MPIDSM_* setting, parsed and validated; docs in mpidsm_info -a.
struct Config {
  /// MPIDSM_PROGRESS_THREAD.
  ProgressMode progress_thread = ProgressMode::automatic;
  /// MPIDSM_YIELD_WHEN_IDLE.
  YieldMode yield_when_idle = YieldMode::automatic;
  /// Microseconds the progress thread keeps polling after its last work.
  std::size_t progress_spin_us = 200;
  /// The progress thread's scheduling slice in microseconds (Linux 6.12 and
  /// later; 0: the kernel's default).
  std::size_t progress_slice_us = 100;
  /// While the progress thread runs, blocking MPI calls of this rank (Open
  /// MPI's progress loop) drive the UCX worker too.
  bool progress_in_mpi = true;
  /// Message size from which UCX switches tagged sends to rendezvous; 0 lets UCX decide.
  std::size_t rndv_threshold = 0;
  /// Tagged messages to ranks of this node up to this size travel through
  /// shared-memory mailboxes (larger ones announce themselves there and follow
  /// by UCX rendezvous); 0 sends every message through UCX's tag matching.
  std::size_t shm_eager_limit = 4096;
  /// Bytes of symmetric heap per rank (the PGAS face allocates from it).
  std::size_t heap_size = std::size_t{128} << 20;
  /// Use loads, stores and CPU atomics on peers' memory that UCX can map.
  /// Off forces every one-sided operation through UCX (for comparison or debugging).
  bool direct_access = true;
  /// Bytes of the DSM shared region (same virtual address on every rank).
  std::size_t dsm_size = std::size_t{256} << 20;
  /// Remote pages a rank keeps cached at most (LRU replacement).
  std::size_t cache_pages = 16384;
  /// On a read miss, fetch up to this many following pages with the same home...
  std::size_t prefetch_pages = 16;
  /// ...looking at most this many pages past the miss.
  std::size_t max_checking_pages = 32;
  /// Lock ids available to Dsm locks: 0 .. dsm_locks-1.
  std::size_t dsm_locks = 16384;
  /// Print the per-rank DSM statistics table when a Dsm is destroyed.
  bool dsm_stats = false;
  /// At a DSM barrier across nodes, fetch again (while every rank still waits
  /// in the barrier) the remote pages this rank used in the ending interval
  /// that the barrier invalidates, instead of faulting on them afterwards.
  bool barrier_refetch = true;
  /// Adaptive DSM pages a rank keeps fetching again after acquires dropped
  /// them switch to write-update for that rank, and back when an update
  /// goes unread (MPIDSM_ADAPTIVE_UPDATES; docs/consistency.md).
  bool adaptive_updates = true;
  /// When UCX reaches every remote home through active messages (tcp), fetch
  /// DSM pages with one call their home answers with the pages, rather than
  /// with one-sided atomics and gets (two round trips).
  bool fetch_by_call = true;
  /// When UCX reaches every peer not on this node through active messages
  /// (tcp), send PGAS puts and put_signals of up to 8 KiB as one call the
  /// target acknowledges, rather than as UCX's emulated put plus its flush.
  bool put_by_call = true;
  /// Connect every pair of ranks at start-up; otherwise ranks of this node
  /// connect at start-up and other ranks on first use (MPIDSM_EAGER_CONNECT).
  bool eager_connect = false;
  /// An uncaught error prints one line per rank and aborts the job
  /// (MPIDSM_TERMINATE_HANDLER).
  bool terminate_handler = true;
  /// DSM pages move home to their only writer at barriers (MPIDSM_HOME_MIGRATION).
  HomeMigration home_migration = HomeMigration::adaptive;
  /// The coherence policy of DSM allocations that name none (MPIDSM_COHERENCE).
  Coherence coherence = Coherence::adaptive;
  /// The diff kernel of DSM releases (MPIDSM_DIFF_KERNEL).
  DiffKernel diff_kernel = DiffKernel::automatic;

  /// Reads the environment. Throws Error(Errc::config) on a bad value.
  static Config from_environment();
  /// Same, with a caller-supplied lookup (returns nullptr when unset): for tests.
  static Config parse(const std::function<const char*(const char*)>& lookup);

  /// The effective value of every variable, in the order of variables().
  std::vector<std::pair<std::string, std::string>> describe() const;

  /// Every variable mpidsm reads.
  static std::span<const ConfigVariable> variables();
  /// MPIDSM_* names in env (an environ-style, null-terminated array) that mpidsm
  /// does not know: usually a typo the user wants to hear about.
  static std::vector<std::string> unknown_variables(char* const* env);
};

/// The mode as MPIDSM_HOME_MIGRATION spells it.
const char* to_string(HomeMigration mode);

/// The kernel as MPIDSM_DIFF_KERNEL spells it.
const char* to_string(DiffKernel kernel);
/// Parses "4096", "64K", "16M", "1G" (powers of 1024). Throws Error(Errc::config)
/// naming `variable` when `text` is not a size.
std::size_t parse_size(const char* variable, const std::string& text);

/// @}

}  // namespace mpidsm
