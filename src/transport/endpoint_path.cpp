// Which UCX transports carry the traffic to a peer, read from UCX's own
// description of the endpoint's lanes (ucp_ep_print_info), for users and for
// tests that check that ranks on different hosts never share memory.
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

}  // namespace

std::string Transport::path_to(int peer) const {
  impl_->check_peer(peer, "path_to");
  char* text = nullptr;
  std::size_t length = 0;
  std::FILE* stream = open_memstream(&text, &length);
  if (!stream) return "unknown";
  ucp_ep_print_info(impl_->endpoints[static_cast<std::size_t>(peer)], stream);
  std::fclose(stream);
  std::istringstream lines(std::string(text, length));
  std::free(text);
  std::vector<std::string> seen;
  for (std::string line; std::getline(lines, line);) {
    const std::string resource = lane_resource(line);
    if (resource.empty()) continue;
    if (std::find(seen.begin(), seen.end(), resource) == seen.end()) seen.push_back(resource);
  }
  std::string path;
  for (const auto& s : seen) path += (path.empty() ? "" : " ") + s;
  return path.empty() ? "unknown" : path;
}

}  // namespace mpidsm
