/* MPI's profiling interface counts this process's MPI traffic (see
 * mpi_traffic.h for what counts how). Every wrapper passes its call on to
 * the PMPI_ entry point unchanged; counting happens only for calls MPI
 * accepted. */
#include "mpi_traffic.h"

#include <mpi.h>
#include <stdatomic.h>

/* mpidsm may call MPI from more than one thread. */
static _Atomic uint64_t messages_sent, bytes_sent;

mpi_traffic_t mpi_traffic(void) {
  mpi_traffic_t t = {atomic_load_explicit(&messages_sent, memory_order_relaxed),
                     atomic_load_explicit(&bytes_sent, memory_order_relaxed)};
  return t;
}

static void note(int error, uint64_t messages, uint64_t bytes) {
  if (error != MPI_SUCCESS) return;
  atomic_fetch_add_explicit(&messages_sent, messages, memory_order_relaxed);
  atomic_fetch_add_explicit(&bytes_sent, bytes, memory_order_relaxed);
}

static uint64_t bytes_of(int count, MPI_Datatype type) {
  int size = 0;
  if (count <= 0 || type == MPI_DATATYPE_NULL || PMPI_Type_size(type, &size) != MPI_SUCCESS)
    return 0;
  return (uint64_t)count * (uint64_t)size;
}

static int ranks_of(MPI_Comm comm) {
  int ranks = 1;
  PMPI_Comm_size(comm, &ranks);
  return ranks;
}

static int rank_in(MPI_Comm comm) {
  int rank = 0;
  PMPI_Comm_rank(comm, &rank);
  return rank;
}

static uint64_t log2_ceiling(int ranks) {
  uint64_t rounds = 0;
  for (int reach = 1; reach < ranks; reach *= 2) ++rounds;
  return rounds;
}

/* The bytes of the other ranks' parts of a v-collective. */
static uint64_t others_parts(const int counts[], MPI_Datatype type, MPI_Comm comm) {
  const int ranks = ranks_of(comm), me = rank_in(comm);
  uint64_t bytes = 0;
  for (int r = 0; r < ranks; ++r)
    if (r != me) bytes += bytes_of(counts[r], type);
  return bytes;
}

/* --- point to point: one message at the sender --- */
#define SEND_WRAPPER(name)                                                                         \
  int MPI_##name(const void* buf, int count, MPI_Datatype type, int dest, int tag,                 \
                 MPI_Comm comm) {                                                                  \
    const int error = PMPI_##name(buf, count, type, dest, tag, comm);                              \
    note(error, dest == MPI_PROC_NULL ? 0 : 1, dest == MPI_PROC_NULL ? 0 : bytes_of(count, type)); \
    return error;                                                                                  \
  }
#define ISEND_WRAPPER(name)                                                                        \
  int MPI_##name(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,  \
                 MPI_Request* request) {                                                           \
    const int error = PMPI_##name(buf, count, type, dest, tag, comm, request);                     \
    note(error, dest == MPI_PROC_NULL ? 0 : 1, dest == MPI_PROC_NULL ? 0 : bytes_of(count, type)); \
    return error;                                                                                  \
  }
SEND_WRAPPER(Send)
SEND_WRAPPER(Ssend)
SEND_WRAPPER(Rsend)
SEND_WRAPPER(Bsend)
ISEND_WRAPPER(Isend)
ISEND_WRAPPER(Issend)
ISEND_WRAPPER(Irsend)
ISEND_WRAPPER(Ibsend)

int MPI_Sendrecv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag,
                 void* recvbuf, int recvcount, MPI_Datatype recvtype, int source, int recvtag,
                 MPI_Comm comm, MPI_Status* status) {
  const int error = PMPI_Sendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount,
                                  recvtype, source, recvtag, comm, status);
  note(error, dest == MPI_PROC_NULL ? 0 : 1,
       dest == MPI_PROC_NULL ? 0 : bytes_of(sendcount, sendtype));
  return error;
}

int MPI_Sendrecv_replace(void* buf, int count, MPI_Datatype type, int dest, int sendtag, int source,
                         int recvtag, MPI_Comm comm, MPI_Status* status) {
  const int error =
      PMPI_Sendrecv_replace(buf, count, type, dest, sendtag, source, recvtag, comm, status);
  note(error, dest == MPI_PROC_NULL ? 0 : 1, dest == MPI_PROC_NULL ? 0 : bytes_of(count, type));
  return error;
}

/* --- one-sided: one message at the origin --- */
int MPI_Put(const void* origin, int count, MPI_Datatype type, int target, MPI_Aint disp,
            int target_count, MPI_Datatype target_type, MPI_Win win) {
  const int error = PMPI_Put(origin, count, type, target, disp, target_count, target_type, win);
  note(error, 1, bytes_of(count, type));
  return error;
}

int MPI_Get(void* origin, int count, MPI_Datatype type, int target, MPI_Aint disp, int target_count,
            MPI_Datatype target_type, MPI_Win win) {
  const int error = PMPI_Get(origin, count, type, target, disp, target_count, target_type, win);
  note(error, 1, bytes_of(count, type));
  return error;
}

int MPI_Accumulate(const void* origin, int count, MPI_Datatype type, int target, MPI_Aint disp,
                   int target_count, MPI_Datatype target_type, MPI_Op op, MPI_Win win) {
  const int error =
      PMPI_Accumulate(origin, count, type, target, disp, target_count, target_type, op, win);
  note(error, 1, bytes_of(count, type));
  return error;
}

int MPI_Fetch_and_op(const void* origin, void* result, MPI_Datatype type, int target, MPI_Aint disp,
                     MPI_Op op, MPI_Win win) {
  const int error = PMPI_Fetch_and_op(origin, result, type, target, disp, op, win);
  note(error, 1, bytes_of(1, type));
  return error;
}

int MPI_Compare_and_swap(const void* origin, const void* compare, void* result, MPI_Datatype type,
                         int target, MPI_Aint disp, MPI_Win win) {
  const int error = PMPI_Compare_and_swap(origin, compare, result, type, target, disp, win);
  note(error, 1, bytes_of(1, type));
  return error;
}

/* --- collectives: what their data needs at each rank --- */
int MPI_Barrier(MPI_Comm comm) {
  const int error = PMPI_Barrier(comm);
  note(error, log2_ceiling(ranks_of(comm)), 0);
  return error;
}

int MPI_Ibarrier(MPI_Comm comm, MPI_Request* request) {
  const int error = PMPI_Ibarrier(comm, request);
  note(error, log2_ceiling(ranks_of(comm)), 0);
  return error;
}

int MPI_Bcast(void* buffer, int count, MPI_Datatype type, int root, MPI_Comm comm) {
  const int error = PMPI_Bcast(buffer, count, type, root, comm);
  const int receives = rank_in(comm) != root;
  note(error, (uint64_t)receives, receives ? bytes_of(count, type) : 0);
  return error;
}

int MPI_Reduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op,
               int root, MPI_Comm comm) {
  const int error = PMPI_Reduce(sendbuf, recvbuf, count, type, op, root, comm);
  const int sends = rank_in(comm) != root;
  note(error, (uint64_t)sends, sends ? bytes_of(count, type) : 0);
  return error;
}

int MPI_Allreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op,
                  MPI_Comm comm) {
  const int error = PMPI_Allreduce(sendbuf, recvbuf, count, type, op, comm);
  const uint64_t rounds = log2_ceiling(ranks_of(comm));
  note(error, rounds, rounds * bytes_of(count, type));
  return error;
}

int MPI_Iallreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op,
                   MPI_Comm comm, MPI_Request* request) {
  const int error = PMPI_Iallreduce(sendbuf, recvbuf, count, type, op, comm, request);
  const uint64_t rounds = log2_ceiling(ranks_of(comm));
  note(error, rounds, rounds * bytes_of(count, type));
  return error;
}

int MPI_Gather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
               int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
  const int error =
      PMPI_Gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
  const int sends = rank_in(comm) != root;
  note(error, (uint64_t)sends, sends ? bytes_of(sendcount, sendtype) : 0);
  return error;
}

int MPI_Gatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                MPI_Comm comm) {
  const int error =
      PMPI_Gatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm);
  const int sends = rank_in(comm) != root;
  note(error, (uint64_t)sends, sends ? bytes_of(sendcount, sendtype) : 0);
  return error;
}

int MPI_Scatter(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
  const int error =
      PMPI_Scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
  const int receives = rank_in(comm) != root;
  note(error, (uint64_t)receives, receives ? bytes_of(recvcount, recvtype) : 0);
  return error;
}

int MPI_Scatterv(const void* sendbuf, const int sendcounts[], const int displs[],
                 MPI_Datatype sendtype, void* recvbuf, int recvcount, MPI_Datatype recvtype,
                 int root, MPI_Comm comm) {
  const int error = PMPI_Scatterv(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount,
                                  recvtype, root, comm);
  const int receives = rank_in(comm) != root;
  note(error, (uint64_t)receives, receives ? bytes_of(recvcount, recvtype) : 0);
  return error;
}

int MPI_Allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                  int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  const int error =
      PMPI_Allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
  const uint64_t others = (uint64_t)ranks_of(comm) - 1;
  note(error, others, others * bytes_of(recvcount, recvtype));
  return error;
}

int MPI_Iallgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                   int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
  const int error =
      PMPI_Iallgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request);
  const uint64_t others = (uint64_t)ranks_of(comm) - 1;
  note(error, others, others * bytes_of(recvcount, recvtype));
  return error;
}

int MPI_Allgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                   const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                   MPI_Comm comm) {
  const int error =
      PMPI_Allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm);
  note(error, (uint64_t)ranks_of(comm) - 1, others_parts(recvcounts, recvtype, comm));
  return error;
}

int MPI_Iallgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                    const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                    MPI_Comm comm, MPI_Request* request) {
  const int error = PMPI_Iallgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                                     recvtype, comm, request);
  note(error, (uint64_t)ranks_of(comm) - 1, others_parts(recvcounts, recvtype, comm));
  return error;
}

int MPI_Alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                 int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  const int error = PMPI_Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
  const uint64_t others = (uint64_t)ranks_of(comm) - 1;
  note(error, others, others * bytes_of(recvcount, recvtype));
  return error;
}

int MPI_Alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[],
                  MPI_Datatype sendtype, void* recvbuf, const int recvcounts[], const int rdispls[],
                  MPI_Datatype recvtype, MPI_Comm comm) {
  const int error = PMPI_Alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
                                   rdispls, recvtype, comm);
  note(error, (uint64_t)ranks_of(comm) - 1, others_parts(recvcounts, recvtype, comm));
  return error;
}
