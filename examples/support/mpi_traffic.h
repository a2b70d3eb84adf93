/* The MPI traffic of this process, counted through MPI's profiling
 * interface, so an example can set its MPI twin's messages and bytes beside
 * the DSM's (and count the MPI calls mpidsm itself makes, such as the DSM
 * barrier's exchange across nodes). Linked into an example, its wrappers
 * take every MPI call of the process, mpidsm's included (the examples export
 * them: CMake's ENABLE_EXPORTS).
 *
 * A point-to-point send or one-sided operation counts one message of its
 * bytes at the rank that starts it. A collective counts what its data needs
 * at each rank, whatever algorithm the MPI library picks: an allgather(v) or
 * alltoall(v) P-1 messages of the other ranks' parts at each rank; a
 * broadcast or scatter(v) one message at each rank but the root, a reduce
 * or gather(v) one at each rank but the root; an allreduce ceil(log2 P)
 * messages of the whole vector at each rank (recursive doubling); a barrier
 * ceil(log2 P) empty messages at each rank. Summed over the ranks these are
 * the least traffic each operation takes, which is what a twin written with
 * MPI costs by construction. */
#ifndef MPIDSM_EXAMPLES_MPI_TRAFFIC_H
#define MPIDSM_EXAMPLES_MPI_TRAFFIC_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
  uint64_t messages;
  uint64_t bytes;
} mpi_traffic_t;

/* What this process has sent (as above) since MPI_Init. */
mpi_traffic_t mpi_traffic(void);

#ifdef __cplusplus
}
#endif

#endif
