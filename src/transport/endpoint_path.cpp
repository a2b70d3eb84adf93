// Which UCX transports carry the traffic to a peer, read from UCX's own
// description of the endpoint's lanes (ucp_ep_print_info), for users and for
// tests that check that ranks on different hosts never share memory; and
// whether any lane reaches the peer's memory itself (RDMA, shared memory) or
// UCX emulates RMA with active messages (tcp).
#include <ucp/api/ucp.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "transport_impl.hpp"

namespace mpidsm {
namespace {

// "lane[0]:  8:tcp/eth0.0 md[4] -> ..." gives "tcp/eth0".
std::string lane_resource(const std::string& line) {
  const auto lane = line.find("lane[");
  if (lane == std::string::npos) return {};
  const auto colon = line.find(':', lane);
  if (colon == std::string::npos) return {};
  std::istringstream words(line.substr(colon + 1));
  std::string resource;
  words >> resource;  // "8:tcp/eth0.0"
  if (const auto index_end = resource.find(':'); index_end != std::string::npos)
    resource.erase(0, index_end + 1);
  if (const auto dot = resource.rfind('.'); dot != std::string::npos) resource.erase(dot);
  return resource;
}

// Whether a line of the endpoint's description shows UCX reaching the
// peer's memory itself: a protocol line for the RMA calls ("put[0]: ...",
// "get[0]: ..."), or a lane doing RMA or atomics ("... -> md[2]/... rma#0
// amo#0"). A tcp lane shows neither: "... -> md[1]/tcp/sysdev[255] rma_bw#0
// am am_bw#0" (its rma_bw serves rendezvous only; put, get and atomics are
// active messages the peer's CPU serves).
bool reaches_memory(const std::string& line) {
  if (line.find("put[") != std::string::npos || line.find("get[") != std::string::npos) return true;
  const auto arrow = line.find("->");
  if (line.find("lane[") == std::string::npos || arrow == std::string::npos) return false;
  std::istringstream words(line.substr(arrow + 2));
  for (std::string word; words >> word;)
    if (word.starts_with("rma#") || word.starts_with("amo#")) return true;
  return false;
}

// UCX's description of the endpoint, a line per element (empty if unavailable).
std::vector<std::string> endpoint_info(ucp_ep_h endpoint) {
  char* text = nullptr;
  std::size_t length = 0;
  std::FILE* stream = open_memstream(&text, &length);
  if (!stream) return {};
  ucp_ep_print_info(endpoint, stream);
  std::fclose(stream);
  std::istringstream lines(std::string(text, length));
  std::free(text);
  std::vector<std::string> result;
  for (std::string line; std::getline(lines, line);) result.push_back(line);
  return result;
}

}  // namespace

bool Transport::rma_through_messages(int peer) const {
  impl_->check_peer(peer, "rma_through_messages");
  // Counted as inside: the endpoint may be made here, which must not wait on
  // a progress thread inside the worker that waits on the endpoint table.
  auto in_use = impl_->use_worker("rma_through_messages");
  const auto lines = endpoint_info(impl_->endpoints.get(peer));
  return !lines.empty() && std::none_of(lines.begin(), lines.end(), reaches_memory);
}

std::string Transport::path_to(int peer) const {
  impl_->check_peer(peer, "path_to");
  auto in_use = impl_->use_worker("path_to");
  std::vector<std::string> seen;
  for (const std::string& line : endpoint_info(impl_->endpoints.get(peer))) {
    const std::string resource = lane_resource(line);
    if (resource.empty()) continue;
    if (std::find(seen.begin(), seen.end(), resource) == seen.end()) seen.push_back(resource);
  }
  std::string path;
  for (const auto& s : seen) path += (path.empty() ? "" : " ") + s;
  return path.empty() ? "unknown" : path;
}

}  // namespace mpidsm
