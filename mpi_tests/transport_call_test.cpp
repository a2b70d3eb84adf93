// Answered remote calls: a handler's answer comes back into the caller's
// buffer, many calls in flight at once, to every peer (self included), with
// the misuse cases reported. And which peers UCX reaches through messages.
#include <gtest/gtest.h>

#include <cstring>
#include <mutex>
#include <utility>
#include <vector>

#include "mpi_test_support.hpp"
#include "mpidsm/runtime.hpp"

namespace mpidsm {
namespace {

using testing::fill_pattern;
using testing::first_mismatch;

constexpr std::size_t kTable = 1 << 16;

// A call asks for `size` bytes at `offset` of the callee's table.
struct Ask {
  std::uint64_t offset;
  std::uint64_t size;
};

struct Table {
  std::vector<std::uint8_t> bytes = std::vector<std::uint8_t>(kTable);
};

Transport::Answer answer_slice(void* context, int, const std::byte* bytes, std::size_t size) {
  auto& table = *static_cast<Table*>(context);
  Ask ask{};
  if (size != sizeof ask) return {};
  std::memcpy(&ask, bytes, sizeof ask);
  if (ask.offset > kTable || ask.size > kTable - ask.offset) return {};
  return {table.bytes.data() + ask.offset, ask.size};
}

void ignore(void*, int, std::uint64_t, const std::byte*, std::size_t) {}

class TransportCall : public testing::WorldRuntimeTest<::testing::Test> {
 protected:
  void SetUp() override {
    Transport& t = runtime_->transport();
    // The callee's bytes for caller c at offset c * kSlice.
    for (int caller = 0; caller < t.size(); ++caller)
      fill_pattern(table_.bytes.data() + caller * kSlice, t.rank(), caller, kSlice);
    id_ = t.add_answering_handler(answer_slice, &table_);
    plain_ = t.add_remote_handler(ignore, nullptr);
    t.barrier();
  }
  void TearDown() override {
    Transport& t = runtime_->transport();
    t.flush_all();
    t.barrier();
    t.remove_remote_handler(id_);
    t.remove_remote_handler(plain_);
  }

  static constexpr std::size_t kSlice = 1024;
  Table table_;
  std::uint32_t id_ = 0, plain_ = 0;
};

TEST_F(TransportCall, EveryPeerAnswersWithItsBytes) {
  Transport& t = runtime_->transport();
  const int me = t.rank();
  std::vector<std::uint8_t> answer(kSlice), expected(kSlice);
  for (int peer = 0; peer < t.size(); ++peer) {
    fill_pattern(expected.data(), peer, me, kSlice);
    for (std::size_t size : {std::size_t{1}, std::size_t{8}, std::size_t{1000}, kSlice}) {
      std::fill(answer.begin(), answer.end(), 0);
      const Ask ask{me * kSlice, size};
      Request request = t.call_answered(peer, id_, &ask, sizeof ask, answer.data(), kSlice);
      request.wait();
      EXPECT_EQ(request.message().size, size) << "rank " << peer;
      ASSERT_EQ(std::memcmp(answer.data(), expected.data(), size), 0)
          << "size " << size << " from rank " << peer;
      if (size < kSlice) {
        EXPECT_EQ(answer[size], 0) << "a byte beyond the answer was written";
      }
    }
  }
}

// More calls in flight than the transport keeps headers for, to every peer
// at once, each answered into its own buffer.
TEST_F(TransportCall, ManyCallsInFlightAnswerIntoTheirOwnBuffers) {
  Transport& t = runtime_->transport();
  const int me = t.rank(), n = t.size();
  constexpr int kPerPeer = 300;
  constexpr std::size_t kPiece = 8;
  std::vector<Ask> asks;
  asks.reserve(static_cast<std::size_t>(n) * kPerPeer);
  std::vector<std::uint8_t> answers(static_cast<std::size_t>(n) * kPerPeer * kPiece);
  std::vector<Request> requests;
  for (int i = 0; i < kPerPeer; ++i)
    for (int peer = 0; peer < n; ++peer) {
      asks.push_back({me * kSlice + (i % (kSlice / kPiece)) * kPiece, kPiece});
      requests.push_back(t.call_answered(peer, id_, &asks.back(), sizeof(Ask),
                                         answers.data() + (asks.size() - 1) * kPiece, kPiece));
    }
  for (Request& r : requests) r.wait();
  std::vector<std::uint8_t> expected(kSlice);
  for (std::size_t k = 0; k < asks.size(); ++k) {
    const int peer = static_cast<int>(k % static_cast<std::size_t>(n));
    fill_pattern(expected.data(), peer, me, kSlice);
    const std::size_t at = asks[k].offset - me * kSlice;
    ASSERT_EQ(std::memcmp(answers.data() + k * kPiece, expected.data() + at, kPiece), 0)
        << "call " << k << " to rank " << peer;
  }
}

TEST_F(TransportCall, AnEmptyAnswerArrivesEmpty) {
  Transport& t = runtime_->transport();
  std::uint8_t answer[8] = {};
  const Ask refused{kTable, 1};  // beyond the table: the handler answers nothing
  for (int peer = 0; peer < t.size(); ++peer) {
    Request request = t.call_answered(peer, id_, &refused, sizeof refused, answer, sizeof answer);
    request.wait();
    EXPECT_EQ(request.message().size, 0u) << "rank " << peer;
  }
}

TEST_F(TransportCall, AnAnswerLargerThanTheBufferIsTruncatedAndTheTransportGoesOn) {
  Transport& t = runtime_->transport();
  const int me = t.rank();
  std::vector<std::uint8_t> answer(kSlice);
  for (int peer = 0; peer < t.size(); ++peer) {
    const Ask ask{me * kSlice, kSlice};
    Request request = t.call_answered(peer, id_, &ask, sizeof ask, answer.data(), kSlice / 2);
    EXPECT_MPIDSM_ERROR(request.wait(), Errc::truncated, "");
    Request again = t.call_answered(peer, id_, &ask, sizeof ask, answer.data(), kSlice);
    again.wait();
    EXPECT_EQ(first_mismatch(answer.data(), peer, me, kSlice), kSlice) << "rank " << peer;
  }
}

TEST_F(TransportCall, CallingAHandlerThatDoesNotAnswerIsAnError) {
  Transport& t = runtime_->transport();
  std::uint8_t answer[8];
  const Ask ask{0, 1};
  EXPECT_MPIDSM_ERROR(t.call_answered(0, plain_, &ask, sizeof ask, answer, sizeof answer),
                      Errc::invalid_argument, "no answering handler " + std::to_string(plain_));
  EXPECT_MPIDSM_ERROR(t.call_answered(t.size(), id_, &ask, sizeof ask, answer, sizeof answer),
                      Errc::invalid_rank, "rank " + std::to_string(t.size()));
}

// A handler that puts its answer off: it keeps each caller's ticket and
// the word asked for; the callee answers later, from its own thread.
struct Deferred {
  std::mutex mutex;
  std::vector<std::pair<Transport::PendingAnswer, std::uint64_t>> pending;
};

Transport::Answer defer(void* context, int, const std::byte* bytes, std::size_t size) {
  auto& deferred = *static_cast<Deferred*>(context);
  std::uint64_t word = 0;
  if (size == sizeof word) std::memcpy(&word, bytes, sizeof word);
  std::lock_guard<std::mutex> guard(deferred.mutex);
  deferred.pending.emplace_back(Transport::defer_answer(), word);
  return {};
}

// Every rank calls every rank (self included); each callee answers only once
// all the calls to it have arrived, in reverse order of arrival, with the
// caller's word plus its own rank. The callers' requests stay incomplete
// until then (checked by every caller before a barrier the answers follow).
TEST_F(TransportCall, AHandlerMayPutItsAnswerOffUntilTheCalleeSendsIt) {
  Transport& t = runtime_->transport();
  const int me = t.rank(), n = t.size();
  Deferred deferred;
  const std::uint32_t id = t.add_answering_handler(defer, &deferred);
  t.barrier();
  std::vector<std::uint64_t> asks(static_cast<std::size_t>(n)), answers(asks.size(), 0);
  std::vector<Request> requests;
  for (int peer = 0; peer < n; ++peer) {
    asks[static_cast<std::size_t>(peer)] = 1000 * static_cast<std::uint64_t>(me + 1);
    requests.push_back(
        t.call_answered(peer, id, &asks[static_cast<std::size_t>(peer)], sizeof(std::uint64_t),
                        &answers[static_cast<std::size_t>(peer)], sizeof(std::uint64_t)));
  }
  t.wait_until(
      [&] {
        std::lock_guard<std::mutex> guard(deferred.mutex);
        return deferred.pending.size() == static_cast<std::size_t>(n);
      },
      "the test's calls");
  for (int peer = 0; peer < n; ++peer) {
    EXPECT_FALSE(requests[static_cast<std::size_t>(peer)].test())
        << "rank " << peer << " answered a call whose handler put its answer off";
  }
  t.barrier();  // every caller has looked before any callee answers
  std::vector<std::uint64_t> replies(static_cast<std::size_t>(n));
  std::vector<Request> sends;
  for (std::size_t k = deferred.pending.size(); k-- > 0;) {
    replies[k] = deferred.pending[k].second + static_cast<std::uint64_t>(me);
    sends.push_back(t.answer(deferred.pending[k].first, &replies[k], sizeof(std::uint64_t)));
  }
  for (Request& r : requests) r.wait();
  for (Request& s : sends) s.wait();
  for (int peer = 0; peer < n; ++peer) {
    EXPECT_EQ(answers[static_cast<std::size_t>(peer)],
              1000 * static_cast<std::uint64_t>(me + 1) + static_cast<std::uint64_t>(peer))
        << "the answer of rank " << peer;
  }
  t.barrier();
  t.remove_remote_handler(id);
  EXPECT_MPIDSM_ERROR(Transport::defer_answer(), Errc::invalid_state,
                      "outside an answering handler");
}

// UCX reaches a peer's memory through messages exactly when every lane to it
// is tcp: shared memory, self and RDMA reach it directly.
TEST(TransportReach, RmaGoesThroughMessagesExactlyWhereOnlyTcpReachesThePeer) {
  Runtime runtime(MPI_COMM_WORLD);
  Transport& t = runtime.transport();
  for (int peer = 0; peer < t.size(); ++peer) {
    const std::string path = t.path_to(peer);
    bool only_tcp = true;
    for (std::size_t at = 0; at < path.size();) {
      only_tcp = only_tcp && path.compare(at, 4, "tcp/") == 0;
      const std::size_t space = path.find(' ', at);
      at = space == std::string::npos ? path.size() : space + 1;
    }
    EXPECT_EQ(t.rma_through_messages(peer), only_tcp) << "rank " << peer << ": " << path;
  }
}

}  // namespace
}  // namespace mpidsm
