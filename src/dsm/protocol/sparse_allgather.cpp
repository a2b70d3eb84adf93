#include "sparse_allgather.hpp"

#include <algorithm>
#include <exception>
#include <utility>

#include "common/mpi_exchange.hpp"

namespace mpidsm::detail {

SparseAllgather::SparseAllgather(MPI_Comm comm, Transport& transport)
    : transport_(transport), rank_(transport.rank()), ranks_(transport.size()) {
  check_mpi(rank_, "MPI_Comm_dup for the DSM barrier", MPI_Comm_dup(comm, &comm_));
  incoming_.resize(kFirstWords);
}

SparseAllgather::~SparseAllgather() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized && comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
}

std::span<const std::int64_t> SparseAllgather::exchange(
    std::span<const std::int64_t> mine, const std::function<void()>& after_first_send,
    const char* operation) {
  held_.assign(1, 0);
  if (!mine.empty()) {
    held_.push_back(rank_);
    held_.push_back(static_cast<std::int64_t>(mine.size()));
    held_.insert(held_.end(), mine.begin(), mine.end());
  }
  if (ranks_ == 1) after_first_send();
  for (int distance = 1, tag = 0; distance < ranks_; distance *= 2, tag += 2)
    // The last round sends only what the receiver still lacks.
    round(distance, std::min(distance, ranks_ - distance), tag, operation,
          distance == 1 ? &after_first_send : nullptr);
  return std::span<const std::int64_t>(held_).subspan(1);
}

std::size_t SparseAllgather::words_within(int limit) const {
  std::size_t at = 1;
  while (at < held_.size()) {
    const int after = (static_cast<int>(held_[at]) - rank_ + ranks_) % ranks_;
    if (after >= limit) break;
    at += 2 + static_cast<std::size_t>(held_[at + 1]);
  }
  return at - 1;
}

void SparseAllgather::round(int distance, int limit, int tag, const char* operation,
                            const std::function<void()>* after_send) {
  const int to = (rank_ - distance + ranks_) % ranks_;
  const int from = (rank_ + distance) % ranks_;
  const std::size_t words = words_within(limit);
  held_[0] = static_cast<std::int64_t>(words);
  const std::size_t first = std::min(words + 1, kFirstWords);
  // The receive and the first message's send, then the rest of each: a
  // rest large enough for MPI's rendezvous completes only once its receiver
  // has posted the receive for it, which it does after its own first wait.
  MPI_Request requests[3] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL, MPI_REQUEST_NULL};
  check_mpi(rank_, "MPI_Irecv in the DSM barrier",
            MPI_Irecv(incoming_.data(), static_cast<int>(kFirstWords), MPI_INT64_T, from, tag,
                      comm_, &requests[0]));
  check_mpi(
      rank_, "MPI_Isend in the DSM barrier",
      MPI_Isend(held_.data(), static_cast<int>(first), MPI_INT64_T, to, tag, comm_, &requests[1]));
  if (words + 1 > kFirstWords)
    check_mpi(rank_, "MPI_Isend in the DSM barrier",
              MPI_Isend(held_.data() + kFirstWords, static_cast<int>(words + 1 - kFirstWords),
                        MPI_INT64_T, to, tag + 1, comm_, &requests[2]));
  std::exception_ptr failed;
  if (after_send) {
    try {
      (*after_send)();
    } catch (...) {
      failed = std::current_exception();  // MPI still owns the buffers
    }
  }
  wait(std::span<MPI_Request>(requests, 2), operation);
  const auto arriving = static_cast<std::size_t>(incoming_[0]);
  if (arriving + 1 > kFirstWords) {
    incoming_.resize(arriving + 1);
    check_mpi(
        rank_, "MPI_Irecv in the DSM barrier",
        MPI_Irecv(incoming_.data() + kFirstWords, static_cast<int>(arriving + 1 - kFirstWords),
                  MPI_INT64_T, from, tag + 1, comm_, &requests[0]));
  }
  wait(requests, operation);
  held_.insert(held_.end(), incoming_.begin() + 1,
               incoming_.begin() + 1 + static_cast<std::ptrdiff_t>(arriving));
  if (failed) std::rethrow_exception(failed);
}

void SparseAllgather::wait(std::span<MPI_Request> requests, const char* operation) {
  try {
    transport_.wait_mpi(requests, operation);
  } catch (const Error&) {
    new std::vector<std::int64_t>(std::move(held_));
    new std::vector<std::int64_t>(std::move(incoming_));
    held_.clear();
    incoming_.assign(kFirstWords, 0);
    throw;
  }
}

}  // namespace mpidsm::detail
