// What a rank holds of UCX, counted for start-up and memory accounting
// (benchmarks/startup_scaling): how those counts grow with the number of
// ranks is what decides how far a job scales (docs/scaling.md). And what it
// has sent, which the examples set beside their MPI twins' traffic.
#include "transport_impl.hpp"

namespace mpidsm {

TransportResources Transport::resources() const {
  const Impl& s = *impl_;
  TransportResources counts;
  for (ucp_worker_h worker : {s.worker, s.messaging_worker})
    if (worker) ++counts.workers;
  for (const auto* endpoints : {&s.endpoints, &s.messaging_endpoints}) {
    for (int peer = 0; peer < size_; ++peer)
      if (peer != rank_ && endpoints->connected(peer)) ++counts.endpoints;
    counts.addressing_bytes += endpoints->address_bytes();
  }
  std::lock_guard<std::mutex> keys_stay(impl_->unpacking);  // no packed key freed meanwhile
  for (const detail::RegionState& region : s.regions) {
    if (region.generation == 0) continue;
    ++counts.regions;
    counts.registered_bytes += region.size;
    for (const detail::RemoteKey& key : region.peers) {
      if (std::atomic_ref<void* const>(key.rkey).load(std::memory_order_relaxed))
        ++counts.remote_keys;
      counts.addressing_bytes += key.packed.capacity();
    }
  }
  return counts;
}

TransportTraffic Transport::traffic() const noexcept {
  return impl_->traffic.read();
}

}  // namespace mpidsm
