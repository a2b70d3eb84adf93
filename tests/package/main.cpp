// A program built outside the tree against the installed package: proves
// find_package(mpidsm) and the mpidsm::mpidsm target work for users.
#include <cstdio>
#include <mpidsm/mpidsm.hpp>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int status = 1;
  {
    mpidsm::Runtime rt(MPI_COMM_WORLD);
    std::printf("package consumer: rank %d of %d, mpidsm %s\n", rt.rank(), rt.size(),
                mpidsm::build::version);
    status = rt.size() >= 1 ? 0 : 1;
  }
  MPI_Finalize();
  return status;
}
