// Hooks for tests of behaviour that real hardware or the kernel cause only
// rarely: a local failure at a chosen point of a collective operation, a
// CPU that does not report whether a fault was a write, and a fetcher
// descheduled between reserving a copy-log slot and writing it. Internal (no
// public header declares them); each costs one relaxed load where checked.
#pragma once

namespace mpidsm::detail {

enum class FailurePoint { barrier_release, sync_release, allocate_homes, free_unmap, count };

// The next pass of this process through `point` throws Error(no_memory).
void inject_failure(FailurePoint point);
// Throws (once) when a failure was injected at `point`.
void fail_if_injected(FailurePoint point, int rank);

// false: the fault handler treats every access as of unknown kind, as on
// CPUs without x86-64's page-fault error code.
void set_fault_access_reported(bool reported);
bool fault_access_reported();

// false: faults that reach UCX are handed to the fault servicer's thread,
// as where no detour can be taken (fault_detour.hpp). Read when a Dsm is
// created.
void set_fault_detours_allowed(bool allowed);
bool fault_detours_allowed();

// The next fetch of this process that reserves copy-log slots (sharing.hpp)
// sleeps `milliseconds` before writing them.
void delay_next_copy_log_entry(unsigned milliseconds);
// Sleeps as delay_next_copy_log_entry asked, once.
void delay_copy_log_entry_if_asked();

}  // namespace mpidsm::detail
