// How the DSM keeps the copies of an allocation's pages coherent.
#pragma once

#include "mpidsm/language.hpp"

#include <cstdint>

namespace mpidsm {

/// \addtogroup dsm
/// @{

/// The coherence policy of a DSM allocation, chosen with its placement
/// (Dsm::allocate); docs/consistency.md states each one's guarantees. Every
/// policy gives the same visibility at barriers, locks, flags and syncs:
/// they differ in what travels and when.
enum class Coherence : std::uint8_t {
  /// The default: write-invalidate, with pages moving home to their only
  /// writer (MPIDSM_HOME_MIGRATION) and, across nodes, the pages a rank
  /// read in the ending interval sent to it inside the barrier
  /// (MPIDSM_BARRIER_REFETCH).
  adaptive,
  /// Write-invalidate only (JIAJIA's protocol): homes never move, and a
  /// copy another rank's write names leaves the cache at the acquire.
  invalidate,
  /// Write-update: at every acquire (barrier, lock, flag, sync), the copies
  /// other ranks' writes name are brought up to date in place, sent by their
  /// homes, rather than dropped. Homes never move.
  update,
  /// update, plus a read miss copies the pages that follow it in the
  /// allocation from the same home (up to MPIDSM_PREFETCH_PAGES): for data
  /// every rank reads and few write.
  read_mostly,
  /// One writer per page between synchronisations (the home counts as
  /// one): no twin or diff; a release writes the whole page home. A barrier
  /// whose interval two ranks wrote a page in fails on every rank, naming
  /// the page and the ranks. Homes never move.
  single_writer,
};

/// The policy as MPIDSM_COHERENCE spells it.
const char* to_string(Coherence policy);

/// @}

}  // namespace mpidsm
