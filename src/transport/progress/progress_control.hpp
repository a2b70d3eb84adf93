// The progress plumbing of a Transport, apart from its public surface: what
// the progress thread, MPI's progress hook and the runtime that starts them
// call, and the counters tests read. Applications call Transport::progress()
// and never these. docs/progress.md describes the mechanism as a whole.
#pragma once

#include <cstdint>
#include <functional>

#include "mpidsm/transport.hpp"

namespace mpidsm::detail {

class ProgressHandoff;

class ProgressControl {
 public:
  explicit ProgressControl(Transport& transport) noexcept : transport_(transport) {}

  /// As many ranks on this node as CPUs: a helper thread that polls would take
  /// a CPU from some rank.
  bool no_spare_cpu() const;
  /// For a progress thread: some other thread is inside this transport
  /// (counted once the progress thread has called progress_as_helper), so it
  /// drives the worker.
  bool others_progressing() const;
  /// For a progress thread: drives UCX once unless some thread waits inside
  /// the transport (which then drives it; a helper calling in too would only
  /// spin on the worker's lock). True when something happened.
  bool progress_as_helper();
  /// For MPI's progress loop, on a thread blocked in MPI, once a progress
  /// thread runs (or, without one, once peers need this rank's progress):
  /// drives UCX once unless another thread of this rank is inside the
  /// transport (which drives it). True when something happened.
  bool progress_from_mpi();
  /// For a progress thread (transports created `shareable`): arms the worker
  /// and blocks without polling until it has events that no thread waiting
  /// inside the transport will handle, or until interrupt_sleep(). Returns at
  /// once when events are pending: progress, then call it again.
  void sleep_until_events();
  /// Ends a sleep_until_events() in progress, or the next one.
  void interrupt_sleep() noexcept;
  /// Set by the runtime: called (once) when a region is registered that some
  /// peer cannot map, i.e. when remote operations may need this rank's progress.
  void on_target_progress_needed(std::function<void()> hook);
  /// Set by the runtime: called (once, on the calling thread) the first time
  /// this rank sends, receives or probes a tagged message, as messages in
  /// flight then need its progress while it is blocked in MPI.
  void on_messages_need_progress(std::function<void()> hook);

  /// How many progress_from_mpi calls served peers' one-sided operations
  /// (messages they moved on are not counted).
  std::uint64_t progressed_from_mpi() const;
  /// How many progress_as_helper calls (the progress thread's) found
  /// something to do.
  std::uint64_t progressed_as_helper() const;
  /// How often MPI's progress loop began serving peers (this rank blocked
  /// in MPI, that loop finding events), which keeps the sleeping progress
  /// thread from waking for the worker's events until it has served nothing
  /// for a while (docs/progress.md).
  std::uint64_t mpi_serving_episodes() const;
  /// How often a wait inside the transport muted the sleeping progress
  /// thread (two epoll_ctl calls each): one-sided waits on remote peers do,
  /// waits for tagged messages never do (docs/progress.md).
  std::uint64_t progress_thread_mutes() const;

 private:
  Transport::Impl& impl() const;

  Transport& transport_;
};

/// While alive, the calling thread drives UCX for this rank: the progress
/// thread neither enters the worker nor wakes for its events, even between
/// the thread's calls. For a phase that alternates short local work with
/// waits on peers that are themselves waiting (a DSM barrier): a woken
/// progress thread would only take the worker and a CPU from this thread
/// then. The thread must call into the transport again soon, and must not
/// block outside it (in a blocking MPI call) while the scope lives.
class DrivingProgress {
 public:
  /// Starts driving `transport`'s progress from this thread.
  explicit DrivingProgress(Transport& transport) noexcept;
  /// Hands progress back to the progress thread.
  ~DrivingProgress();
  DrivingProgress(const DrivingProgress&) = delete;
  DrivingProgress& operator=(const DrivingProgress&) = delete;

 private:
  ProgressHandoff* handoff_;  // nullptr: no progress thread runs
};

}  // namespace mpidsm::detail
