// What the machine offers mpidsm: UCX's transports and devices, and the RDMA
// devices rdma-core's libibverbs finds. Used by the mpidsm_info tool.
#pragma once

#include "mpidsm/language.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace mpidsm {

/// \addtogroup runtime
/// @{

/// One transport on one device as UCX reports it (e.g. "posix" on "memory").
struct UcxResource {
  std::string component;      ///< UCT component, e.g. "posix", "ib", "tcp"
  std::string memory_domain;  ///< e.g. "posix", "mlx5_0"
  std::string transport;      ///< e.g. "posix", "rc_mlx5", "tcp"
  std::string device;         ///< e.g. "memory", "mlx5_0:1", "eth0"
  std::string device_type;    ///< net, shm, acc, self
};

/// The UCX library actually loaded at run time (may differ from the build's).
std::string ucx_runtime_version();
/// Every transport on every device UCX offers this process.
std::vector<UcxResource> ucx_resources();

/// One port of an RDMA device.
struct RdmaPort {
  /// Port number, from 1.
  int number = 0;
  std::string state;       ///< ACTIVE, DOWN, ...
  std::string link_layer;  ///< InfiniBand, Ethernet
};

/// An RDMA device as libibverbs reports it.
struct RdmaDevice {
  /// Device name, e.g. mlx5_0.
  std::string name;
  /// Its ports.
  std::vector<RdmaPort> ports;
  /// Hardware tag matching (as ibv_query_device_ex reports it): the NIC can
  /// match MPI-style tags and run rendezvous without the host CPU.
  bool tag_matching = false;
  /// Tags the NIC can match at once (with tag_matching).
  std::uint32_t max_tags = 0;
  std::string error;  ///< set when the device could not be opened or queried
};

/// Every RDMA device libibverbs finds (none on machines without one, and
/// none when mpidsm was built without libibverbs: build::ibverbs_version is
/// then empty).
std::vector<RdmaDevice> rdma_devices();

/// @}

}  // namespace mpidsm
