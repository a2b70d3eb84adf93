// mpidsm_info: what this build of mpidsm is, which MPI and UCX it runs with,
// what UCX and the RDMA hardware offer it, and the configuration the MPIDSM_*
// environment gives. Runs without mpirun, as ompi_info and ucx_info do.
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "mpidsm/config.hpp"
#include "mpidsm/info.hpp"
#include "mpidsm/version.hpp"

extern char** environ;

namespace {

struct Options {
  bool all = false;          // -a: every section, every variable's meaning
  bool parsable = false;     // --parsable: NAME=value lines
  bool kernel_only = false;  // --kernel: the kernel section alone
};

// The first line of MPI_Get_library_version ("Open MPI v4.1.4, package: ..."),
// which MPI lets any program call before MPI_Init.
std::string mpi_library() {
  char text[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int length = 0;
  MPI_Get_library_version(text, &length);
  std::string library(text, static_cast<std::size_t>(length));
  if (auto end = library.find_first_of("\n,"); end != std::string::npos) library.resize(end);
  return library;
}

std::string mpi_standard() {
  int version = 0, subversion = 0;
  MPI_Get_version(&version, &subversion);
  return std::to_string(version) + "." + std::to_string(subversion);
}

std::string library_version() {
  const mpidsm::Version v = mpidsm::library_version();
  return std::to_string(v.major) + "." + std::to_string(v.minor) + "." + std::to_string(v.patch);
}

void print_versions(const Options& o) {
  const std::string mpi = mpi_library(), standard = mpi_standard();
  const std::string ucx = mpidsm::ucx_runtime_version(), mpidsm_version = library_version();
  if (o.parsable) {
    std::printf("mpidsm.version=%s\nmpidsm.headers_version=%s\n", mpidsm_version.c_str(),
                mpidsm::build::version);
    std::printf("mpi.library=%s\nmpi.standard=%s\nucx.version=%s\n", mpi.c_str(), standard.c_str(),
                ucx.c_str());
    if (o.all)
      std::printf(
          "build.type=%s\nbuild.compiler=%s\nbuild.ucx=%s\nbuild.mpi=%s\nbuild.ibverbs=%s\n",
          mpidsm::build::build_type, mpidsm::build::compiler, mpidsm::build::ucx_version,
          mpidsm::build::mpi_version, mpidsm::build::ibverbs_version);
    return;
  }
  std::printf("# mpidsm %s\n", mpidsm_version.c_str());
  std::printf("  MPI library      %s (MPI standard %s)\n", mpi.c_str(), standard.c_str());
  std::printf("  UCX              %s\n", ucx.c_str());
  if (o.all) {
    std::printf("  build type       %s\n", mpidsm::build::build_type);
    std::printf("  compiler         %s\n", mpidsm::build::compiler);
    const char* ibverbs =
        *mpidsm::build::ibverbs_version ? mpidsm::build::ibverbs_version : "(none)";
    std::printf("  built with       UCX %s, MPI %s, libibverbs %s\n", mpidsm::build::ucx_version,
                mpidsm::build::mpi_version, ibverbs);
  }
}

void print_ucx(const Options& o) {
  if (!o.parsable) {
    std::printf("\n# UCX transports and devices\n");
    std::printf("  %-10s %-12s %-14s %-6s\n", "transport", "device", "memory domain", "type");
  }
  for (const auto& r : mpidsm::ucx_resources()) {
    if (o.parsable)
      std::printf("ucx.transport=%s/%s (%s, %s)\n", r.transport.c_str(), r.device.c_str(),
                  r.memory_domain.c_str(), r.device_type.c_str());
    else
      std::printf("  %-10s %-12s %-14s %-6s\n", r.transport.c_str(), r.device.c_str(),
                  r.memory_domain.c_str(), r.device_type.c_str());
  }
}

void print_rdma(const Options& o) {
  auto devices = mpidsm::rdma_devices();
  if (o.parsable) {
    for (const auto& d : devices)
      std::printf("rdma.device=%s%s%s\n", d.name.c_str(), d.error.empty() ? "" : " (error: ",
                  d.error.empty() ? "" : (d.error + ")").c_str());
    return;
  }
  std::printf("\n# RDMA devices (libibverbs)\n");
  if (*mpidsm::build::ibverbs_version == '\0')
    std::printf(
        "  not listed: mpidsm was built without libibverbs (MPIDSM_WITH_IBVERBS=OFF); "
        "UCX still uses every NIC it finds\n");
  else if (devices.empty())
    std::printf("  none found\n");
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

const char* yes_no(bool value) {
  return value ? "yes" : "no";
}

// What the kernel charges for what the DSM uses, and what it offers: two
// machines' figures side by side tell why a DSM ratio moved between them.
void print_kernel(const Options& o) {
  const mpidsm::KernelFacts k = mpidsm::kernel_facts();
  const std::string uffd = k.userfaultfd ? "yes" : "no (" + k.userfaultfd_error + ")";
  if (o.parsable) {
    std::printf("kernel.system_call_us=%.3f\nkernel.mprotect_us=%.3f\nkernel.write_fault_us=%.3f\n",
                k.system_call_us, k.mprotect_us, k.write_fault_us);
    std::printf("kernel.read_allocates=%s\nkernel.userfaultfd=%s\n", yes_no(k.read_allocates),
                yes_no(k.userfaultfd));
    std::printf("kernel.userfaultfd_features=0x%llx\nkernel.userfaultfd_wp=%s\n",
                static_cast<unsigned long long>(k.userfaultfd_features), yes_no(k.write_protect));
    std::printf("kernel.userfaultfd_wp_async=%s\nkernel.pagemap_scan=%s\n",
                yes_no(k.write_protect_async), yes_no(k.pagemap_scan));
    return;
  }
  std::printf("\n# What this kernel charges the DSM (medians of 5)\n");
  std::printf("  system call      %8.3f us\n", k.system_call_us);
  std::printf("  mprotect         %8.3f us  (one page)\n", k.mprotect_us);
  std::printf("  write fault      %8.3f us  (SIGSEGV, handler, two mprotects)\n", k.write_fault_us);
  std::printf("  read of an untouched page allocates: %s\n",
              k.read_allocates ? "yes (no shared zero page)" : "no (zero page)");
  std::printf("  userfaultfd      %s\n", uffd.c_str());
  if (k.userfaultfd)
    std::printf("    features 0x%llx: write-protect %s, WP_ASYNC %s\n",
                static_cast<unsigned long long>(k.userfaultfd_features), yes_no(k.write_protect),
                yes_no(k.write_protect_async));
  std::printf("  PAGEMAP_SCAN     %s\n", yes_no(k.pagemap_scan));
}

// A size in bytes as a person reads it: "268435456 (256 MiB)".
std::string with_unit(const std::string& bytes) {
  if (bytes.empty() || bytes.find_first_not_of("0123456789") != std::string::npos) return bytes;
  const unsigned long long value = std::stoull(bytes);
  static constexpr const char* kUnits[] = {"KiB", "MiB", "GiB", "TiB"};
  int unit = -1;
  unsigned long long shown = value;
  while (unit < 3 && shown >= 1024 && shown % 1024 == 0) {
    shown /= 1024;
    ++unit;
  }
  return unit < 0 ? bytes + " bytes"
                  : bytes + " (" + std::to_string(shown) + " " + kUnits[unit] + ")";
}

bool is_size(std::string_view variable) {
  return variable == "MPIDSM_HEAP_SIZE" || variable == "MPIDSM_DSM_SIZE" ||
         variable == "MPIDSM_RNDV_THRESH" || variable == "MPIDSM_SHM_EAGER_LIMIT";
}

// The effective value of every variable. Every bad variable is reported,
// each on its own line (each alone, then what they give together), and the
// table shows the default in its place; 1 when the environment holds one.
int print_config(const Options& o) {
  std::vector<std::string> bad, errors;
  for (const auto& variable : mpidsm::Config::variables()) {
    const char* value = std::getenv(variable.name);
    if (!value) continue;
    try {
      mpidsm::Config::parse([&](const char* name) {
        return std::strcmp(name, variable.name) == 0 ? value : nullptr;
      });
    } catch (const std::exception& e) {
      bad.emplace_back(variable.name);
      errors.emplace_back(e.what());
    }
  }
  mpidsm::Config config;
  try {
    config = mpidsm::Config::parse([&](const char* name) -> const char* {
      return std::find(bad.begin(), bad.end(), name) != bad.end() ? nullptr : std::getenv(name);
    });
  } catch (const std::exception& e) {
    errors.emplace_back(e.what());
  }
  for (const std::string& error : errors)
    std::fprintf(stderr, "mpidsm_info: %s (its default shown)\n", error.c_str());
  // Unknown names are usually typos; the runtime warns about them the same way.
  for (const auto& name : mpidsm::Config::unknown_variables(environ))
    std::fprintf(stderr, "mpidsm_info: warning: unknown variable %s is ignored\n", name.c_str());
  if (!o.parsable) std::printf("\n# Configuration (MPIDSM_* environment)\n");
  auto values = config.describe();
  auto variables = mpidsm::Config::variables();
  for (std::size_t i = 0; i < variables.size(); ++i) {
    if (o.parsable) {
      std::printf("%s=%s\n", values[i].first.c_str(), values[i].second.c_str());
      continue;
    }
    const std::string shown =
        is_size(values[i].first) ? with_unit(values[i].second) : values[i].second;
    std::printf("  %-26s = %-8s (default %s)\n", values[i].first.c_str(), shown.c_str(),
                variables[i].default_value);
    if (o.all) std::printf("      %s\n", variables[i].description);
  }
  return errors.empty() ? 0 : 1;
}

void usage(const char* program, std::FILE* out) {
  std::fprintf(out,
               "usage: %s [-a] [--parsable] [--kernel] [-h]\n"
               "  Prints mpidsm's version, the MPI library and UCX it runs with, UCX's\n"
               "  transports, RDMA devices, what the kernel charges and offers the DSM,\n"
               "  and the effective MPIDSM_* configuration.\n"
               "  -a, --all       also the build, and what every variable means\n"
               "  -k, --kernel    only what the kernel charges and offers the DSM\n"
               "  -p, --parsable  one NAME=value per line (configuration variables under\n"
               "                  their own names, as ucx_info -c prints them)\n"
               "  -V, --version   the version of mpidsm\n"
               "  -h, --help      this text\n",
               program);
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "-a" || arg == "--all") {
      options.all = true;
    } else if (arg == "-p" || arg == "--parsable") {
      options.parsable = true;
    } else if (arg == "-V" || arg == "--version") {
      std::printf("mpidsm_info (mpidsm %s)\n", library_version().c_str());
      return 0;
    } else if (arg == "-k" || arg == "--kernel") {
      options.kernel_only = true;
    } else if (arg == "-h" || arg == "--help") {
      usage(argv[0], stdout);
      return 0;
    } else {
      std::fprintf(stderr, "mpidsm_info: unknown option '%s'\n", argv[i]);
      usage(argv[0], stderr);
      return 2;
    }
  }
  if (options.kernel_only) {
    print_kernel(options);
    return 0;
  }
  print_versions(options);
  print_ucx(options);
  print_rdma(options);
  print_kernel(options);
  return print_config(options);
}
