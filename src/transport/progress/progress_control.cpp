#include "progress_control.hpp"

#include <ucp/api/ucp.h>

#include <utility>

#include "transport/transport_impl.hpp"

namespace mpidsm::detail {

Transport::Impl& ProgressControl::impl() const {
  return *transport_.impl_;
}

bool ProgressControl::no_spare_cpu() const {
  return impl().no_spare_cpu;
}

bool ProgressControl::others_progressing() const {
  return impl().handoff.others_inside();
}

// Counted inside as any call is, and muted at once rather than after a wait's
// idle polls: the gaps between this thread's calls are the point.
DrivingProgress::DrivingProgress(Transport& transport) noexcept
    : handoff_(transport.impl_->handoff.helper_running() ? &transport.impl_->handoff : nullptr) {
  if (!handoff_) return;
  handoff_->enter();
  handoff_->mute();
}

DrivingProgress::~DrivingProgress() {
  if (handoff_) handoff_->leave();
}

bool ProgressControl::progress_as_helper() {
  ProgressHandoff& handoff = impl().handoff;
  if (!handoff.helper_enter()) return false;
  const bool progressed = ucp_worker_progress(impl().worker) != 0;
  handoff.helper_leave();
  if (progressed) impl().progressed_as_helper.fetch_add(1, std::memory_order_relaxed);
  return progressed;
}

// Counted inside as a wait is: the progress thread stays out meanwhile, and
// does not wake for what this call handles.
bool ProgressControl::progress_from_mpi() {
  Transport::Impl& s = impl();
  WorkerGuard& guard = s.worker_guard;
  bool served = false, messages = false;
  if (guard.single_threaded()) {
    // No progress thread (MPIDSM_PROGRESS_THREAD=off): MPI's loop is the
    // only one that serves peers while the rank is blocked in MPI.
    if (!guard.try_borrow()) return false;
    // Registered for messages alone, MPI's loop has no peer to serve here.
    served = s.target_progress_needed.load(std::memory_order_relaxed) &&
             ucp_worker_progress(s.worker) != 0;
    messages = s.messaging_due() && ucp_worker_progress(s.messaging_worker) != 0;
    guard.give_back();
  } else {
    // Messages in flight move on while the rank is blocked in MPI, as MPI's
    // own would (that worker is thread-safe, and no thread sleeps on it).
    messages = s.messaging_due() && ucp_worker_progress(s.messaging_worker) != 0;
    ProgressHandoff& handoff = s.handoff;
    if (handoff.helper_running() && !handoff.others_inside()) {
      CountedInside counted(handoff);
      served = ucp_worker_progress(s.worker) != 0;
      if (served) handoff.mpi_loop_served();
    }
  }
  // Counts peers' operations served, which is what mutes the thread.
  if (served) s.progressed_from_mpi.fetch_add(1, std::memory_order_relaxed);
  return served || messages;
}

std::uint64_t ProgressControl::progressed_from_mpi() const {
  return impl().progressed_from_mpi.load(std::memory_order_relaxed);
}

std::uint64_t ProgressControl::progressed_as_helper() const {
  return impl().progressed_as_helper.load(std::memory_order_relaxed);
}

std::uint64_t ProgressControl::mpi_serving_episodes() const {
  return impl().handoff.mpi_serving_episodes();
}

std::uint64_t ProgressControl::progress_thread_mutes() const {
  return impl().handoff.waiter_mutes();
}

// The helper's own calls do not count as inside: they bracket themselves.
void ProgressControl::sleep_until_events() {
  impl().handoff.sleep();
}

void ProgressControl::interrupt_sleep() noexcept {
  impl().handoff.interrupt();
}

void ProgressControl::on_messages_need_progress(std::function<void()> hook) {
  impl().messages_progress_hook = std::move(hook);
}

void ProgressControl::on_target_progress_needed(std::function<void()> hook) {
  impl().target_progress_hook = std::move(hook);
  if (impl().target_progress_needed && impl().target_progress_hook) impl().target_progress_hook();
}

}  // namespace mpidsm::detail
