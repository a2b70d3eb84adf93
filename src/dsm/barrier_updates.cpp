#include "barrier_updates.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "mpidsm/error.hpp"

namespace mpidsm::detail {

BarrierUpdates::BarrierUpdates(Transport& transport, std::size_t page_size)
    : transport_(&transport),
      page_size_(page_size),
      pending_(static_cast<std::size_t>(transport.size())),
      handler_(transport.add_answering_handler(take, this)) {
  for (Pending& slot : pending_) slot.words.reserve(kMaxWords);
}

BarrierUpdates::~BarrierUpdates() {
  if (transport_) transport_->remove_remote_handler(handler_);
}

void BarrierUpdates::begin(std::uint64_t barrier) {
  forget();
  outgoing_.push_back(barrier);  // each subscription repeats it: see add()
}

bool BarrierUpdates::add(int home, std::size_t page) {
  if (subscriptions_.empty() || subscriptions_.back().home != home) {
    const std::uint64_t barrier = outgoing_.front();
    if (!subscriptions_.empty()) outgoing_.push_back(barrier);
    subscriptions_.push_back({home, outgoing_.size() - 1, outgoing_.size(), 0, 0});
  }
  Subscription& s = subscriptions_.back();
  const std::size_t runs = (s.end - s.begin - 1) / 2;
  if (runs > 0 && outgoing_[s.end - 2] + outgoing_[s.end - 1] == page) {
    ++outgoing_[s.end - 1];
  } else {
    if (runs == kMaxRuns) return false;
    outgoing_.push_back(page);
    outgoing_.push_back(1);
    s.end += 2;
  }
  ++s.pages;
  return true;
}

void BarrierUpdates::mark(std::uint64_t* mask) const {
  for (const Subscription& s : subscriptions_)
    mask[static_cast<std::size_t>(s.home) / 64] |= std::uint64_t{1} << (s.home % 64);
}

void BarrierUpdates::subscribe() {
  std::size_t words = 0;
  for (Subscription& s : subscriptions_) {
    s.answer = words;
    words += answer_bytes(std::min(s.pages, kMaxAnswerPages)) / sizeof(std::uint64_t);
  }
  answers_.resize(words);  // not resized again while the answers are in flight
  requests_.reserve(subscriptions_.size());
  for (const Subscription& s : subscriptions_)
    requests_.push_back(transport_->call_answered(
        s.home, handler_, outgoing_.data() + s.begin, (s.end - s.begin) * sizeof(std::uint64_t),
        answers_.data() + s.answer, answer_bytes(std::min(s.pages, kMaxAnswerPages))));
}

void BarrierUpdates::await() {
  for (std::size_t i = 0; i < subscriptions_.size(); ++i) {
    Request& request = requests_[i];
    request.wait();
    const Subscription& s = subscriptions_[i];
    const std::size_t got = request.message().size;
    const std::uint64_t pages = got >= sizeof(std::uint64_t) ? answers_[s.answer] : 0;
    if (pages > std::min(s.pages, kMaxAnswerPages) || got != answer_bytes(pages))
      throw Error(Errc::transport, transport_->rank(),
                  "Dsm::barrier: rank " + std::to_string(s.home) + " answered a subscription to " +
                      std::to_string(s.pages) + " pages with " + std::to_string(got) +
                      " bytes, which is no list of pages");
  }
}

void BarrierUpdates::for_each_update(
    const std::function<void(std::size_t, const std::byte*)>& f) const {
  for (const Subscription& s : subscriptions_) {
    const std::uint64_t* answer = answers_.data() + s.answer;
    const std::uint64_t pages = answer[0];
    const auto* data = reinterpret_cast<const std::byte*>(answer + 1 + pages);
    for (std::uint64_t i = 0; i < pages; ++i) f(answer[1 + i], data + i * page_size_);
  }
}

void BarrierUpdates::forget() {
  requests_.clear();  // a request still in flight is cancelled
  subscriptions_.clear();
  outgoing_.clear();
}

// At the home, inside its progress: keeps the subscription for serve(),
// which answers it. A second one before that is a protocol bug: abort, as
// for any malformed call.
Transport::Answer BarrierUpdates::take(void* self_pointer, int source, const std::byte* bytes,
                                       std::size_t size) {
  auto& self = *static_cast<BarrierUpdates*>(self_pointer);
  std::lock_guard<std::mutex> guard(self.pending_mutex_);
  Pending& slot = self.pending_[static_cast<std::size_t>(source)];
  if (slot.arrived || size < sizeof(std::uint64_t) || size > kMaxWords * sizeof(std::uint64_t) ||
      (size / sizeof(std::uint64_t)) % 2 != 1 || size % sizeof(std::uint64_t) != 0) {
    std::fprintf(stderr, "mpidsm: malformed barrier subscription from rank %d (%zu bytes)\n",
                 source, size);
    std::abort();
  }
  slot.words.resize(size / sizeof(std::uint64_t));  // within the reserved capacity
  std::memcpy(slot.words.data(), bytes, size);
  slot.ticket = Transport::defer_answer();
  slot.arrived = true;
  return {};
}

void BarrierUpdates::serve(const std::vector<int>& subscribers, std::uint64_t barrier,
                           const std::function<bool(std::size_t)>& written,
                           const std::function<const std::byte*(std::size_t)>& bytes_of) {
  if (replies_.size() < subscribers.size()) replies_.resize(subscribers.size());
  sends_.clear();
  for (std::size_t i = 0; i < subscribers.size(); ++i) {
    const int reader = subscribers[i];
    Pending& slot = pending_[static_cast<std::size_t>(reader)];
    auto arrived = [&] {
      std::lock_guard<std::mutex> guard(pending_mutex_);
      return slot.arrived;
    };
    transport_->wait_until(arrived, "Dsm::barrier (a subscription to this rank's pages)");
    // Copied out, so the slot keeps its reserved memory for the reader's
    // next subscription, which may arrive as soon as this one is answered.
    std::vector<std::uint64_t>& runs = runs_;
    Transport::PendingAnswer ticket;
    {
      std::lock_guard<std::mutex> guard(pending_mutex_);
      runs.assign(slot.words.begin(), slot.words.end());
      ticket = slot.ticket;
      slot.arrived = false;
    }
    if (runs[0] != barrier)
      throw Error(Errc::collective_mismatch, transport_->rank(),
                  "Dsm::barrier: rank " + std::to_string(reader) + " subscribed for barrier " +
                      std::to_string(runs[0]) + " during barrier " + std::to_string(barrier));
    std::size_t subscribed = 0;
    for (std::size_t r = 1; r < runs.size(); r += 2) subscribed += runs[r + 1];
    const std::size_t room = std::min(subscribed, kMaxAnswerPages);
    std::vector<std::uint64_t>& reply = replies_[i];
    reply.assign(1 + room, 0);
    for (std::size_t r = 1; r < runs.size() && written && reply[0] < room; r += 2)
      for (std::uint64_t page = runs[r]; page < runs[r] + runs[r + 1] && reply[0] < room; ++page)
        if (written(page)) reply[1 + reply[0]++] = page;
    const std::size_t pages = reply[0];
    reply.resize(answer_bytes(pages) / sizeof(std::uint64_t));
    auto* data = reinterpret_cast<std::byte*>(reply.data() + 1 + pages);
    for (std::size_t k = 0; k < pages; ++k)
      std::memcpy(data + k * page_size_, bytes_of(reply[1 + k]), page_size_);
    sends_.push_back(transport_->answer(ticket, reply.data(), answer_bytes(pages)));
  }
  for (Request& send : sends_) send.wait();
  sends_.clear();
}

}  // namespace mpidsm::detail
