#include "tagged.hpp"

#include <span>
#include <vector>

#include "harness.hpp"

namespace mpidsm::bench {
namespace {

constexpr int kTag = 1;
constexpr int kAckTag = 2;

}  // namespace

int tagged_latency(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  try {
    Harness h(argc, argv, {"Latency", Unit::latency_us, true, false, 2, "MPI_Send + MPI_Recv", 2});
    Messaging& m = h.messaging();
    PageBuffer out(h.options().max_size), in(h.options().max_size);
    const int me = h.rank();
    h.print_header();
    for (std::size_t size : h.sizes()) {
      Row row;
      row.size = size;
      // Half a round trip, as osu_latency reports.
      row.mpidsm = [&](std::size_t s, int n) {
        std::span<const std::byte> send(out.data(), s);
        std::span<std::byte> receive(in.data(), s);
        if (me > 1) return 0.0;
        return per_iteration(n,
                             [&](int) {
                               if (me == 0) {
                                 m.send(1, kTag, send);
                                 m.recv(1, kTag, receive);
                               } else {
                                 m.recv(0, kTag, receive);
                                 m.send(0, kTag, send);
                               }
                             }) /
               2;
      };
      row.mpi = [&](std::size_t s, int n) {
        if (me > 1) return 0.0;
        return per_iteration(n,
                             [&](int) {
                               if (me == 0) {
                                 MPI_Send(out.data(), int(s), MPI_BYTE, 1, kTag, MPI_COMM_WORLD);
                                 MPI_Recv(in.data(), int(s), MPI_BYTE, 1, kTag, MPI_COMM_WORLD,
                                          MPI_STATUS_IGNORE);
                               } else {
                                 MPI_Recv(in.data(), int(s), MPI_BYTE, 0, kTag, MPI_COMM_WORLD,
                                          MPI_STATUS_IGNORE);
                                 MPI_Send(out.data(), int(s), MPI_BYTE, 0, kTag, MPI_COMM_WORLD);
                               }
                             }) /
               2;
      };
      h.run(row);
    }
  } catch (const std::exception& e) {
    return leave_on_error(argv[0], e);
  }
  MPI_Finalize();
  return 0;
}

int tagged_bandwidth(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  try {
    Harness h(argc, argv,
              {"Bandwidth", Unit::bandwidth_mbs, true, true, 2, "W x MPI_Isend + MPI_Waitall", 2});
    Messaging& m = h.messaging();
    const int window = h.options().window;
    const std::size_t max = h.options().max_size;
    // Every window slot receives into the same buffer, as osu_bw does.
    PageBuffer out(max), in(max);
    const int me = h.rank();
    int ack = 0;
    h.print_header();
    for (std::size_t size : h.sizes()) {
      Row row;
      row.size = size;
      row.bytes = size * window;
      row.mpidsm = [&](std::size_t s, int n) {
        if (me > 1) return 0.0;
        std::vector<Request> requests(window);
        return per_iteration(n, [&](int) {
          if (me == 0) {
            for (int w = 0; w < window; ++w)
              requests[w] = m.isend(1, kTag, std::span<const std::byte>(out.data(), s));
            for (auto& r : requests) r.wait();
            m.recv(1, kAckTag, std::span<int>(&ack, 1));
          } else {
            for (int w = 0; w < window; ++w)
              requests[w] = m.irecv(0, kTag, std::span<std::byte>(in.data(), s));
            for (auto& r : requests) r.wait();
            m.send(0, kAckTag, std::span<const int>(&ack, 1));
          }
        });
      };
      row.mpi = [&](std::size_t s, int n) {
        if (me > 1) return 0.0;
        std::vector<MPI_Request> requests(window);
        return per_iteration(n, [&](int) {
          if (me == 0) {
            for (int w = 0; w < window; ++w)
              MPI_Isend(out.data(), int(s), MPI_BYTE, 1, kTag, MPI_COMM_WORLD, &requests[w]);
            MPI_Waitall(window, requests.data(), MPI_STATUSES_IGNORE);
            MPI_Recv(&ack, 1, MPI_INT, 1, kAckTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
          } else {
            for (int w = 0; w < window; ++w)
              MPI_Irecv(in.data(), int(s), MPI_BYTE, 0, kTag, MPI_COMM_WORLD, &requests[w]);
            MPI_Waitall(window, requests.data(), MPI_STATUSES_IGNORE);
            MPI_Send(&ack, 1, MPI_INT, 0, kAckTag, MPI_COMM_WORLD);
          }
        });
      };
      h.run(row);
    }
  } catch (const std::exception& e) {
    return leave_on_error(argv[0], e);
  }
  MPI_Finalize();
  return 0;
}

}  // namespace mpidsm::bench
