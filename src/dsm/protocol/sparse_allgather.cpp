#include "sparse_allgather.hpp"

#include <algorithm>
#include <exception>
#include <string>

#include "agreed_keys.hpp"
#include "mpidsm/error.hpp"

namespace mpidsm::detail {

SparseAllgather::SparseAllgather(Transport& transport)
    : messaging_(transport), rank_(transport.rank()), ranks_(transport.size()) {}

std::span<const std::int64_t> SparseAllgather::exchange(
    std::span<const std::int64_t> mine, Rider rider, const std::function<void()>& after_first_send,
    const char* operation) {
  held_.clear();
  rider_in_.clear();
  if (!mine.empty()) {
    held_.push_back(rank_);
    held_.push_back(static_cast<std::int64_t>(mine.size()));
    held_.insert(held_.end(), mine.begin(), mine.end());
  }
  // What after_first_send throws waits for the exchange's end: a rank that
  // left it early would leave its peers waiting for its later rounds.
  std::exception_ptr failed;
  const std::function<void()> sending = [&] {
    try {
      after_first_send();
    } catch (...) {
      failed = std::current_exception();
    }
  };
  if (ranks_ == 1) sending();
  for (int distance = 1, index = 0; distance < ranks_; distance *= 2, ++index)
    // The last round sends only what the receiver still lacks.
    round(distance, std::min(distance, ranks_ - distance), static_cast<unsigned>(index), rider,
          operation, index == 0 ? &sending : nullptr);
  ++exchanges_;
  if (failed) std::rethrow_exception(failed);
  return held_;
}

std::uint32_t SparseAllgather::key(unsigned round, unsigned part) const {
  return barrier_record_key(exchanges_ * kKeysPerExchange + 2 * round + part);
}

std::size_t SparseAllgather::words_within(int limit) const {
  std::size_t at = 0;
  while (at < held_.size()) {
    const int after = (static_cast<int>(held_[at]) - rank_ + ranks_) % ranks_;
    if (after >= limit) break;
    at += 2 + static_cast<std::size_t>(held_[at + 1]);
  }
  return at;
}

void SparseAllgather::round(int distance, int limit, unsigned index, const Rider& rider,
                            const char* operation, const std::function<void()>* after_send) {
  const int to = (rank_ - distance + ranks_) % ranks_;
  const int from = (rank_ + distance) % ranks_;
  const std::span<const std::uint64_t> rider_out = index == 0 ? rider.out : rider.out.first(0);
  const std::size_t rider_capacity = index == 0 ? rider.in_capacity : 0;
  const std::size_t words = words_within(limit);
  const std::size_t first = std::min(words, kFirstWords);
  first_out_.resize(kHead + first + rider_out.size());
  first_out_[0] = static_cast<std::int64_t>(words);
  first_out_[1] = static_cast<std::int64_t>(rider_out.size());
  std::copy_n(held_.begin(), first, first_out_.begin() + kHead);
  std::copy(rider_out.begin(), rider_out.end(), first_out_.begin() + kHead + first);
  first_in_.resize(kHead + kFirstWords + rider_capacity);
  // The receive and the first message's send, then the rest of each: a
  // rest large enough for UCX's rendezvous completes only once its
  // receiver has posted the receive for it, which it does after its own
  // first wait.
  Request requests[3];
  try {
    requests[0] = messaging_.receive_agreed(from, key(index, 0), first_in_.data(),
                                            first_in_.size() * sizeof(std::int64_t), kLane);
    requests[1] = messaging_.send_agreed(to, key(index, 0), first_out_.data(),
                                         first_out_.size() * sizeof(std::int64_t), kLane);
    if (words > first)
      requests[2] = messaging_.send_agreed(to, key(index, 1), held_.data() + first,
                                           (words - first) * sizeof(std::int64_t), kLane);
    if (after_send) (*after_send)();
    for (Request& request : std::span<Request>(requests, 2))
      LibraryMessaging::wait_serving_peers(request);
    receive_rest(requests[0], from, index, rider_capacity, operation);
    for (Request& request : requests) LibraryMessaging::wait_serving_peers(request);
  } catch (const Error&) {
    // Nothing more arrives for this round: its receives leave UCX, and
    // their buffers may be reused.
    for (Request& request : requests) LibraryMessaging::withdraw(request);
    throw;
  }
  const Head in = head_in();
  const auto first_words = first_in_.begin() + kHead;
  const auto rider_words = first_words + static_cast<std::ptrdiff_t>(in.first);
  held_.insert(held_.end(), first_words, rider_words);
  if (in.words > kFirstWords) held_.insert(held_.end(), rest_in_.begin(), rest_in_.end());
  if (index == 0)
    rider_in_.assign(rider_words, rider_words + static_cast<std::ptrdiff_t>(in.riding));
}

SparseAllgather::Head SparseAllgather::head_in() const {
  const auto words = static_cast<std::size_t>(first_in_[0]);
  return {words, std::min(words, kFirstWords), static_cast<std::size_t>(first_in_[1])};
}

// The first message has arrived (in `first`): checks it is one, and posts
// the receive of the rest, if its head announces one, into `first`.
void SparseAllgather::receive_rest(Request& first, int from, unsigned index,
                                   std::size_t rider_capacity, const char* operation) {
  const Head in = head_in();
  auto from_rank = [&] { return std::string(operation) + ": rank " + std::to_string(from); };
  if (first.message().size != (kHead + in.first + in.riding) * sizeof(std::int64_t))
    throw Error(Errc::transport, rank_,
                from_rank() + " sent " + std::to_string(first.message().size) +
                    " bytes, which is no record of the sparse allgather");
  if (in.riding > rider_capacity)
    throw Error(Errc::truncated, rank_,
                from_rank() + " sent a rider of " + std::to_string(in.riding) + " words, where " +
                    std::to_string(rider_capacity) + " were allowed");
  if (in.words <= kFirstWords) return;
  rest_in_.resize(in.words - kFirstWords);
  first = messaging_.receive_agreed(from, key(index, 1), rest_in_.data(),
                                    rest_in_.size() * sizeof(std::int64_t), kLane);
}

}  // namespace mpidsm::detail
