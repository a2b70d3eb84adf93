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

/// What this machine's kernel charges for, and offers to, a page-fault DSM:
/// the figures that explain why a DSM ratio moved between two machines.
struct KernelFacts {
  /// Median microseconds of a system call that does no work (getppid).
  double system_call_us = 0;
  /// Median microseconds of one mprotect of one page.
  double mprotect_us = 0;
  /// Median microseconds of a write to a read-only page whose SIGSEGV
  /// handler makes it writable: the fault, the signal and two mprotects.
  double write_fault_us = 0;
  /// A read of an untouched private page allocates memory (the kernel does
  /// not map its shared zero page): untouched memory that is read is not free.
  bool read_allocates = false;
  /// userfaultfd can be opened by this process (user-mode faults only).
  bool userfaultfd = false;
  /// Why not, when userfaultfd is false (e.g. "forbidden:
  /// vm.unprivileged_userfaultfd=0").
  std::string userfaultfd_error;
  /// The features UFFDIO_API reports, as its bit mask.
  std::uint64_t userfaultfd_features = 0;
  /// userfaultfd's write-protect mode (UFFD_FEATURE_PAGEFAULT_FLAG_WP).
  bool write_protect = false;
  /// Write protection resolved by the kernel without a message
  /// (UFFD_FEATURE_WP_ASYNC, Linux 6.7+).
  bool write_protect_async = false;
  /// The PAGEMAP_SCAN ioctl on /proc/self/pagemap (Linux 6.7+).
  bool pagemap_scan = false;
};

/// Measures and probes the kernel: a few milliseconds (timings taken over
/// 2,000 calls, median of 5); `time_costs` false skips the timings. The
/// write fault is timed with a SIGSEGV handler of its own, restored after:
/// call it before anything else installs one, or from a tool.
KernelFacts kernel_facts(bool time_costs = true);

/// @}

}  // namespace mpidsm
