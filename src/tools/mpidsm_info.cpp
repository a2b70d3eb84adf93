// mpidsm_info: what this build of mpidsm is, what UCX and the RDMA hardware
// offer it, and the configuration the MPIDSM_* environment gives. Runs
// without mpirun.
#include <cstdio>
#include <cstring>
#include <string>

#include "mpidsm/config.hpp"
#include "mpidsm/info.hpp"
#include "mpidsm/version.hpp"

namespace {

void print_build() {
  std::printf("# mpidsm\n");
  std::printf("  version          %s\n", mpidsm::build::version);
  std::printf("  build type       %s\n", mpidsm::build::build_type);
  std::printf("  compiler         %s\n", mpidsm::build::compiler);
  std::printf("  built with UCX   %s, MPI %s, libibverbs %s\n", mpidsm::build::ucx_version,
              mpidsm::build::mpi_version, mpidsm::build::ibverbs_version);
}

void print_ucx() {
  std::printf("\n# UCX %s: transports and devices\n", mpidsm::ucx_runtime_version().c_str());
  std::printf("  %-10s %-12s %-14s %-6s\n", "transport", "device", "memory domain", "type");
  for (const auto& r : mpidsm::ucx_resources())
    std::printf("  %-10s %-12s %-14s %-6s\n", r.transport.c_str(), r.device.c_str(),
                r.memory_domain.c_str(), r.device_type.c_str());
}

void print_rdma() {
  std::printf("\n# RDMA devices (libibverbs)\n");
  auto devices = mpidsm::rdma_devices();
  if (devices.empty()) std::printf("  none found\n");
  for (const auto& d : devices) {
    std::printf("  %s\n", d.name.c_str());
    if (!d.error.empty()) {
      std::printf("    error: %s\n", d.error.c_str());
      continue;
    }
    for (const auto& p : d.ports)
      std::printf("    port %d: %s, link layer %s\n", p.number, p.state.c_str(),
                  p.link_layer.c_str());
    if (d.tag_matching)
      std::printf("    tag-matching offload: yes (up to %u tags)\n", d.max_tags);
    else
      std::printf("    tag-matching offload: no\n");
  }
}

int print_config() {
  std::printf("\n# Configuration (MPIDSM_* environment)\n");
  mpidsm::Config config;
  int status = 0;
  try {
    config = mpidsm::Config::from_environment();
  } catch (const std::exception& e) {
    std::printf("  error: %s\n  (showing defaults)\n", e.what());
    status = 1;
  }
  auto values = config.describe();
  auto variables = mpidsm::Config::variables();
  for (std::size_t i = 0; i < variables.size(); ++i) {
    std::printf("  %-26s = %-8s (default %s)\n", values[i].first.c_str(), values[i].second.c_str(),
                variables[i].default_value);
    std::printf("      %s\n", variables[i].description);
  }
  return status;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1 && (std::strcmp(argv[1], "-h") == 0 || std::strcmp(argv[1], "--help") == 0)) {
    std::printf(
        "usage: %s\n  Prints mpidsm's build, UCX's transports, RDMA devices and the "
        "effective MPIDSM_* configuration.\n",
        argv[0]);
    return 0;
  }
  print_build();
  print_ucx();
  print_rdma();
  return print_config();
}
