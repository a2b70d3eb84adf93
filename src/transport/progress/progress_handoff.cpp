#include "progress_handoff.hpp"

#include <sched.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <string>

#include "mpidsm/error.hpp"
#include "transport/ucx_status.hpp"

namespace mpidsm::detail {
namespace {

[[noreturn]] void throw_system(int rank, const char* call) {
  throw Error(Errc::transport, rank,
              std::string("progress thread: ") + call + " failed: " + std::strerror(errno));
}

// Tags the set's two descriptors.
constexpr std::uint64_t worker_event = 1, wake_event = 2;

}  // namespace

ProgressHandoff::~ProgressHandoff() {
  if (epoll_fd_ >= 0) close(epoll_fd_);
  if (wake_fd_ >= 0) close(wake_fd_);
}

void ProgressHandoff::open(int rank, ucp_worker_h worker, bool oversubscribed) {
  rank_ = rank;
  worker_ = worker;
  mute_lock_.set_wait(oversubscribed ? SpinOrSleepLock::Wait::sleep : SpinOrSleepLock::Wait::spin);
  check_ucx(rank, "ucp_worker_get_efd", no_rank, ucp_worker_get_efd(worker, &worker_fd_));
  epoll_fd_ = epoll_create1(EPOLL_CLOEXEC);
  if (epoll_fd_ < 0) throw_system(rank, "epoll_create1");
  wake_fd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (wake_fd_ < 0) throw_system(rank, "eventfd");
  epoll_event events{};
  events.events = EPOLLIN;
  events.data.u64 = worker_event;
  if (epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, worker_fd_, &events) != 0)
    throw_system(rank, "epoll_ctl");
  events.data.u64 = wake_event;
  if (epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, wake_fd_, &events) != 0) throw_system(rank, "epoll_ctl");
}

bool ProgressHandoff::mute() noexcept {
  // Nobody sleeps on the set before the thread's first call: a one-node job,
  // whose thread never starts, makes no system call here.
  if (epoll_fd_ < 0 || !helper_running()) return false;
  // Written before apply() reads inside_, as leave() writes inside_ before
  // reading this: one of the two sees the other, so the set is never left
  // muted with no waiter to unmute it.
  mute_requested_.store(true, std::memory_order_seq_cst);
  return apply();
}

bool ProgressHandoff::apply() noexcept {
  std::lock_guard<SpinOrSleepLock> guard(mute_lock_);
  const bool waiters = mute_requested_.load(std::memory_order_seq_cst) &&
                       inside_.load(std::memory_order_seq_cst) > 0;
  if (!waiters) mute_requested_.store(false, std::memory_order_seq_cst);
  const bool mute = waiters || mpi_serving_.load(std::memory_order_seq_cst);
  if (mute == muted_) return mute;
  if (waiters) waiter_mutes_.fetch_add(1, std::memory_order_relaxed);
  // A worker the sleeper armed stays armed, or its fd stays readable until
  // the next arm, whatever the waiters handled meanwhile: unmuting it needs
  // no arm, which would cost the waiter a system call (a read of UCX's
  // eventfd, more on NICs) on its way out. Measured on a tagged ping-pong
  // across two hosts: 0.98-1.04x MPI without that arm, 1.03-1.15x with it.
  // A sleeper that went to sleep muted never armed: then the waiter does,
  // so that new events wake the sleeper (at worst once, for events the
  // waiters already handled). A worker with events pending cannot be armed,
  // and its fd will not report them: the sleeper is woken to progress them
  // (and arm) itself, or they would wait for this rank's next call into the
  // transport. (A shmem lock's holder spinning on its own word, whose
  // atomics complete at once, made none: every PE hung.)
  if (!mute && !armed_.load(std::memory_order_acquire)) {
    if (arm())
      armed_.store(true, std::memory_order_release);
    else
      interrupt();
  }
  epoll_event events{};
  events.events = mute ? 0u : std::uint32_t{EPOLLIN};
  events.data.u64 = worker_event;
  // Cannot fail on a descriptor already in the set.
  epoll_ctl(epoll_fd_, EPOLL_CTL_MOD, worker_fd_, &events);
  muted_ = mute;
  return mute;
}

bool ProgressHandoff::arm() noexcept {
  // UCS_ERR_BUSY: events are pending, and the fd will not report them.
  return ucp_worker_arm(worker_) == UCS_OK;
}

thread_local bool ProgressHandoff::in_helper_ = false;

bool ProgressHandoff::helper_enter() noexcept {
  if (!helper_running_.load(std::memory_order_relaxed))
    helper_running_.store(true, std::memory_order_seq_cst);
  helper_inside_.store(true, std::memory_order_seq_cst);
  if (inside_.load(std::memory_order_seq_cst) == 0) {
    in_helper_ = true;
    return true;
  }
  helper_inside_.store(false, std::memory_order_release);
  return false;
}

void ProgressHandoff::let_helper_finish() const noexcept {
  // One ucp_worker_progress call; yield in case the helper was preempted.
  for (unsigned spins = 0; helper_inside_.load(std::memory_order_acquire); ++spins)
    if (spins % 128 == 127) sched_yield();
}

void ProgressHandoff::sleep() {
  // The caller has just progressed the worker, which an arm must follow.
  // While a waiter drives the worker it needs no arming here: the last one
  // out arms it. A worker with events pending cannot be armed: the caller
  // progresses them first.
  armed_.store(false, std::memory_order_release);
  if (!mute()) {
    if (!helper_enter()) return;  // a waiter came: the caller goes round again
    const bool armed = arm();
    // Published before leaving: a waiter that enters now waits for this.
    armed_.store(armed, std::memory_order_release);
    helper_leave();
    if (!armed) return;
  }
  for (;;) {
    epoll_event events[2];
    const int ready = wait_for_events(events, 2);
    if (ready < 0) {
      if (errno == EINTR) continue;
      throw_system(rank_, "epoll_wait");
    }
    if (ready == 0) {
      // MPI's loop served nothing for a window: unless it did just now,
      // the fd is watched again (a worker never armed is armed first).
      const std::int64_t quiet = now_ns() - mpi_served_ns_.load(std::memory_order_relaxed);
      if (quiet >= kMpiQuietWindow.count()) {
        mpi_serving_.store(false, std::memory_order_seq_cst);
        apply();
      }
      continue;
    }
    for (int i = 0; i < ready; ++i) {
      if (events[i].data.u64 != wake_event) continue;
      std::uint64_t count;
      [[maybe_unused]] ssize_t drained = read(wake_fd_, &count, sizeof count);
      return;
    }
    // Woken by the worker: progress it, unless a waiter (that has not muted
    // yet) drives these events. The event may have used up the arm.
    armed_.store(false, std::memory_order_release);
    if (!mute()) return;
  }
}

int ProgressHandoff::wait_for_events(epoll_event* events, int capacity) {
  if (!mpi_serving_.load(std::memory_order_seq_cst))
    return epoll_wait(epoll_fd_, events, capacity, -1);
  const timespec timeout{0, static_cast<long>(kMpiQuietWindow.count())};
  const int ready = epoll_pwait2(epoll_fd_, events, capacity, &timeout, nullptr);
  if (ready >= 0 || errno != ENOSYS) return ready;
  // Kernels before 5.11: a millisecond is epoll_wait's finest timeout.
  return epoll_wait(epoll_fd_, events, capacity, 1);
}

void ProgressHandoff::mpi_loop_served() noexcept {
  mpi_served_ns_.store(now_ns(), std::memory_order_relaxed);
  if (mpi_serving_.load(std::memory_order_relaxed)) return;
  mpi_serving_.store(true, std::memory_order_seq_cst);
  mpi_episodes_.fetch_add(1, std::memory_order_relaxed);
  apply();
  // A sleeper waiting without a timeout must come back for one: it is
  // muted now, and only its window's end unmutes it.
  interrupt();
}

void ProgressHandoff::interrupt() noexcept {
  const std::uint64_t one = 1;
  [[maybe_unused]] ssize_t written = write(wake_fd_, &one, sizeof one);
}

}  // namespace mpidsm::detail
