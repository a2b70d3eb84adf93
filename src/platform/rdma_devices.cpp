// RDMA devices through rdma-core's libibverbs, including whether the NIC
// offers hardware tag matching (ibv_query_device_ex's tm_caps).
#include <infiniband/verbs.h>

#include <cerrno>
#include <cstring>

#include "mpidsm/info.hpp"

namespace mpidsm {
namespace {

const char* port_state_name(ibv_port_state state) {
  switch (state) {
    case IBV_PORT_DOWN:
      return "DOWN";
    case IBV_PORT_INIT:
      return "INIT";
    case IBV_PORT_ARMED:
      return "ARMED";
    case IBV_PORT_ACTIVE:
      return "ACTIVE";
    case IBV_PORT_ACTIVE_DEFER:
      return "ACTIVE_DEFER";
    default:
      return "NOP";
  }
}

const char* link_layer_name(std::uint8_t link_layer) {
  switch (link_layer) {
    case IBV_LINK_LAYER_INFINIBAND:
      return "InfiniBand";
    case IBV_LINK_LAYER_ETHERNET:
      return "Ethernet";
    default:
      return "unspecified";
  }
}

RdmaDevice describe(ibv_device* device) {
  RdmaDevice out;
  out.name = ibv_get_device_name(device);
  ibv_context* context = ibv_open_device(device);
  if (!context) {
    out.error = std::string("ibv_open_device: ") + std::strerror(errno);
    return out;
  }
  ibv_device_attr_ex attr{};
  if (int rc = ibv_query_device_ex(context, nullptr, &attr); rc != 0) {
    out.error = std::string("ibv_query_device_ex: ") + std::strerror(rc);
  } else {
    out.max_tags = attr.tm_caps.max_num_tags;
    out.tag_matching = attr.tm_caps.max_num_tags > 0;
    for (int port = 1; port <= attr.orig_attr.phys_port_cnt; ++port) {
      ibv_port_attr port_attr{};
      if (ibv_query_port(context, static_cast<std::uint8_t>(port), &port_attr) != 0) continue;
      out.ports.push_back(
          {port, port_state_name(port_attr.state), link_layer_name(port_attr.link_layer)});
    }
  }
  ibv_close_device(context);
  return out;
}

}  // namespace

std::vector<RdmaDevice> rdma_devices() {
  std::vector<RdmaDevice> out;
  int count = 0;
  ibv_device** list = ibv_get_device_list(&count);
  if (!list) return out;
  for (int i = 0; i < count; ++i) out.push_back(describe(list[i]));
  ibv_free_device_list(list);
  return out;
}

}  // namespace mpidsm
