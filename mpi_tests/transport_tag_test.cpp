// Tagged messaging: per-source-and-tag order, wildcards, rendezvous-size
// payloads, probe, and a too-small receive buffer reported as an error.
#include <gtest/gtest.h>

#include <memory>
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
