#include "mpidsm/config.hpp"

#include <array>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <limits>

#include "mpidsm/error.hpp"

namespace mpidsm {
namespace {

constexpr const char* kProgressThread = "MPIDSM_PROGRESS_THREAD";
constexpr const char* kRndvThresh = "MPIDSM_RNDV_THRESH";
constexpr const char* kHeapSize = "MPIDSM_HEAP_SIZE";
constexpr const char* kDirectAccess = "MPIDSM_DIRECT_ACCESS";
constexpr const char* kDsmSize = "MPIDSM_DSM_SIZE";

constexpr std::array kVariables{
    ConfigVariable{kProgressThread, "auto",
                   "auto|on|off: a sleeping thread that gives remote ranks' emulated RMA and "
                   "atomics target-side progress; auto starts it when some peer's memory is "
                   "not mappable (tcp, RDMA NICs, memory UCX did not allocate)"},
    ConfigVariable{kRndvThresh, "auto",
                   "auto|<size>: tagged messages of at least this many bytes use UCX's "
                   "rendezvous protocol (sets UCX's RNDV_THRESH for mpidsm's context only)"},
    ConfigVariable{kHeapSize, "128M",
                   "<size>: symmetric heap per rank for PGAS allocations (shared memory "
                   "allocated by UCX, so same-node peers reach it by load/store)"},
    ConfigVariable{kDirectAccess, "auto",
                   "auto|off: put/get/atomics on same-node peers as plain loads, stores and CPU "
                   "atomics; off sends every one-sided operation through UCX"},
    ConfigVariable{kDsmSize, "256M",
                   "<size>: the coherent DSM region, reserved at the same virtual address on "
                   "every rank (a multiple of the page size)"},
};

[[noreturn]] void bad_value(const char* variable, const std::string& value, const char* allowed) {
  throw Error(Errc::config, no_rank,
              std::string(variable) + "='" + value + "' is invalid: expected " + allowed);
}

ProgressMode parse_progress_mode(const std::string& text) {
  if (text == "auto") return ProgressMode::automatic;
  if (text == "on" || text == "1" || text == "yes") return ProgressMode::on;
  if (text == "off" || text == "0" || text == "no") return ProgressMode::off;
  bad_value(kProgressThread, text, "one of auto, on, off");
}

}  // namespace

const char* to_string(ProgressMode mode) {
  switch (mode) {
    case ProgressMode::automatic:
      return "auto";
    case ProgressMode::on:
      return "on";
    case ProgressMode::off:
      return "off";
  }
  return "?";
}

std::size_t parse_size(const char* variable, const std::string& text) {
  constexpr const char* allowed = "a size in bytes with an optional K, M or G suffix";
  if (text.empty() || !std::isdigit(static_cast<unsigned char>(text[0])))
    bad_value(variable, text, allowed);
  errno = 0;
  char* end = nullptr;
  unsigned long long value = std::strtoull(text.c_str(), &end, 10);
  if (errno == ERANGE) bad_value(variable, text, allowed);
  unsigned shift = 0;
  std::string suffix(end);
  if (suffix == "K" || suffix == "k" || suffix == "KB" || suffix == "KiB")
    shift = 10;
  else if (suffix == "M" || suffix == "m" || suffix == "MB" || suffix == "MiB")
    shift = 20;
  else if (suffix == "G" || suffix == "g" || suffix == "GB" || suffix == "GiB")
    shift = 30;
  else if (!suffix.empty())
    bad_value(variable, text, allowed);
  if (value > (std::numeric_limits<std::size_t>::max() >> shift))
    bad_value(variable, text, "a size that fits in 64 bits");
  return static_cast<std::size_t>(value) << shift;
}

Config Config::parse(const std::function<const char*(const char*)>& lookup) {
  Config config;
  if (const char* v = lookup(kProgressThread)) config.progress_thread = parse_progress_mode(v);
  if (const char* v = lookup(kRndvThresh); v && std::strcmp(v, "auto") != 0) {
    config.rndv_threshold = parse_size(kRndvThresh, v);
    if (config.rndv_threshold == 0) bad_value(kRndvThresh, v, "'auto' or a size above 0");
  }
  if (const char* v = lookup(kHeapSize)) {
    config.heap_size = parse_size(kHeapSize, v);
    if (config.heap_size < 4096) bad_value(kHeapSize, v, "a size of at least 4K");
  }
  if (const char* v = lookup(kDsmSize)) {
    config.dsm_size = parse_size(kDsmSize, v);
    if (config.dsm_size == 0 || config.dsm_size % 4096 != 0)
      bad_value(kDsmSize, v, "a positive multiple of 4K");
  }
  if (const char* v = lookup(kDirectAccess)) {
    std::string text(v);
    if (text == "auto" || text == "on")
      config.direct_access = true;
    else if (text == "off")
      config.direct_access = false;
    else
      bad_value(kDirectAccess, text, "one of auto, off");
  }
  return config;
}

Config Config::from_environment() {
  return parse([](const char* name) { return std::getenv(name); });
}

std::vector<std::pair<std::string, std::string>> Config::describe() const {
  return {
      {kProgressThread, to_string(progress_thread)},
      {kRndvThresh, rndv_threshold == 0 ? "auto" : std::to_string(rndv_threshold)},
      {kHeapSize, std::to_string(heap_size)},
      {kDirectAccess, direct_access ? "auto" : "off"},
      {kDsmSize, std::to_string(dsm_size)},
  };
}

std::span<const ConfigVariable> Config::variables() {
  return kVariables;
}

std::vector<std::string> Config::unknown_variables(char* const* env) {
  std::vector<std::string> unknown;
  for (; env && *env; ++env) {
    std::string entry(*env);
    if (entry.rfind("MPIDSM_", 0) != 0) continue;
    std::string name = entry.substr(0, entry.find('='));
    bool known = false;
    for (const auto& variable : kVariables) known = known || name == variable.name;
    if (!known) unknown.push_back(name);
  }
  return unknown;
}

}  // namespace mpidsm
