// The report of a wait that makes no progress (MPIDSM_HANG_REPORT): where
// every rank of the runtime is, read from each rank's place
// (whereabouts.hpp), printed once by the lowest rank that waits.
#include <chrono>
#include <cstdio>
#include <memory>
#include <vector>

#include "transport_impl.hpp"

namespace mpidsm {

detail::WaitClock::~WaitClock() {
  if (published) published->stopped_waiting();
}

void Transport::check_peers(const char* waiting_for, detail::WaitClock& clock) {
  impl_->check_peers(waiting_for, clock);
}

void Transport::note_collective(const char* name) noexcept {
  impl_->whereabouts.entered_collective(name);
}

// The first look publishes the wait (it has lasted 256 polls or more); a
// later one past the limit reports, once per wait.
void Transport::Impl::look_for_hang(const char* waiting_for, detail::WaitClock& clock) {
  if (!whereabouts.opened()) return;
  const std::uint64_t now = detail::wall_clock_ns();
  if (clock.started_ns == 0) {
    clock.started_ns = now;
    whereabouts.waiting(waiting_for, now);
    clock.published = &whereabouts;
    return;
  }
  if (clock.reported || now - clock.started_ns < hang_report_ns) return;
  clock.reported = true;
  report_hang(waiting_for, now - clock.started_ns);
}

// Every rank's place, lowest first. A lower rank that waits too reports
// instead (one report per hang, and each rank reads one place when rank 0
// waits, whatever the job's size).
void Transport::Impl::report_hang(const char* waiting_for, std::uint64_t waited_ns) {
  auto in_use = use_worker_in_collective("hang report");
  std::vector<detail::Place> places(static_cast<std::size_t>(size));
  std::vector<char> answered(places.size(), 0);
  for (int peer = 0; peer < size; ++peer) {
    const auto r = static_cast<std::size_t>(peer);
    answered[r] = read_place(peer, places[r]);
    if (peer < rank && answered[r] && places[r].waiting_since != 0) return;
  }
  const std::string where = detail::Whereabouts::describe(places, answered);
  std::fprintf(stderr,
               "mpidsm: rank %d: %s has made no progress for %llu s (MPIDSM_HANG_REPORT); where "
               "the %d ranks are:\n%s",
               rank, waiting_for, static_cast<unsigned long long>(waited_ns / 1'000'000'000u), size,
               where.c_str());
  std::fflush(stderr);
}

// A peer's place: this rank's own, a mapped one (this node), or a get
// through UCX given a second to answer (its buffer is left to UCX for good
// when it does not, as the get may still land).
bool Transport::Impl::read_place(int peer, detail::Place& place) {
  if (peer == rank) {
    place = *static_cast<const detail::Place*>(whereabouts_region.local_base());
    return true;
  }
  if (const void* mapped = whereabouts_region.mapped(peer)) {
    place = *static_cast<const detail::Place*>(mapped);
    return true;
  }
  try {
    if (liveness.known_gone(peer)) return false;
    const auto& key = remote(whereabouts_region, peer, 0, sizeof place, "hang report");
    auto landing = std::make_unique<detail::Place>();
    ucp_request_param_t param{};
    ucs_status_ptr_t request = ucp_get_nbx(endpoints.get(peer), landing.get(), sizeof place,
                                           key.base, static_cast<ucp_rkey_h>(key.rkey), &param);
    if (UCS_PTR_IS_ERR(request)) return false;
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(1);
    while (request && ucp_request_check_status(request) == UCS_INPROGRESS &&
           std::chrono::steady_clock::now() < until)
      ucp_worker_progress(worker);
    if (request) {
      const ucs_status_t status = ucp_request_check_status(request);
      if (status == UCS_INPROGRESS) {
        static_cast<void>(landing.release());
        return false;
      }
      ucp_request_free(request);
      if (status != UCS_OK) return false;
    }
    place = *landing;
    return true;
  } catch (const Error&) {
    return false;  // no endpoint to it, or it is gone: the report says so
  }
}

}  // namespace mpidsm
