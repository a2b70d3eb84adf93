// Completion handles for non-blocking sends, receives, puts and gets.
#include <ucp/api/ucp.h>

#include <memory>
#include <utility>

#include "common/pinned_ranges.hpp"
#include "tag_codec.hpp"
#include "transport_impl.hpp"

namespace mpidsm {

Request::Request(Transport* transport, void* handle, Kind kind, const char* what, int peer,
                 std::size_t capacity, const void* pinned, std::size_t pinned_size)
    : transport_(transport),
      handle_(handle),
      kind_(kind),
      what_(what),
      peer_(peer),
      capacity_(capacity),
      pinned_(pinned),
      pinned_size_(pinned_size) {
  if (handle_ && UCS_PTR_IS_ERR(handle_)) {
    ucs_status_t status = UCS_PTR_STATUS(handle_);
    handle_ = nullptr;
    unpin();
    transport_->impl_->throw_failed(what_, peer_, status);
  }
  if (!handle_) {
    unpin();  // completed at once
  } else if (messaging()) {
    transport_->impl_->messages_in_flight.fetch_add(1, std::memory_order_relaxed);
  }
}

void Request::unpin() noexcept {
  if (pinned_size_ != 0) detail::unpin(pinned_, pinned_size_);
  pinned_ = nullptr;
  pinned_size_ = 0;
}

void Request::finish() noexcept {
  if (messaging()) transport_->impl_->messages_in_flight.fetch_sub(1, std::memory_order_relaxed);
  handle_ = nullptr;
  unpin();
}

Request::Request(Request&& other) noexcept {
  *this = std::move(other);
}

Request& Request::operator=(Request&& other) noexcept {
  if (this != &other) {
    release();
    transport_ = std::exchange(other.transport_, nullptr);
    handle_ = std::exchange(other.handle_, nullptr);
    kind_ = other.kind_;
    what_ = other.what_;
    peer_ = other.peer_;
    capacity_ = other.capacity_;
    message_ = other.message_;
    pinned_ = std::exchange(other.pinned_, nullptr);
    pinned_size_ = std::exchange(other.pinned_size_, 0);
  }
  return *this;
}

Request::~Request() {
  release();
}

void Request::release() noexcept {
  if (!handle_) return;
  // The buffer may be freed right after us: never leave UCX writing into it.
  try {
    wait();
  } catch (const Error&) {
    // Completed with an error nobody asked for: nothing left to protect,
    // except a receive the wait gave up on (its peer is gone), which must
    // leave the mailboxes' queue.
    if (kind_ == Kind::mailbox_receive && handle_) {
      std::unique_ptr<detail::PostedReceive> receive(static_cast<detail::PostedReceive*>(handle_));
      transport_->impl_->mailboxes.withdraw(*receive);
      finish();
    }
  }
}

void Request::cancel() noexcept {
  if (!handle_ || (kind_ != Kind::receive && kind_ != Kind::message_receive)) return;
  const Transport::Impl& s = *transport_->impl_;
  ucp_worker_h worker = messaging() ? s.messaging_worker : s.worker;
  ucp_request_cancel(worker, handle_);
  while (ucp_request_check_status(handle_) == UCS_INPROGRESS) ucp_worker_progress(worker);
  ucp_request_free(handle_);
  finish();
}

// Checks completion without progressing; on completion records the message
// description, frees the UCX request and throws if it failed.
bool Request::poll() {
  if (!handle_) return true;
  if (kind_ == Kind::mailbox_receive) return poll_mailbox();
  ucs_status_t status;
  ucp_tag_recv_info_t info{};
  const bool receive = kind_ == Kind::receive || kind_ == Kind::message_receive;
  if (receive) {
    status = ucp_tag_recv_request_test(handle_, &info);
  } else {
    status = ucp_request_check_status(handle_);
  }
  if (status == UCS_INPROGRESS) return false;
  ucp_request_free(handle_);
  finish();
  if (receive) {
    message_ = detail::TagCodec::describe(info.sender_tag, info.length);
    if (status == UCS_ERR_MESSAGE_TRUNCATED)
      throw detail::truncated(transport_->rank(), message_, capacity_);
  }
  transport_->impl_->check(what_, peer_, status);
  return true;
}

// Takes in arrived messages; on completion records the message, frees the
// receive and throws if it failed.
bool Request::poll_mailbox() {
  auto* receive = static_cast<detail::PostedReceive*>(handle_);
  if (!transport_->impl_->mailboxes.poll_for(*receive)) return false;
  std::unique_ptr<detail::PostedReceive> done(receive);
  finish();
  message_ = receive->info;
  if (receive->status == UCS_ERR_MESSAGE_TRUNCATED)
    throw detail::truncated(transport_->rank(), message_, capacity_);
  transport_->impl_->check(what_, message_.source, receive->status);
  return true;
}

bool Request::test() {
  if (!handle_) return true;
  Transport::Impl& s = *transport_->impl_;
  const auto what = Transport::Impl::waiting_for(messaging());
  auto in_use = s.use_worker(what_, what);
  s.progress_once(what);
  return poll();
}

void Request::wait() {
  wait_moving_mpi(MPI_COMM_NULL);
}

void Request::wait_moving_mpi(MPI_Comm comm) {
  if (!handle_) return;
  Transport::Impl& s = *transport_->impl_;
  const auto what = Transport::Impl::waiting_for(messaging());
  auto in_use = s.use_worker(what_, what);
  constexpr unsigned polls_per_mpi_progress = 16;
  unsigned polls = 0;
  s.progress_until(
      [&] {
        if (comm != MPI_COMM_NULL && ++polls % polls_per_mpi_progress == 0) {
          int flag = 0;
          MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &flag, MPI_STATUS_IGNORE);
        }
        return poll();
      },
      what_, what);
}

}  // namespace mpidsm
