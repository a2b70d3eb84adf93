# The benchmarks' command line as OSU's behaves, checked under mpirun with
# 2 ranks: -h and -v print once (rank 0) and exit 0 through MPI_Finalize; a
# bad option prints the problem and the usage once and exits 2; -m MIN:
# keeps the default maximum; -f adds min/max across ranks and iterations.
# Invoked by CTest with -DMPIRUN=<command prefix, ;-list> -DBENCHMARK=<path>.
include(${CMAKE_CURRENT_LIST_DIR}/run_checked.cmake)
function(expect_once text haystack what)
  string(REGEX MATCHALL "${text}" found "${haystack}")
  list(LENGTH found count)
  if(NOT count EQUAL 1)
    message(FATAL_ERROR "${what}: '${text}' printed ${count} times:\n${haystack}")
  endif()
endfunction()

run_checked(0 ${BENCHMARK} -h)
expect_once("usage: mpirun" "${out}" "-h")
run_checked(0 ${BENCHMARK} --help)
expect_once("--message-size" "${out}" "--help")
run_checked(0 ${BENCHMARK} -v)
expect_once("mpidsm Latency Test, mpidsm [0-9]" "${out}" "-v")
run_checked(2 ${BENCHMARK} --no-such-option)
expect_once("unknown option --no-such-option" "${err}" "bad option")
expect_once("usage: mpirun" "${err}" "bad option")
# --ucx belongs to the one-sided benchmarks (check_raw_ucx.cmake) alone.
run_checked(2 ${BENCHMARK} --ucx)
expect_once("unknown option --ucx" "${err}" "--ucx")
run_checked(2 ${BENCHMARK} -m 9:3)
expect_once("MIN is larger than MAX" "${err}" "-m 9:3")
run_checked(0 ${BENCHMARK} --message-size=2097152: --iterations 4 -x 1 -f)
if(NOT out MATCHES "\n2097152 [^\n]*\n4194304 [^\n]* +[0-9]+\n" OR out MATCHES "\n1048576 ")
  message(FATAL_ERROR "-m 2097152: should give the sizes 2097152 and 4194304:\n${out}")
endif()
expect_once("Iterations" "${out}" "-f header")
expect_once("Open MPI v[0-9.]+" "${out}" "header")
expect_once("MPI one-sided osc/[a-z]+" "${out}" "header")
