// One Dsm over MPI_COMM_WORLD for a whole test suite.
#pragma once

#include <cstdlib>
#include <memory>
#include <string>

#include "mpi_test_support.hpp"
#include "mpidsm/dsm.hpp"

namespace mpidsm::testing {

class DsmTest : public WorldRuntimeTest<> {
 protected:
  static void SetUpTestSuite() {
    WorldRuntimeTest::SetUpTestSuite();
    dsm_ = std::make_unique<Dsm>(*runtime_);
  }
  static void TearDownTestSuite() {
    dsm_.reset();
    WorldRuntimeTest::TearDownTestSuite();
  }
  static inline std::unique_ptr<Dsm> dsm_;
};

// For a test of the protocol with fixed homes (diffs, notices, copies): no
// page moves home while it lives (MPIDSM_HOME_MIGRATION=on would move a page
// written by one rank alone after its first interval).
class FixedHomes {
 public:
  FixedHomes(Dsm& dsm, const Runtime& runtime)
      : dsm_(dsm), mode_(DsmSettings::from(runtime.config()).home_migration) {
    dsm_.set_home_migration(HomeMigration::off);
  }
  ~FixedHomes() { dsm_.set_home_migration(mode_); }
  FixedHomes(const FixedHomes&) = delete;
  FixedHomes& operator=(const FixedHomes&) = delete;

 private:
  Dsm& dsm_;
  HomeMigration mode_;
};

// Locks are acquired through calls to their homes (lock_table.hpp): no home
// is mapped here (MPIDSM_DIRECT_ACCESS=off) and UCX reaches every peer
// through messages (tcp).
inline bool locks_through_calls(Runtime& runtime) {
  const char* direct = std::getenv("MPIDSM_DIRECT_ACCESS");
  if (!direct || std::string(direct) != "off") return false;
  for (int peer = 0; peer < runtime.size(); ++peer)
    if (peer != runtime.rank() && !runtime.transport().rma_through_messages(peer)) return false;
  return true;
}

// Collective. Every rank reaches every other through messages and maps
// none: the homes keep their locks' queues (lock_queues.hpp), and a waiter
// sends no link to its predecessor.
inline bool homes_keep_lock_queues(Runtime& runtime) {
  int alone = 1;
  for (int peer = 0; peer < runtime.size(); ++peer)
    if (peer != runtime.rank() &&
        (mapped_here(runtime, peer) || !runtime.transport().rma_through_messages(peer)))
      alone = 0;
  int all = 0;
  MPI_Allreduce(&alone, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
  return all != 0;
}

// Collective. DSM fetches are calls their homes answer (page_calls.hpp):
// every rank reaches every other through messages and maps none, and
// MPIDSM_FETCH_BY_CALL is not 0.
inline bool fetches_through_calls(Runtime& runtime) {
  return homes_keep_lock_queues(runtime) && runtime.config().fetch_by_call;
}

}  // namespace mpidsm::testing
