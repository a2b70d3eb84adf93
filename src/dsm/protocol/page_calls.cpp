#include "page_calls.hpp"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace mpidsm::detail {

PageCalls::PageCalls(Transport& transport, SharingRecord& sharing, const DsmRegion& region,
                     std::size_t page_size, std::size_t max_runs, bool wanted,
                     CopiedForWriting copied_for_writing)
    : transport_(&transport),
      messaging_(transport),
      sharing_(sharing),
      copied_for_writing_(copied_for_writing),
      master_(region.master()),
      pages_(region.size() / page_size),
      page_size_(page_size),
      used_(messaging_.all_reach_through_messages(
          wanted, [&](int peer) { return region.peer_master(peer) != nullptr; })),
      handler_(messaging_.add_answering_handler(answer, this)) {
  calls_.reserve(max_runs);
}

PageCalls::~PageCalls() {
  if (transport_) transport_->remove_remote_handler(handler_);
}

void PageCalls::ask(int home, std::size_t first, std::size_t count, bool count_copies,
                    bool for_writing, std::vector<Request>& requests) {
  if (calls_.size() == calls_.capacity())
    throw Error(Errc::invalid_state, transport_->rank(),
                "DSM fetch: more than " + std::to_string(calls_.capacity()) +
                    " calls in flight (their words would move under them)");
  const std::uint32_t flags = (count_copies ? kCountCopies : 0) | (for_writing ? kForWriting : 0);
  calls_.push_back({{first, static_cast<std::uint32_t>(count), flags}, home, requests.size()});
  const Call& call = calls_.back().call;
  requests.push_back(messaging_.call_answered(home, handler_, &call, sizeof call,
                                              master_ + first * page_size_, count * page_size_));
}

void PageCalls::check_answers(const std::vector<Request>& requests) {
  for (const Asked& asked : calls_) {
    const std::size_t expected = asked.call.count * page_size_;
    const std::size_t got = requests[asked.request].message().size;
    if (got != expected) {
      calls_.clear();
      throw Error(Errc::transport, transport_->rank(),
                  "DSM fetch: rank " + std::to_string(asked.home) +
                      " answered the call for pages " + std::to_string(asked.call.first) + ".." +
                      std::to_string(asked.call.first + asked.call.count - 1) + " with " +
                      std::to_string(got) + " bytes, not " + std::to_string(expected));
    }
  }
  calls_.clear();
}

// At the home, inside its progress: counts the copies before the pages are
// read for the answer (the order SharingRecord relies on), lets the home
// track pages fetched for writing, and answers with the pages' master
// copies. A malformed call is a protocol bug: abort, as for a malformed diff.
Answer PageCalls::answer(void* self_pointer, int source, const std::byte* bytes, std::size_t size) {
  auto& self = *static_cast<PageCalls*>(self_pointer);
  Call call{};
  if (size == sizeof call) std::memcpy(&call, bytes, sizeof call);
  if (size != sizeof call || call.count == 0 || (call.flags & ~(kCountCopies | kForWriting)) ||
      call.first >= self.pages_ || call.count > self.pages_ - call.first) {
    std::fprintf(stderr, "mpidsm: rank %d: malformed DSM fetch call from rank %d\n",
                 self.transport_->rank(), source);
    std::abort();
  }
  if (call.flags & kCountCopies) self.sharing_.count_copies_here(call.first, call.count);
  if (call.flags & kForWriting)
    self.copied_for_writing_.call(self.copied_for_writing_.context, call.first, call.count);
  return {self.master_ + call.first * self.page_size_, call.count * self.page_size_};
}

}  // namespace mpidsm::detail
