// Put-with-signal latency, half a round trip: rank 0 puts data with a signal
// to rank 1, which waits for the signal and answers the same way. The MPI
// equivalent is the MPI-3 idiom: MPI_Put of the data, MPI_Win_flush, an
// MPI_Accumulate(MPI_REPLACE) of the flag and MPI_Win_flush, the target
// polling its flag with MPI_Fetch_and_op(MPI_NO_OP).
//   mpirun -np 2 put_signal_latency [-m [min:]max] [-i n] [-x n] [-f] [--csv]
#include <cstdint>

#include "harness.hpp"

using namespace mpidsm;
using namespace mpidsm::bench;

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  try {
    Harness h(argc, argv,
              {"Put Signal Latency", Unit::latency_us, true, false, 2,
               "MPI_Put; flush; MPI_Accumulate; flush", 2, true});
    Pgas& p = h.pgas();
    const std::size_t max = h.options().max_size;
    const int me = h.rank();
    auto data = p.allocate<std::byte>(max);
    auto signal = p.allocate<std::uint64_t>(1);
    PageBuffer source(max);
    // MPI window: the flag in the first 8 bytes, the data after it.
    MpiWindow window(max + 8, MPI_COMM_WORLD);
    MPI_Win win = window.win();
    std::uint64_t round = 0;  // shared by both measurements: flags only grow
    h.print_header();
    for (std::size_t size : h.sizes()) {
      Row row;
      row.size = size;
      row.mpidsm = [&](std::size_t s, int n) {
        if (me > 1) return 0.0;
        const int peer = 1 - me;
        return per_iteration(n,
                             [&](int) {
                               ++round;
                               if (me == 0) {
                                 p.put_signal(data.at(peer), source.data(), s, signal.at(peer),
                                              round, SignalOp::set);
                                 p.wait_until(signal.local(), Compare::ge, round);
                               } else {
                                 p.wait_until(signal.local(), Compare::ge, round);
                                 p.put_signal(data.at(peer), source.data(), s, signal.at(peer),
                                              round, SignalOp::set);
                               }
                             }) /
               2;
      };
      row.mpi = [&](std::size_t s, int n) {
        if (me > 1) return 0.0;
        const int peer = 1 - me;
        auto signal_and_data = [&] {
          MPI_Put(source.data(), int(s), MPI_BYTE, peer, 8, int(s), MPI_BYTE, win);
          MPI_Win_flush(peer, win);
          MPI_Accumulate(&round, 1, MPI_UINT64_T, peer, 0, 1, MPI_UINT64_T, MPI_REPLACE, win);
          MPI_Win_flush(peer, win);
        };
        auto wait_flag = [&] {
          std::uint64_t seen = 0, ignored = 0;
          do {
            MPI_Fetch_and_op(&ignored, &seen, MPI_UINT64_T, me, 0, MPI_NO_OP, win);
            MPI_Win_flush(me, win);
          } while (seen < round);
        };
        return per_iteration(n,
                             [&](int) {
                               ++round;
                               if (me == 0) {
                                 signal_and_data();
                                 wait_flag();
                               } else {
                                 wait_flag();
                                 signal_and_data();
                               }
                             }) /
               2;
      };
      h.run(row);
    }
    p.free(signal);
    p.free(data);
  } catch (const std::exception& e) {
    return mpidsm::bench::leave_on_error(argv[0], e);
  }
  MPI_Finalize();
}
