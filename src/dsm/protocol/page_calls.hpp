// DSM fetches as answered calls, for homes UCX reaches through active
// messages (tcp). One-sided, a fetch from such a home counts the copy with
// atomics, reserves a copy-log slot with a fetching atomic, writes the entry
// and gets the pages: two round trips, each served by the home's CPU anyway
// (and each a wake-up of its progress thread when it is computing). As a
// call, the home's handler counts and logs the copies in its own words (as
// any fetcher does, before the pages are read) and answers with the pages:
// one round trip. Measured across two simulated hosts (tcp):
// see docs/consistency.md.
//
// Used only when every rank reaches every remote home through messages
// (agreed at construction): the handler counts copies with CPU atomics,
// which must never race the NIC atomics of a peer that reaches the same
// words over RDMA.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "dsm/memory/region.hpp"
#include "mpidsm/transport.hpp"
#include "sharing.hpp"
#include "transport/library_messaging.hpp"

namespace mpidsm::detail {

class PageCalls {
 public:
  // Called at the home, from the handler, for pages a fetcher is about to
  // write: after their copies are counted, before their bytes are read.
  struct CopiedForWriting {
    void (*call)(void* context, std::size_t first, std::size_t count);
    void* context;
  };
  // Collective. `wanted`: this rank's DsmSettings::fetch_by_call;
  // `max_runs`: runs one fetch asks for at most.
  PageCalls(Transport& transport, SharingRecord& sharing, const DsmRegion& region,
            std::size_t page_size, std::size_t max_runs, bool wanted,
            CopiedForWriting copied_for_writing);
  ~PageCalls();
  // The transport is gone: nothing to unregister.
  void abandon_transport() { transport_ = nullptr; }
  PageCalls(const PageCalls&) = delete;
  PageCalls& operator=(const PageCalls&) = delete;

  // Fetches go through calls (to every home not mapped here).
  bool used() const { return used_; }
  // Asks `home` for pages [first, first+count) into the master view;
  // `count_copies`: the home counts them as this rank's copies
  // (SharingRecord::take_copy held for each); `for_writing`: this rank
  // fetches them to write them. The request joins `requests`.
  // At most `max_runs` calls at once: one more throws Errc::invalid_state
  // (the calls in flight would move).
  void ask(int home, std::size_t first, std::size_t count, bool count_copies, bool for_writing,
           std::vector<Request>& requests);
  // After every request has completed: checks that each answer was whole,
  // and forgets the calls. Throws Errc::transport naming the home otherwise.
  void check_answers(const std::vector<Request>& requests);
  // After a failure: forgets the calls (their requests completed or were
  // given up on).
  void clear() { calls_.clear(); }

 private:
  struct Call {
    std::uint64_t first;  // page
    std::uint32_t count;
    std::uint32_t flags;  // kCountCopies | kForWriting
  };
  static constexpr std::uint32_t kCountCopies = 1, kForWriting = 2;
  struct Asked {
    Call call;
    int home;
    std::size_t request;  // index into the requests vector
  };
  static Answer answer(void* self, int source, const std::byte* bytes, std::size_t size);

  Transport* transport_;
  LibraryMessaging messaging_;
  SharingRecord& sharing_;
  CopiedForWriting copied_for_writing_;
  std::byte* master_;
  std::size_t pages_;
  std::size_t page_size_;
  bool used_;
  std::vector<Asked> calls_;  // stable while their requests are in flight (reserved)
  std::uint32_t handler_;     // registered last: the handler may run at once
};

}  // namespace mpidsm::detail
