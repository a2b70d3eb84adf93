// Answered remote calls: a handler's answer comes back into the caller's
// buffer, many calls in flight at once, to every peer (self included), with
// the misuse cases reported. Landing calls' bytes land where their handler
// says. And which peers UCX reaches through messages.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <vector>

#include "mpi_test_support.hpp"
#include "mpidsm/runtime.hpp"
#include "transport/library_messaging.hpp"

namespace mpidsm {
namespace {

using detail::Answer;
using detail::LibraryMessaging;
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

Answer answer_slice(void* context, int, const std::byte* bytes, std::size_t size) {
  auto& table = *static_cast<Table*>(context);
  Ask ask{};
  if (size != sizeof ask) return {};
  std::memcpy(&ask, bytes, sizeof ask);
  if (ask.offset > kTable || ask.size > kTable - ask.offset) return {};
  return {table.bytes.data() + ask.offset, ask.size};
}

void ignore(void*, int, std::uint64_t, const std::byte*, std::size_t) {}

// Answers each call from one scratch buffer, which the next call rewrites:
// only a transient answer survives that.
struct Scratch {
  static constexpr std::size_t kWords = 32;
  std::uint64_t words[kWords];
};

std::uint64_t scratch_word(int callee, std::uint64_t value, std::size_t i) {
  return (std::uint64_t(callee) << 48) ^ (value << 8) ^ i;
}

Answer answer_from_scratch(void* context, int, const std::byte* bytes, std::size_t size) {
  auto& scratch = *static_cast<std::pair<Scratch, int>*>(context);
  std::uint64_t value = 0;
  if (size != sizeof value) return {};
  std::memcpy(&value, bytes, sizeof value);
  for (std::size_t i = 0; i < Scratch::kWords; ++i)
    scratch.first.words[i] = scratch_word(scratch.second, value, i);
  return {scratch.first.words, sizeof scratch.first.words, true};
}

// Answers with the offset of the first of the call's bytes that differs
// from the pattern its caller wrote for this callee (its size when none).
Answer answer_first_mismatch(void* context, int source, const std::byte* bytes, std::size_t size) {
  auto& [mismatch, callee] = *static_cast<std::pair<std::uint64_t, int>*>(context);
  mismatch = first_mismatch(reinterpret_cast<const std::uint8_t*>(bytes), source, callee, size);
  return {&mismatch, sizeof mismatch, true};
}

class TransportCall : public testing::WorldRuntimeTest<::testing::Test> {
 protected:
  void SetUp() override {
    Transport& t = runtime_->transport();
    // The callee's bytes for caller c at offset c * kSlice.
    for (int caller = 0; caller < t.size(); ++caller)
      fill_pattern(table_.bytes.data() + caller * kSlice, t.rank(), caller, kSlice);
    id_ = LibraryMessaging(t).add_answering_handler(answer_slice, &table_);
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
      Request request =
          LibraryMessaging(t).call_answered(peer, id_, &ask, sizeof ask, answer.data(), kSlice);
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
      requests.push_back(
          LibraryMessaging(t).call_answered(peer, id_, &asks.back(), sizeof(Ask),
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

// Many calls in flight to every peer, each answered from the callee's one
// scratch buffer: every answer carries what its own call asked for.
TEST_F(TransportCall, TransientAnswersLeaveTheHandlersBufferBeforeItChanges) {
  Transport& t = runtime_->transport();
  const int me = t.rank(), n = t.size();
  std::pair<Scratch, int> scratch{{}, me};
  const std::uint32_t id = LibraryMessaging(t).add_answering_handler(answer_from_scratch, &scratch);
  t.barrier();
  constexpr int kPerPeer = 400;
  std::vector<std::uint64_t> values(static_cast<std::size_t>(n) * kPerPeer);
  std::vector<Scratch> answers(values.size());
  std::vector<Request> requests;
  for (std::size_t k = 0; k < values.size(); ++k) {
    const int peer = static_cast<int>(k % static_cast<std::size_t>(n));
    values[k] = (std::uint64_t(me) << 32) | k;
    requests.push_back(LibraryMessaging(t).call_answered(peer, id, &values[k], sizeof values[k],
                                                         &answers[k], sizeof answers[k]));
  }
  for (Request& r : requests) r.wait();
  // Counted rather than asserted: every rank reaches the collective clean-up.
  std::size_t wrong = 0, first_wrong = values.size();
  for (std::size_t k = 0; k < values.size(); ++k) {
    const int peer = static_cast<int>(k % static_cast<std::size_t>(n));
    bool right = requests[k].message().size == sizeof(Scratch);
    for (std::size_t i = 0; i < Scratch::kWords; ++i)
      right = right && answers[k].words[i] == scratch_word(peer, values[k], i);
    if (!right && wrong++ == 0) first_wrong = k;
  }
  EXPECT_EQ(wrong, 0u) << "answers other than their calls asked for, the first call "
                       << first_wrong;
  t.flush_all();
  t.barrier();
  t.remove_remote_handler(id);
}

// A call's bytes are the caller's again once call_answered returns, before
// its answer: a lock's acquiring call is built in a frame that may be gone
// by then. Calls too large for UCX to send at once are overwritten right
// after the call; each callee finds the first byte that differs from what
// was called with.
TEST_F(TransportCall, ACallsBytesAreTheCallersAgainOnReturn) {
  Transport& t = runtime_->transport();
  const int me = t.rank();
  std::pair<std::uint64_t, int> mismatch{0, me};
  const std::uint32_t id =
      LibraryMessaging(t).add_answering_handler(answer_first_mismatch, &mismatch);
  t.barrier();
  for (int peer = 0; peer < t.size(); ++peer)
    for (std::size_t size : {std::size_t{64} << 10, std::size_t{1} << 20}) {
      std::vector<std::uint8_t> bytes(size);
      fill_pattern(bytes.data(), me, peer, size);
      std::uint64_t answer = ~std::uint64_t{0};
      Request request =
          LibraryMessaging(t).call_answered(peer, id, bytes.data(), size, &answer, sizeof answer);
      std::fill(bytes.begin(), bytes.end(), std::uint8_t{0});
      request.wait();
      EXPECT_EQ(request.message().size, sizeof answer)
          << "rank " << peer << ", " << size << " bytes";
      EXPECT_EQ(answer, size) << "the first byte of " << size << " that reached rank " << peer
                              << " changed after the call returned";
    }
  t.flush_all();
  t.barrier();
  t.remove_remote_handler(id);
}

TEST_F(TransportCall, AnEmptyAnswerArrivesEmpty) {
  Transport& t = runtime_->transport();
  std::uint8_t answer[8] = {};
  const Ask refused{kTable, 1};  // beyond the table: the handler answers nothing
  for (int peer = 0; peer < t.size(); ++peer) {
    Request request = LibraryMessaging(t).call_answered(peer, id_, &refused, sizeof refused, answer,
                                                        sizeof answer);
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
    Request request =
        LibraryMessaging(t).call_answered(peer, id_, &ask, sizeof ask, answer.data(), kSlice / 2);
    EXPECT_MPIDSM_ERROR(request.wait(), Errc::truncated, "");
    Request again =
        LibraryMessaging(t).call_answered(peer, id_, &ask, sizeof ask, answer.data(), kSlice);
    again.wait();
    EXPECT_EQ(first_mismatch(answer.data(), peer, me, kSlice), kSlice) << "rank " << peer;
  }
}

TEST_F(TransportCall, CallingAHandlerThatDoesNotAnswerIsAnError) {
  Transport& t = runtime_->transport();
  std::uint8_t answer[8];
  const Ask ask{0, 1};
  EXPECT_MPIDSM_ERROR(
      LibraryMessaging(t).call_answered(0, plain_, &ask, sizeof ask, answer, sizeof answer),
      Errc::invalid_argument, "no answering handler " + std::to_string(plain_));
  EXPECT_MPIDSM_ERROR(
      LibraryMessaging(t).call_answered(t.size(), id_, &ask, sizeof ask, answer, sizeof answer),
      Errc::invalid_rank, "rank " + std::to_string(t.size()));
}

// Agreed messages: every rank sends each rank (self included) two keyed
// messages before any receive is posted, in the opposite order of the
// receives; each lands in its own buffer, whole, while answered calls
// (whose answers share the tag's runtime field) go on undisturbed. A
// message larger than the buffer is reported as truncated.
TEST_F(TransportCall, AgreedMessagesMeetTheirReceivesByKey) {
  Transport& t = runtime_->transport();
  const int me = t.rank(), n = t.size();
  constexpr std::uint32_t kKeys[] = {0, LibraryMessaging::max_agreed_key};
  auto word = [](int from, int to, int k) {
    return std::uint64_t{1000} * static_cast<std::uint64_t>(from) +
           std::uint64_t{10} * static_cast<std::uint64_t>(to) + static_cast<std::uint64_t>(k);
  };
  std::vector<std::uint64_t> out;
  for (int peer = 0; peer < n; ++peer)
    for (int k = 0; k < 2; ++k) out.push_back(word(me, peer, k));
  std::vector<Request> sends;
  for (int peer = 0; peer < n; ++peer)
    for (int k = 0; k < 2; ++k)
      sends.push_back(LibraryMessaging(t).send_agreed(
          peer, kKeys[k], &out[static_cast<std::size_t>(2 * peer + k)], sizeof(std::uint64_t)));
  t.barrier();  // every message is sent (or in flight) before any receive
  std::uint8_t answer[8] = {};
  const Ask ask{me * kSlice, 8};
  Request call =
      LibraryMessaging(t).call_answered((me + 1) % n, id_, &ask, sizeof ask, answer, sizeof answer);
  std::vector<std::uint64_t> in(2 * static_cast<std::size_t>(n), 0);
  std::vector<Request> receives;
  for (int peer = n - 1; peer >= 0; --peer)
    for (int k = 1; k >= 0; --k)
      receives.push_back(LibraryMessaging(t).receive_agreed(
          peer, kKeys[k], &in[static_cast<std::size_t>(2 * peer + k)], sizeof(std::uint64_t)));
  for (Request& r : receives) r.wait();
  for (Request& s : sends) s.wait();
  call.wait();
  for (int peer = 0; peer < n; ++peer)
    for (int k = 0; k < 2; ++k) {
      EXPECT_EQ(in[static_cast<std::size_t>(2 * peer + k)], word(peer, me, k))
          << "from rank " << peer << ", key " << kKeys[k];
    }
  EXPECT_EQ(call.message().size, 8u);
  std::vector<std::uint8_t> expected(kSlice);
  fill_pattern(expected.data(), (me + 1) % n, me, kSlice);
  EXPECT_EQ(std::memcmp(answer, expected.data(), sizeof answer), 0) << "the answered call's bytes";
  // Too large for its buffer: truncated, and the transport goes on.
  const std::uint64_t two[2] = {1, 2};
  Request big = LibraryMessaging(t).send_agreed(me, 7, two, sizeof two);
  std::uint64_t small = 0;
  EXPECT_MPIDSM_ERROR(LibraryMessaging(t).receive_agreed(me, 7, &small, sizeof small).wait(),
                      Errc::truncated, "");
  big.wait();
  t.barrier();
}

// Landing calls: each rank's bytes land in its own slice of every callee's
// buffer, at the offset the call names, by rendezvous; a flush means they
// have landed, and call_landing's Request means the caller may reuse them.
struct LandingBuffer {
  static constexpr std::size_t kSlice = (1u << 20) + 7;  // not a multiple of any fragment
  std::vector<std::uint8_t> bytes;
  int rank = 0;
};

std::byte* land_in_slice(void* context, int source, std::uint64_t offset, std::size_t size) {
  auto& buffer = *static_cast<LandingBuffer*>(context);
  if (offset > LandingBuffer::kSlice || size > LandingBuffer::kSlice - offset) {
    ADD_FAILURE() << "rank " << buffer.rank << ": a landing call from rank " << source << " of "
                  << size << " bytes at " << offset << " is outside its slice";
    std::abort();
  }
  return reinterpret_cast<std::byte*>(buffer.bytes.data() + source * LandingBuffer::kSlice +
                                      offset);
}

TEST_F(TransportCall, LandingCallsLandInPlaceBeforeTheFlush) {
  Transport& t = runtime_->transport();
  const int me = t.rank(), n = t.size();
  constexpr std::size_t kSlice = LandingBuffer::kSlice;
  LandingBuffer landed{std::vector<std::uint8_t>(kSlice * static_cast<std::size_t>(n)), me};
  const std::uint32_t id = LibraryMessaging(t).add_landing_handler(land_in_slice, &landed);
  t.barrier();
  std::vector<std::uint8_t> out(kSlice);
  for (int round = 1; round <= 2; ++round) {
    for (int peer = 0; peer < n; ++peer) {
      fill_pattern(out.data(), me, peer * 10 + round, kSlice);
      // Three calls make up the slice: one byte, an odd middle, the rest.
      const std::size_t cuts[] = {0, 1, 300001, kSlice};
      for (std::size_t c = 0; c + 1 < std::size(cuts); ++c) {
        const std::size_t at = cuts[c], size = cuts[c + 1] - at;
        if (round == 1) {
          LibraryMessaging(t).call_landing_nbi(peer, id, at, out.data() + at, size);
        } else {
          Request sending = LibraryMessaging(t).call_landing(peer, id, at, out.data() + at, size);
          sending.wait();
          std::fill_n(out.data() + at, size, std::uint8_t{0});  // the caller's again
        }
      }
      if (round == 1) t.flush(peer);  // out is rewritten for the next peer
    }
    t.flush_all();
    t.barrier();
    for (int source = 0; source < n; ++source)
      EXPECT_EQ(
          first_mismatch(landed.bytes.data() + source * kSlice, source, me * 10 + round, kSlice),
          kSlice)
          << "round " << round << ": the bytes rank " << source << " landed here";
    t.barrier();
  }
  EXPECT_MPIDSM_ERROR(LibraryMessaging(t).call_landing_nbi(0, plain_, 0, out.data(), 1),
                      Errc::invalid_argument, "no landing handler " + std::to_string(plain_));
  EXPECT_MPIDSM_ERROR(LibraryMessaging(t).call_landing(n, id, 0, out.data(), 1), Errc::invalid_rank,
                      "rank " + std::to_string(n));
  t.barrier();
  t.remove_remote_handler(id);
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
