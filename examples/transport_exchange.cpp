// Every rank exchanges data with every other rank through mpidsm's transport:
// one-sided puts into a registered region, gets back, a tagged message per
// peer, and a shared counter updated with remote atomics. Everything is
// verified; the exit status says whether it all arrived intact.
//
//   mpirun -np 2 ./transport_exchange [bytes-per-peer]
#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <vector>

#include "mpidsm/mpidsm.hpp"

namespace {

std::uint64_t value_for(int writer, int target, std::size_t i) {
  return (std::uint64_t(writer) << 48) ^ (std::uint64_t(target) << 32) ^ (i * 2654435761u);
}

int run(mpidsm::Runtime& rt, std::size_t words) {
  mpidsm::Transport& t = rt.transport();
  const int me = t.rank(), n = t.size();
  const std::size_t slot = words * sizeof(std::uint64_t);
  // Slot w of every rank's region receives writer w's data; the last word
  // is a counter every rank increments atomically on rank 0.
  mpidsm::MemoryRegion region = t.allocate(slot * n + sizeof(std::uint64_t));
  auto* local = static_cast<std::uint64_t*>(region.local_base());
  local[words * n] = 0;
  t.barrier();

  std::vector<std::vector<std::uint64_t>> out(n, std::vector<std::uint64_t>(words));
  for (int peer = 0; peer < n; ++peer) {
    for (std::size_t i = 0; i < words; ++i) out[peer][i] = value_for(me, peer, i);
    t.put_nbi(peer, region, slot * me, out[peer].data(), slot);
  }
  t.flush_all();
  t.atomic_fetch<std::uint64_t>(mpidsm::AtomicOp::add, 0, region, slot * n, me + 1);
  t.barrier();

  long errors = 0;
  for (int writer = 0; writer < n; ++writer)
    for (std::size_t i = 0; i < words; ++i)
      errors += local[words * writer + i] != value_for(writer, me, i);

  // Read back what we put on the next rank, and tell it our checksum by tag.
  const int next = (me + 1) % n, prev = (me + n - 1) % n;
  std::vector<std::uint64_t> back(words);
  t.get(next, region, slot * me, back.data(), slot);
  errors += back != out[next];
  std::uint64_t sum = std::accumulate(out[next].begin(), out[next].end(), std::uint64_t{0});
  std::uint64_t their_sum = 0;
  mpidsm::Request receive = t.irecv(prev, 1, &their_sum, sizeof their_sum);
  t.send(next, 1, &sum, sizeof sum);
  receive.wait();
  std::uint64_t expected_sum = 0;
  for (std::size_t i = 0; i < words; ++i) expected_sum += value_for(prev, me, i);
  errors += their_sum != expected_sum;

  t.barrier();
  if (me == 0) errors += local[words * n] != std::uint64_t(n) * (n + 1) / 2;
  t.deregister(region);

  long total = 0;
  MPI_Allreduce(&errors, &total, 1, MPI_LONG, MPI_SUM, rt.comm());
  if (me == 0) {
    std::printf(
        "transport_exchange: %d ranks, %zu bytes to every peer by put, get, tag and "
        "atomic: %s (%ld errors)\n",
        n, slot, total == 0 ? "verified" : "FAILED", total);
    std::printf("  progress thread: %s\n", rt.progress_thread_running() ? "running" : "not needed");
  }
  return total == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  std::size_t bytes = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : (1u << 20);
  int status = 1;
  try {
    mpidsm::Runtime rt(MPI_COMM_WORLD);
    status = run(rt, std::max<std::size_t>(1, bytes / sizeof(std::uint64_t)));
  } catch (const mpidsm::Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  MPI_Finalize();
  return status;
}
