// Who died while the ranks of a communicator construct their runtime, before
// the transport can watch its peers (PeerLiveness needs their addresses and
// pids, which the start-up exchanges). MPI itself waits for a dead rank for
// ever and reports nothing: Open MPI 4.1.4 under `--enable-recovery`, on one
// node and across hosts, and its launcher's PMIx event for the death does
// not reach the ranks ("PMIX ERROR: BAD-PARAM", docs/transport.md). Two
// sources tell instead:
// - The node's registry. Each process that constructs a runtime writes its
//   pid to a file named by its job and rank in the launcher's session
//   directory (PMIX_SERVER_TMPDIR: node-local, removed by the launcher at the
//   job's end). A rank of the communicator whose file names a process that
//   is gone has died; one without a file has not started yet.
// - Notices. A rank that finds a death sends the dead rank's number to every
//   rank of the communicator, so ranks on other nodes learn of it too: MPI's
//   point-to-point messages still pass between the living.
// A rank alone on its node (or in its PID namespace) that dies before its
// address reached its peers leaves no one to see it; the waits then say,
// once, how long they have waited.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <string>
#include <vector>

#include "common/mpi_exchange.hpp"

namespace mpidsm::detail {

class StartupWatch {
 public:
  // Enters this process into its node's registry (once per process) and
  // attaches itself to `comm` as the wait of its collectives.
  StartupWatch(MPI_Comm comm, int rank);
  ~StartupWatch();
  StartupWatch(const StartupWatch&) = delete;
  StartupWatch& operator=(const StartupWatch&) = delete;

  // Collective: the runtime's private duplicate of the communicator, made
  // with a watched MPI_Comm_idup; the watch then moves to it (its notices no
  // longer travel on the application's communicator).
  MPI_Comm duplicate(const char* operation);

 private:
  static void wait_for(void* watch, MPI_Request& request, const char* operation);
  void wait(MPI_Request& request, const char* operation);
  void watch(MPI_Comm comm);
  void unwatch() noexcept;
  // Whether the registry shows a rank of the communicator dead (gone_).
  bool look();
  int heard();  // a rank a notice named, or -1
  void tell();
  // "rank 2 is gone (its process died)": the rank a notice named, else
  // every rank found gone (survivors that left once they saw the first
  // death are gone too; naming them all keeps the first).
  std::string describe_gone(int told) const;

  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_;
  int notice_tag_ = 0;
  std::vector<int> job_ranks_;      // per rank of comm: its rank in this job, or -1
  std::vector<std::int64_t> pids_;  // per rank of comm: its registered pid, 0 while unknown
  std::vector<char> gone_;          // per rank of comm: found dead here
  std::int64_t notice_[2] = {};     // {kNoticeMark, dead rank}
  MPI_Request notice_request_ = MPI_REQUEST_NULL;
  CollectiveWait attached_;
};

// Testing aid: when MPIDSM_TEST_KILL_AT is "<point>:<rank>" and names this
// point and this rank of MPI_COMM_WORLD, the process kills itself (SIGKILL)
// here. The points are named where they are called, e.g. "runtime-start".
void startup_point(const char* point);

}  // namespace mpidsm::detail
