// mpirun -np 2 latency [-m [min:]max] [-i n] [-x n] [-f] [--csv]
#include "tagged.hpp"

int main(int argc, char** argv) {
  return mpidsm::bench::tagged_latency(argc, argv);
}
