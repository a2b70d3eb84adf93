// mpirun -np 2 bw [-m [min:]max] [-i n] [-x n] [-W n] [-f] [--csv]
#include "tagged.hpp"

int main(int argc, char** argv) {
  return mpidsm::bench::tagged_bandwidth(argc, argv);
}
