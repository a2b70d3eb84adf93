#include "rma.hpp"

#include "harness.hpp"

namespace mpidsm::bench {
namespace {

// Rank 0 moves `s` bytes to or from rank 1's symmetric buffer (and MPI window).
struct RmaPair {
  Pgas& pgas;
  SymmetricArray<std::byte> remote;
  PageBuffer local;
  MpiWindow window;
  Direction direction;

  RmaPair(Harness& h, Direction d)
      : pgas(h.pgas()),
        remote(pgas.allocate<std::byte>(h.options().max_size)),
        local(h.options().max_size),
        window(h.options().max_size, MPI_COMM_WORLD),
        direction(d) {}
  ~RmaPair() { pgas.free(remote); }

  void mpidsm_nbi(std::size_t s) {
    if (direction == Direction::put)
      pgas.put_nbi(remote.at(1), local.data(), s);
    else
      pgas.get_nbi(local.data(), remote.at(1), s);
  }
  void mpidsm_blocking(std::size_t s) {
    if (direction == Direction::put) {
      pgas.put(remote.at(1), local.data(), s);
      pgas.quiet();  // remote completion, as MPI_Win_flush gives
    } else {
      pgas.get(local.data(), remote.at(1), s);
    }
  }
  void mpi_op(std::size_t s) {
    if (direction == Direction::put)
      MPI_Put(local.data(), int(s), MPI_BYTE, 1, 0, int(s), MPI_BYTE, window.win());
    else
      MPI_Get(local.data(), int(s), MPI_BYTE, 1, 0, int(s), MPI_BYTE, window.win());
  }
};

const char* name(Direction d, bool bandwidth) {
  if (d == Direction::put) return bandwidth ? "Put Bandwidth" : "Put Latency";
  return bandwidth ? "Get Bandwidth" : "Get Latency";
}

// Runs every size with rank 0 timing `ours` and `theirs`; others wait in the
// matching barrier.
template <class Ours, class Theirs>
void sweep(Harness& h, std::size_t bytes_per_op_factor, Ours ours, Theirs theirs) {
  Pgas& p = h.pgas();
  const bool active = h.rank() == 0;
  h.print_header();
  for (std::size_t size : h.sizes()) {
    Row row;
    row.size = size;
    row.bytes = size * bytes_per_op_factor;
    row.mpidsm = [&](std::size_t s, int n) {
      double t = active ? per_iteration(n, [&](int) { ours(s); }) : 0;
      p.barrier();
      return t;
    };
    row.mpi = [&](std::size_t s, int n) {
      double t = active ? per_iteration(n, [&](int) { theirs(s); }) : 0;
      MPI_Barrier(MPI_COMM_WORLD);
      return t;
    };
    h.run(row);
  }
}

}  // namespace

int rma_latency(int argc, char** argv, Direction direction) {
  MPI_Init(&argc, &argv);
  {
    Harness h(argc, argv,
              {name(direction, false), Unit::latency_us, true, false, 2,
               direction == Direction::put ? "MPI_Put + MPI_Win_flush" : "MPI_Get + MPI_Win_flush",
               2, true});
    RmaPair pair(h, direction);
    sweep(
        h, 1, [&](std::size_t s) { pair.mpidsm_blocking(s); },
        [&](std::size_t s) {
          pair.mpi_op(s);
          MPI_Win_flush(1, pair.window.win());
        });
  }
  MPI_Finalize();
  return 0;
}

int rma_bandwidth(int argc, char** argv, Direction direction) {
  MPI_Init(&argc, &argv);
  {
    Harness h(argc, argv,
              {name(direction, true), Unit::bandwidth_mbs, true, true, 2,
               direction == Direction::put ? "W x MPI_Put + MPI_Win_flush"
                                           : "W x MPI_Get + MPI_Win_flush",
               2, true});
    RmaPair pair(h, direction);
    const int window = h.options().window;
    sweep(
        h, window,
        [&](std::size_t s) {
          for (int w = 0; w < window; ++w) pair.mpidsm_nbi(s);
          pair.pgas.quiet();
        },
        [&](std::size_t s) {
          for (int w = 0; w < window; ++w) pair.mpi_op(s);
          MPI_Win_flush(1, pair.window.win());
        });
  }
  MPI_Finalize();
  return 0;
}

}  // namespace mpidsm::bench
