#include "progress_thread.hpp"

#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace mpidsm::detail {

ProgressThread::ProgressThread(Transport& transport) : transport_(transport) {
  wake_fd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (wake_fd_ < 0)
    throw Error(Errc::no_memory, transport.rank(),
                std::string("progress thread: eventfd failed: ") + std::strerror(errno));
  thread_ = std::thread([this] { run(); });
}

ProgressThread::~ProgressThread() {
  stopping_.store(true, std::memory_order_release);
  std::uint64_t one = 1;
  [[maybe_unused]] ssize_t written = write(wake_fd_, &one, sizeof one);
  thread_.join();
  close(wake_fd_);
}

void ProgressThread::run() {
  pollfd fds[2] = {{transport_.event_fd(), POLLIN, 0}, {wake_fd_, POLLIN, 0}};
  try {
    while (!stopping_.load(std::memory_order_acquire)) {
      while (transport_.progress()) {
      }
      // arm() fails while events are pending: progress again before sleeping.
      if (!transport_.arm()) continue;
      if (poll(fds, 2, -1) < 0 && errno != EINTR)
        throw Error(Errc::transport, transport_.rank(),
                    std::string("progress thread: poll failed: ") + std::strerror(errno));
    }
  } catch (const Error& e) {
    // Nothing can propagate out of a thread; report the reason peers will stall.
    std::fprintf(stderr, "%s (progress thread stopped)\n", e.what());
  }
}

}  // namespace mpidsm::detail
