# Installs the build tree into a scratch prefix, builds tests/package against
# it with find_package(mpidsm), and runs the result with mpirun -np 1.
# Invoked by CTest with -DBUILD_DIR, -DSOURCE_DIR, -DSCRATCH, -DMPIEXEC.
file(REMOVE_RECURSE ${SCRATCH})
foreach(step
    "${CMAKE_COMMAND};--install;${BUILD_DIR};--prefix;${SCRATCH}/prefix"
    "${CMAKE_COMMAND};-S;${SOURCE_DIR}/tests/package;-B;${SCRATCH}/build;-DCMAKE_PREFIX_PATH=${SCRATCH}/prefix"
    "${CMAKE_COMMAND};--build;${SCRATCH}/build"
    "${MPIEXEC};-np;1;${SCRATCH}/build/consumer")
  execute_process(COMMAND ${step} RESULT_VARIABLE result OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT result EQUAL 0)
    message(FATAL_ERROR "step failed (${result}): ${step}\n${out}\n${err}")
  endif()
endforeach()
message(STATUS "${out}")
