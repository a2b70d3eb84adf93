// A dissemination (Bruck) allgather of what ranks have to say, where most
// ranks say nothing: every rank learns every non-empty contribution in
// ceil(log2 N) rounds of one message each way, and receives each
// contribution exactly once. A rank's cost is then log N messages plus the
// words the others said, not N records: a clean DSM barrier across nodes
// moves a word per round, as MPI_Barrier's own dissemination does, and a
// barrier after a few written pages the notices of those pages.
//
// Messages travel on a communicator of its own (point to point, so no
// collective of the caller's can match them), each round's first in one
// message of up to kFirstWords words whose head says how many follow in a
// second. Waits go through Transport::wait_mpi: a rank that died ends them
// with an error naming it.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "mpidsm/transport.hpp"

namespace mpidsm::detail {

class SparseAllgather {
 public:
  // Words of a round's first message (its head included).
  static constexpr std::size_t kFirstWords = 64;

  // Collective over comm, which it duplicates.
  SparseAllgather(MPI_Comm comm, Transport& transport);
  ~SparseAllgather();
  SparseAllgather(const SparseAllgather&) = delete;
  SparseAllgather& operator=(const SparseAllgather&) = delete;

  // Collective: `mine` (empty: this rank has nothing to say) reaches every
  // rank. Returns the contributions, each as [rank, size, size words], of
  // every rank whose contribution was not empty, this rank's first, then by
  // rank distance after it. `after_first_send` runs once `mine` has been
  // handed to MPI, while the first round is in flight (what it sends
  // travels beside the exchange, not after it). Valid until the next
  // exchange.
  std::span<const std::int64_t> exchange(std::span<const std::int64_t> mine,
                                         const std::function<void()>& after_first_send,
                                         const char* operation);

  // Calls f(rank, words) for each contribution of an exchange's result.
  template <class F>
  static void for_each(std::span<const std::int64_t> entries, F&& f) {
    for (std::size_t at = 0; at < entries.size();) {
      const auto size = static_cast<std::size_t>(entries[at + 1]);
      f(static_cast<int>(entries[at]), entries.subspan(at + 2, size));
      at += 2 + size;
    }
  }

 private:
  // One round: sends the contributions held that lie less than `limit`
  // ranks after this one to the rank `distance` before, and appends those
  // the rank `distance` after sends. `after_send` (if any) runs once the
  // sends are posted; when it throws, the round completes first.
  void round(int distance, int limit, int tag, const char* operation,
             const std::function<void()>* after_send);
  // The words after held_'s head that belong to contributions less than
  // `limit` ranks after this one.
  std::size_t words_within(int limit) const;
  // A wait that threw leaves the buffers to MPI for good (it may still
  // write into them as live peers' parts arrive), never to be reused.
  void wait(std::span<MPI_Request> requests, const char* operation);

  MPI_Comm comm_ = MPI_COMM_NULL;
  Transport& transport_;
  int rank_;
  int ranks_;
  // held_[0] is the head of the message being sent; contributions follow,
  // by rank distance from this one.
  std::vector<std::int64_t> held_;
  std::vector<std::int64_t> incoming_;
};

}  // namespace mpidsm::detail
