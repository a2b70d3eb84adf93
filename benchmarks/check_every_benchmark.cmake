# Every benchmark run with many ranks and mpidsm's default settings (no
# MPIDSM_* variable) ends as a program should: it measures and exits 0, or
# it prints one line saying what to change and exits non-zero through
# MPI_Finalize. Never std::terminate, a signal or a core dump. Invoked by
# CTest with -DMPIRUN=<command prefix, ;-list> -DDIR=<their directory>
# -DBENCHMARKS=<comma-separated names>; each runs with two iterations.
string(REPLACE "," ";" names "${BENCHMARKS}")
foreach(name IN LISTS names)
  set(benchmark "${DIR}/${name}")
  if(name STREQUAL "startup_scaling")
    set(arguments -r 1)
  elseif(name STREQUAL "shmem_osu_mpidsm")
    set(arguments put_bw 2)
  elseif(name STREQUAL "dsm_footprint")
    set(arguments -s 256M -p 4 -l 64)
  else()
    set(arguments -i 2 -x 1)
  endif()
  execute_process(COMMAND ${MPIRUN} ${benchmark} ${arguments} RESULT_VARIABLE code
                  OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 240)
  set(both "${out}${err}")
  if(NOT code MATCHES "^[0-9]+$")
    message(FATAL_ERROR "${name}: ${code}\n${both}")
  endif()
  if(both MATCHES "terminate called|core dumped|Segmentation fault|Aborted|signal [0-9]+|exiting improperly|MPI_ABORT")
    message(FATAL_ERROR "${name} ended in a crash (exit ${code}):\n${both}")
  endif()
  if(NOT code EQUAL 0)
    # One line of explanation from the program itself (mpirun adds its own
    # note about the exit code after it).
    string(REGEX MATCHALL "[^\n]*(MPIDSM_|mpirun -np|raise|needs)[^\n]*" lines "${err}")
    if(NOT lines)
      message(FATAL_ERROR "${name} exited ${code} without saying why:\n${both}")
    endif()
  endif()
  message(STATUS "${name}: exit ${code}")
endforeach()
