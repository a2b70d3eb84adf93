// Tagged messaging: per-source-and-tag order, wildcards, rendezvous-size
// payloads, probe, and a too-small receive buffer reported as an error; on
// one node the same-node mailboxes' matching (order across message sizes,
// posting order, full rings).
#include <gtest/gtest.h>

#include <memory>
#include <thread>
#include <vector>

#include "mpi_test_support.hpp"
#include "mpidsm/runtime.hpp"

namespace mpidsm {
namespace {

using testing::fill_pattern;
using testing::first_mismatch;

class TransportTag : public testing::WorldRuntimeTest<> {};

TEST_F(TransportTag, OrderedPerSourceAndTag) {
  Transport& t = runtime_->transport();
  const int me = t.rank(), n = t.size();
  constexpr int kMessages = 500;
  constexpr int kTags = 3;
  std::vector<Request> sends;
  std::vector<std::uint64_t> payload(static_cast<std::size_t>(n) * kTags * kMessages);
  for (int i = 0; i < kMessages; ++i)
    for (int tag = 0; tag < kTags; ++tag)
      for (int peer = 0; peer < n; ++peer) {
        auto& word = payload[(static_cast<std::size_t>(peer) * kTags + tag) * kMessages + i];
        word = (std::uint64_t(me) << 40) | (std::uint64_t(tag) << 32) | std::uint64_t(i);
        sends.push_back(t.isend(peer, 100 + tag, &word, sizeof word));
      }
  // Receive tag by tag, source by source: order must hold within each stream
  // even though the streams interleave on the wire.
  for (int tag = kTags - 1; tag >= 0; --tag)
    for (int source = 0; source < n; ++source)
      for (int i = 0; i < kMessages; ++i) {
        std::uint64_t word = 0;
        MessageInfo info = t.recv(source, 100 + tag, &word, sizeof word);
        ASSERT_EQ(info.source, source);
        ASSERT_EQ(info.tag, 100 + tag);
        ASSERT_EQ(info.size, sizeof word);
        ASSERT_EQ(word, (std::uint64_t(source) << 40) | (std::uint64_t(tag) << 32) | i);
      }
  for (auto& s : sends) s.wait();
  t.barrier();
}

TEST_F(TransportTag, WildcardsReportSourceAndTag) {
  Transport& t = runtime_->transport();
  const int me = t.rank(), n = t.size();
  std::vector<int> words(n);
  std::vector<Request> sends;
  for (int peer = 0; peer < n; ++peer) {
    words[peer] = me * 1000 + peer;
    sends.push_back(t.isend(peer, 7000 + me, &words[peer], sizeof(int)));
  }
  std::vector<int> seen(n, 0);
  for (int i = 0; i < n; ++i) {
    int word = -1;
    MessageInfo info = t.recv(any_source, any_tag, &word, sizeof word);
    ASSERT_GE(info.source, 0);
    ASSERT_LT(info.source, n);
    EXPECT_EQ(info.tag, 7000 + info.source);
    EXPECT_EQ(word, info.source * 1000 + me);
    ++seen[info.source];
  }
  for (int source = 0; source < n; ++source) EXPECT_EQ(seen[source], 1) << "rank " << source;
  for (auto& s : sends) s.wait();
  t.barrier();
}

TEST_F(TransportTag, RendezvousSizedMessagesArriveIntact) {
  Transport& t = runtime_->transport();
  const int me = t.rank(), n = t.size();
  for (std::size_t size : {std::size_t(16) << 10, std::size_t(1) << 20, std::size_t(4) << 20}) {
    std::vector<std::uint8_t> out(size), in(size);
    const int to = (me + 1) % n, from = (me + n - 1) % n;
    fill_pattern(out.data(), me, to, size);
    Request receive = t.irecv(from, 5, in.data(), in.size());
    t.send(to, 5, out.data(), size);
    receive.wait();
    EXPECT_EQ(receive.message().size, size);
    EXPECT_EQ(first_mismatch(in.data(), from, me, size), size) << "size " << size;
  }
  t.barrier();
}

TEST_F(TransportTag, ProbeDescribesWithoutReceiving) {
  Transport& t = runtime_->transport();
  const int me = t.rank(), n = t.size();
  const int to = (me + 1) % n, from = (me + n - 1) % n;
  std::vector<char> out(300, static_cast<char>('a' + me % 26));
  // Nobody sends tag 42 before the barrier.
  EXPECT_FALSE(t.probe(from, 42).has_value());
  t.barrier();
  Request send = t.isend(to, 42, out.data(), out.size());
  std::optional<MessageInfo> info;
  while (!(info = t.probe(any_source, 42))) {
  }
  EXPECT_EQ(info->source, from);
  EXPECT_EQ(info->size, out.size());
  std::vector<char> in(out.size());
  t.recv(from, 42, in.data(), in.size());
  EXPECT_EQ(in[299], static_cast<char>('a' + from % 26));
  send.wait();
  t.barrier();
}

TEST_F(TransportTag, TooSmallBufferIsAnErrorAndTheStreamGoesOn) {
  Transport& t = runtime_->transport();
  const int me = t.rank(), n = t.size();
  const int to = (me + 1) % n, from = (me + n - 1) % n;
  std::vector<std::uint8_t> big(1000, 1);
  int small = 12345;
  Request first = t.isend(to, 9, big.data(), big.size());
  Request second = t.isend(to, 9, &small, sizeof small);
  std::uint8_t tiny[10];
  EXPECT_MPIDSM_ERROR(t.recv(from, 9, tiny, sizeof tiny), Errc::truncated, "1000 bytes");
  int received = 0;
  t.recv(from, 9, &received, sizeof received);
  EXPECT_EQ(received, 12345);
  first.wait();
  second.wait();
  t.barrier();
}

// Messages of every size between one pair keep their order: eager records,
// records that queue behind a full ring, and rendezvous announcements whose
// bytes follow through UCX.
TEST_F(TransportTag, OrderHoldsAcrossMessageSizes) {
  Transport& t = runtime_->transport();
  const int me = t.rank(), n = t.size();
  const int to = (me + 1) % n, from = (me + n - 1) % n;
  const std::size_t sizes[] = {8, 4000, 70000, 0, 200, 20000};
  constexpr int kRounds = 40;
  std::vector<std::vector<std::uint8_t>> out;
  std::vector<Request> sends;
  for (int i = 0; i < kRounds; ++i)
    for (std::size_t size : sizes) {
      auto& bytes = out.emplace_back(size);
      fill_pattern(bytes.data(), me * 1000 + i, to, size);
      sends.push_back(t.isend(to, 3, bytes.data(), size));
    }
  std::vector<std::uint8_t> in(70000);
  for (int i = 0; i < kRounds; ++i)
    for (std::size_t size : sizes) {
      MessageInfo info = t.recv(from, 3, in.data(), in.size());
      ASSERT_EQ(info.size, size) << "round " << i;
      ASSERT_EQ(first_mismatch(in.data(), from * 1000 + i, me, size), size) << "round " << i;
    }
  for (auto& s : sends) s.wait();
  t.barrier();
}

// Every rank sends far more than a ring holds to every rank before receiving
// anything: sends complete without their receives (the overflow waits in a
// queue), and nothing is lost or reordered.
TEST_F(TransportTag, FloodingEveryPeerBeforeReceivingCompletes) {
  Transport& t = runtime_->transport();
  const int me = t.rank(), n = t.size();
  constexpr int kMessages = 5000;
  std::vector<std::uint64_t> words(static_cast<std::size_t>(n) * kMessages);
  for (int peer = 0; peer < n; ++peer)
    for (int i = 0; i < kMessages; ++i) {
      auto& word = words[static_cast<std::size_t>(peer) * kMessages + i];
      word = (std::uint64_t(me) << 32) | std::uint64_t(i);
      t.isend(peer, 11, &word, sizeof word).wait();
    }
  for (int source = 0; source < n; ++source)
    for (int i = 0; i < kMessages; ++i) {
      std::uint64_t word = 0;
      t.recv(source, 11, &word, sizeof word);
      ASSERT_EQ(word, (std::uint64_t(source) << 32) | std::uint64_t(i));
    }
  t.barrier();
}

// Receives match in the order they were posted: a wildcard posted first takes
// the first message even though a specific receive for it is also posted.
TEST_F(TransportTag, ReceivesMatchInPostingOrder) {
  Transport& t = runtime_->transport();
  const int me = t.rank(), n = t.size();
  const int to = (me + 1) % n, from = (me + n - 1) % n;
  int first = -1, second = -1;
  Request wildcard = t.irecv(any_source, any_tag, &first, sizeof first);
  Request specific = t.irecv(from, 21, &second, sizeof second);
  t.barrier();
  const int words[] = {me * 10 + 1, me * 10 + 2};
  t.send(to, 21, &words[0], sizeof(int));
  t.send(to, 21, &words[1], sizeof(int));
  wildcard.wait();
  specific.wait();
  EXPECT_EQ(first, from * 10 + 1);
  EXPECT_EQ(second, from * 10 + 2);
  EXPECT_EQ(wildcard.message().source, from);
  EXPECT_EQ(wildcard.message().tag, 21);
  t.barrier();
}

// Two threads send to the same peer at once while a third receives: each
// thread's stream stays in order and complete.
TEST_F(TransportTag, ThreadsSendingToOnePeerKeepTheirStreams) {
  Transport& t = runtime_->transport();
  const int me = t.rank(), n = t.size();
  const int to = (me + 1) % n, from = (me + n - 1) % n;
  constexpr int kMessages = 3000;
  auto sender = [&](int stream) {
    for (int i = 0; i < kMessages; ++i) {
      const std::uint64_t word = (std::uint64_t(stream) << 32) | std::uint64_t(i);
      t.send(to, 30 + stream, &word, sizeof word);
    }
  };
  std::thread a(sender, 0), b(sender, 1);
  int next[2] = {0, 0};
  for (int i = 0; i < 2 * kMessages; ++i) {
    std::uint64_t word = 0;
    MessageInfo info = t.recv(from, any_tag, &word, sizeof word);
    const int stream = info.tag - 30;
    ASSERT_TRUE(stream == 0 || stream == 1) << "tag " << info.tag;
    ASSERT_EQ(word, (std::uint64_t(stream) << 32) | std::uint64_t(next[stream]));
    ++next[stream];
  }
  a.join();
  b.join();
  t.barrier();
}

TEST_F(TransportTag, BadTagsAndRanksAreRejected) {
  Transport& t = runtime_->transport();
  int word = 0;
  EXPECT_MPIDSM_ERROR(t.send(0, -5, &word, sizeof word), Errc::invalid_argument, "tag -5");
  EXPECT_MPIDSM_ERROR(t.send(0, max_tag + 1, &word, sizeof word), Errc::invalid_argument,
                      "tag 16777216");
  EXPECT_MPIDSM_ERROR(t.send(t.size(), 1, &word, sizeof word), Errc::invalid_rank,
                      "rank " + std::to_string(t.size()));
  EXPECT_MPIDSM_ERROR(t.recv(-7, 1, &word, sizeof word), Errc::invalid_rank, "rank -7");
  EXPECT_MPIDSM_ERROR(t.send(0, 1, nullptr, 8), Errc::invalid_argument, "buffer is null");
  // Still usable: a message to self goes through.
  t.send(t.rank(), 1, &word, sizeof word);
  t.recv(t.rank(), 1, &word, sizeof word);
}

}  // namespace
}  // namespace mpidsm
