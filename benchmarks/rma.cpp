#include "rma.hpp"

#include <algorithm>
#include <cstdio>
#include <memory>

#include "harness.hpp"
#include "raw_ucx.hpp"

namespace mpidsm::bench {
namespace {

// What the raw UCX column measures (Spec::ucx).
const char* const kUcxPattern =
    "ucp_put_nbx / ucp_get_nbx, then ucp_ep_flush_nbx; a put of 128 KiB or more to a peer "
    "reached through messages (tcp): ucp_am_send_nbx by rendezvous, received in place";
static_assert(RawUcx::kLandingBytes == 128 * 1024, "kUcxPattern names the landing size");

// What rank 1's memory holds for the raw UCX gets, and rank 0's source holds
// for every put: the check after the sweep tells them apart from zeroes.
constexpr unsigned char kTargetPattern = 0x5a;
constexpr unsigned char kSourcePattern = 1;  // PageBuffer's filling

// Rank 0 moves `s` bytes to or from rank 1's symmetric buffer (and MPI
// window, and with --ucx its raw UCX memory).
struct RmaPair {
  Pgas& pgas;
  SymmetricArray<std::byte> remote;
  PageBuffer local;
  MpiWindow window;
  Direction direction;
  std::unique_ptr<RawUcx> raw;

  RmaPair(Harness& h, Direction d)
      : pgas(h.pgas()),
        remote(pgas.allocate<std::byte>(h.options().max_size)),
        local(h.options().max_size),
        window(h.options().max_size, MPI_COMM_WORLD),
        direction(d) {
    if (!h.options().ucx) return;
    raw = std::make_unique<RawUcx>(MPI_COMM_WORLD, h.options().max_size,
                                   h.runtime().transport().rma_through_messages(1 - h.rank()));
    std::fill_n(raw->memory(), h.options().max_size, std::byte{kTargetPattern});
  }
  ~RmaPair() { pgas.free(remote); }

  void ucx_nbi(std::size_t s) {
    if (direction == Direction::put)
      raw->put_nbi(1, local.data(), s);
    else
      raw->get_nbi(local.data(), 1, s);
  }
  // Whether the last raw UCX operation of `s` bytes, the last of each
  // repetition, moved the bytes: rank 1 checks its memory after puts and
  // rank 0 its buffer after gets (true on the rank with nothing to check).
  bool ucx_moved(int rank, std::size_t s) const {
    const std::byte* at = direction == Direction::put ? (rank == 1 ? raw->memory() : nullptr)
                                                      : (rank == 0 ? local.data() : nullptr);
    const auto expected = std::byte{direction == Direction::put ? kSourcePattern : kTargetPattern};
    return !at || std::all_of(at, at + s, [&](std::byte b) { return b == expected; });
  }

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

// Runs every size with rank 0 timing `ours`, `theirs` and with --ucx
// `raw_ucx`; others wait in the matching barrier. False when a raw UCX
// operation did not move its bytes (the ranks agree).
template <class Ours, class Theirs, class Raw>
bool sweep(Harness& h, RmaPair& pair, std::size_t bytes_per_op_factor, Ours ours, Theirs theirs,
           Raw raw_ucx) {
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
    if (pair.raw)
      row.ucx = [&](std::size_t s, int n) {
        double t = active ? per_iteration(n, [&](int) { raw_ucx(s); }) : 0;
        pair.raw->barrier();
        return t;
      };
    h.run(row);
  }
  if (!pair.raw) return true;
  const std::size_t largest = h.sizes().back();
  int moved = pair.ucx_moved(h.rank(), largest) ? 1 : 0, all_moved = 0;
  MPI_Allreduce(&moved, &all_moved, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
  if (!moved)
    std::fprintf(stderr, "rank %d: the raw UCX %s of %zu bytes did not move the bytes\n", h.rank(),
                 pair.direction == Direction::put ? "put" : "get", largest);
  return all_moved != 0;
}

}  // namespace

int rma_latency(int argc, char** argv, Direction direction) {
  MPI_Init(&argc, &argv);
  bool moved = true;
  try {
    Harness h(argc, argv,
              {name(direction, false), Unit::latency_us, true, false, 2,
               direction == Direction::put ? "MPI_Put + MPI_Win_flush" : "MPI_Get + MPI_Win_flush",
               2, true, kUcxPattern});
    RmaPair pair(h, direction);
    moved = sweep(
        h, pair, 1, [&](std::size_t s) { pair.mpidsm_blocking(s); },
        [&](std::size_t s) {
          pair.mpi_op(s);
          MPI_Win_flush(1, pair.window.win());
        },
        [&](std::size_t s) {
          pair.ucx_nbi(s);
          pair.raw->complete(1);
        });
  } catch (const std::exception& e) {
    return leave_on_error(argv[0], e);
  }
  MPI_Finalize();
  return moved ? 0 : 1;
}

int rma_bandwidth(int argc, char** argv, Direction direction) {
  MPI_Init(&argc, &argv);
  bool moved = true;
  try {
    Harness h(argc, argv,
              {name(direction, true), Unit::bandwidth_mbs, true, true, 2,
               direction == Direction::put ? "W x MPI_Put + MPI_Win_flush"
                                           : "W x MPI_Get + MPI_Win_flush",
               2, true, kUcxPattern});
    RmaPair pair(h, direction);
    const int window = h.options().window;
    moved = sweep(
        h, pair, window,
        [&](std::size_t s) {
          for (int w = 0; w < window; ++w) pair.mpidsm_nbi(s);
          pair.pgas.quiet();
        },
        [&](std::size_t s) {
          for (int w = 0; w < window; ++w) pair.mpi_op(s);
          MPI_Win_flush(1, pair.window.win());
        },
        [&](std::size_t s) {
          for (int w = 0; w < window; ++w) pair.ucx_nbi(s);
          pair.raw->complete(1);
        });
  } catch (const std::exception& e) {
    return leave_on_error(argv[0], e);
  }
  MPI_Finalize();
  return moved ? 0 : 1;
}

}  // namespace mpidsm::bench
