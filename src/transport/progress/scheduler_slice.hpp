// The progress thread asks the kernel for a short scheduling slice so that
// it preempts the rank's computing thread as soon as a request wakes it.
//
// Since Linux 6.6 the fair scheduler is EEVDF: a woken thread preempts the
// running one only when its virtual deadline comes first, and a thread's
// deadline lies one slice past its eligible time (by default 0.7 ms times
// 1 + log2 of the CPUs: 1.4 ms on a 2-core guest). The progress thread,
// woken by a peer's request while this rank computes, thus often waited
// for the computing thread's slice to end, at a tick: across 1+1 simulated
// hosts (kernel 6.18, 2 cores) 12-36 of about 300 page fetches per rank of
// jia_lu took 1.6-6.4 ms, and jia_lu's DSM/MPI was 1.22 (1.12-1.33). Since
// Linux 6.12 a thread may ask for a slice of its own
// (sched_attr::sched_runtime, 0.1-100 ms), and a shorter one than the
// running thread's lets it preempt at once: with 100 us, 0-10 fetches took
// that long and jia_lu gave 1.10 (1.03-1.13). Serving a request fits well
// within such a slice.
//
// Older kernels accept the request and ignore it. Nothing else of the
// thread changes: its policy and nice value stay as they were (a thread the
// user placed under SCHED_BATCH, SCHED_IDLE or a real-time policy is left
// alone), and a refusal leaves the kernel's slice, as without the request.
#pragma once

#include <chrono>

namespace mpidsm::detail {

// Asks for `slice` (0: the kernel's default) for the calling thread, if it
// runs under SCHED_OTHER. Returns whether the kernel accepted the request
// (on kernels before 6.12 that means it was ignored).
bool request_scheduler_slice(std::chrono::microseconds slice) noexcept;

// The slice of thread `thread_id` (0: the calling thread) as the kernel
// reports it (6.12 and later), or zero where it reports none.
std::chrono::microseconds scheduler_slice_of(int thread_id) noexcept;

}  // namespace mpidsm::detail
