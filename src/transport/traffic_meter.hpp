// Counts what a rank sends (Transport::traffic): every thread that starts
// an operation adds to it, so the counters are atomics, on a cache line of
// their own so that counting never slows the fields the progress thread
// writes. Relaxed adds: the figures are read between phases, after a
// synchronisation that orders them.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "mpidsm/transport.hpp"

namespace mpidsm::detail {

class TrafficMeter {
 public:
  void note(std::size_t bytes) noexcept {
    messages_.fetch_add(1, std::memory_order_relaxed);
    bytes_.fetch_add(bytes, std::memory_order_relaxed);
  }
  TransportTraffic read() const noexcept {
    return {messages_.load(std::memory_order_relaxed), bytes_.load(std::memory_order_relaxed)};
  }

 private:
  alignas(64) std::atomic<std::uint64_t> messages_{0};
  std::atomic<std::uint64_t> bytes_{0};
};

}  // namespace mpidsm::detail
