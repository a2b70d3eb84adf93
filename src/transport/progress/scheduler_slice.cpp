#include "scheduler_slice.hpp"

#include <linux/sched.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdint>

namespace mpidsm::detail {
namespace {

// The kernel's struct sched_attr, first version (48 bytes; the ABI keeps
// it). Declared here: glibc declares it only from 2.41, and
// <linux/sched/types.h> clashes with those that do.
struct SchedAttr {
  std::uint32_t size;
  std::uint32_t sched_policy;
  std::uint64_t sched_flags;
  std::int32_t sched_nice;
  std::uint32_t sched_priority;
  std::uint64_t sched_runtime;  // a fair thread's slice in ns (6.12 and later)
  std::uint64_t sched_deadline;
  std::uint64_t sched_period;
};
static_assert(sizeof(SchedAttr) == 48);

bool get_attr(int thread_id, SchedAttr& attr) {
  attr = SchedAttr{};
  return syscall(SYS_sched_getattr, thread_id, &attr, sizeof attr, 0) == 0;
}

}  // namespace

bool request_scheduler_slice(std::chrono::microseconds slice) noexcept {
  SchedAttr attr;
  if (!get_attr(0, attr) || attr.sched_policy != SCHED_OTHER) return false;
  // The same policy and nice value (get_attr read them): only the slice changes.
  attr.size = sizeof attr;
  attr.sched_flags &= SCHED_FLAG_RESET_ON_FORK;
  attr.sched_runtime = static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(slice).count());
  return syscall(SYS_sched_setattr, 0, &attr, 0) == 0;
}

std::chrono::microseconds scheduler_slice_of(int thread_id) noexcept {
  SchedAttr attr;
  if (!get_attr(thread_id, attr)) return {};
  return std::chrono::duration_cast<std::chrono::microseconds>(
      std::chrono::nanoseconds(attr.sched_runtime));
}

}  // namespace mpidsm::detail
