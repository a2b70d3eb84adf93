// Whether another process of this kernel still runs: what PeerLiveness and
// the start-up watch look at for the peers they can see (the same kernel and
// PID namespace). Only system calls and stack buffers: these run inside
// waits the DSM's fault handler makes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

namespace mpidsm::detail {

// Which kernel, and which PID namespace in it: pids compare only within both.
std::uint64_t pid_space();

// Gone: no such process, or a zombie nobody reaped yet.
bool process_gone(std::int64_t pid);

// For errors: "rank 2 is gone (its process died)", "ranks 0 and 2 are gone
// (their processes died)".
std::string describe_gone(std::span<const std::size_t> ranks);

}  // namespace mpidsm::detail
