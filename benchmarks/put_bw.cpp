// mpirun -np 2 put_bw [-m [min:]max] [-i n] [-x n] [-W n] [-f] [--csv]
#include "rma.hpp"

int main(int argc, char** argv) {
  return mpidsm::bench::rma_bandwidth(argc, argv, mpidsm::bench::Direction::put);
}
