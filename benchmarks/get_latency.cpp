// mpirun -np 2 get_latency [-m [min:]max] [-i n] [-x n] [-f] [--csv]
#include "rma.hpp"

int main(int argc, char** argv) {
  return mpidsm::bench::rma_latency(argc, argv, mpidsm::bench::Direction::get);
}
