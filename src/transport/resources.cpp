// What a rank holds of UCX, counted for start-up and memory accounting
// (benchmarks/startup_scaling): how those counts grow with the number of
// ranks is what decides how far a job scales (docs/scaling.md).
#include "transport_impl.hpp"

namespace mpidsm {

TransportResources Transport::resources() const {
  const Impl& s = *impl_;
  TransportResources counts;
  for (ucp_worker_h worker : {s.worker, s.messaging_worker})
    if (worker) ++counts.workers;
  for (const auto* endpoints : {&s.endpoints, &s.messaging_endpoints})
    for (std::size_t peer = 0; peer < endpoints->size(); ++peer)
      if ((*endpoints)[peer] && static_cast<int>(peer) != rank_) ++counts.endpoints;
  for (const detail::RegionState& region : s.regions) {
    if (region.generation == 0) continue;
    ++counts.regions;
    counts.registered_bytes += region.size;
    for (const detail::RemoteKey& key : region.peers)
      if (key.rkey) ++counts.remote_keys;
  }
  return counts;
}

}  // namespace mpidsm
