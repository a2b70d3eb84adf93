# run_checked(<expected exit code> <program> [arguments...]) runs the program
# under ${MPIRUN} (a ;-list), fails unless it exits with that code and leaves
# through MPI_Finalize, and sets `out` and `err` in the caller's scope.
function(run_checked expected_code)
  execute_process(COMMAND ${MPIRUN} ${ARGN} RESULT_VARIABLE code OUTPUT_VARIABLE out
                  ERROR_VARIABLE err)
  if(NOT code EQUAL expected_code)
    message(FATAL_ERROR "'${ARGN}' exited ${code}, expected ${expected_code}:\n${out}\n${err}")
  endif()
  if("${out}${err}" MATCHES "exiting improperly|MPI_ABORT|MPI_ERRORS_ARE_FATAL")
    message(FATAL_ERROR "'${ARGN}' did not leave through MPI_Finalize:\n${out}\n${err}")
  endif()
  set(out "${out}" PARENT_SCOPE)
  set(err "${err}" PARENT_SCOPE)
endfunction()
