# The benchmarks where MPI gives no window (Open MPI 4.1 across hosts without
# an RDMA network; here every one-sided component is excluded): a benchmark
# whose MPI side needs none runs and says so in its header; one whose MPI side
# needs a window exits 1 through MPI_Finalize, naming MPI's error and the
# setting that gives one, once.
# Invoked by CTest with -DMPIRUN=<command prefix, ;-list> -DTAGGED=<latency>
# -DONE_SIDED=<put_latency>.
include(${CMAKE_CURRENT_LIST_DIR}/run_checked.cmake)

run_checked(0 ${TAGGED} -i 10 -x 1 -m 8)
if(NOT out MATCHES "MPI one-sided none: MPI_Win_allocate of 8 bytes failed on rank 0 \\(MPI_ERR_WIN"
   OR NOT out MATCHES "\n8 +[0-9.]+ +[0-9.]+ ")
  message(FATAL_ERROR "latency without MPI windows: no 'none' in its header or no row:\n${out}")
endif()

run_checked(1 ${ONE_SIDED} -i 10 -x 1 -m 8)
string(REGEX MATCHALL "run with OMPI_MCA_osc=pt2pt" found "${err}")
list(LENGTH found count)
if(NOT count EQUAL 1 OR NOT err MATCHES "MPI_ERR_WIN" OR out MATCHES "\n8 ")
  message(FATAL_ERROR "put_latency without MPI windows: expected MPI's error and the fix "
                      "once and no row, got ${count}:\n${out}\n${err}")
endif()
