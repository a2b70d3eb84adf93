# Sourced by the scripts: build directory and the mpirun settings this
# project's machines need (root in CI, no RDMA device, 2 cores).
MPIDSM_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD_DIR=${BUILD_DIR:-$MPIDSM_ROOT/build}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# Open MPI's own traffic over shared memory/tcp: its UCX PML refuses to start
# without InfiniBand and would only print warnings.
export OMPI_MCA_pml=${OMPI_MCA_pml:-ob1} OMPI_MCA_btl=${OMPI_MCA_btl:-self,vader,tcp}
# MPI-3 RMA for the benchmarks' MPI column: osc/sm is Open MPI 4.1's fastest on one
# node; osc/rdma over vader crashes in MPI_Compare_and_swap here.
# (MPIDSM_DEFAULT_OSC tells scripts that run again with other needs, such
# as benchmarks/run-suite --hosts, that the choice is this default, not the user's.)
MPIDSM_DEFAULT_OSC=sm,ucx,pt2pt
export OMPI_MCA_osc=${OMPI_MCA_osc:-$MPIDSM_DEFAULT_OSC}
MPIRUN=(mpirun --oversubscribe)
