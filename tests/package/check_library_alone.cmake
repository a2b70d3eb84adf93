# Builds mpidsm as a user without GoogleTest or libibverbs would: tests,
# benchmarks, examples and the HTML reference off, both packages hidden from
# CMake. The library and mpidsm_info build (unoptimised, to keep this
# short), mpidsm_info says devices are not listed and why, and the library
# does not need libibverbs. Asking for the tests without GoogleTest fails
# with the option that does without them.
# Invoked by CTest with -DSOURCE_DIR, -DSCRATCH, -DMPIEXEC.
file(REMOVE_RECURSE ${SCRATCH})
include(${CMAKE_CURRENT_LIST_DIR}/run_step.cmake)

set(hidden -DCMAKE_DISABLE_FIND_PACKAGE_GTest=ON -DCMAKE_DISABLE_FIND_PACKAGE_Ibverbs=ON)
execute_process(COMMAND ${CMAKE_COMMAND} -S ${SOURCE_DIR} -B ${SCRATCH}/with_tests ${hidden}
                RESULT_VARIABLE result OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(result EQUAL 0 OR NOT err MATCHES "GoogleTest.*-DMPIDSM_BUILD_TESTS=OFF")
  message(FATAL_ERROR "tests without GoogleTest: expected an error naming the option, got "
                      "(${result}):\n${err}")
endif()

run_step(${CMAKE_COMMAND} -S ${SOURCE_DIR} -B ${SCRATCH}/build ${hidden}
         -DMPIDSM_BUILD_TESTS=OFF -DMPIDSM_BUILD_BENCHMARKS=OFF -DMPIDSM_BUILD_EXAMPLES=OFF
         -DMPIDSM_INSTALL_API_DOCS=OFF -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS=-O0)
run_step(${CMAKE_COMMAND} --build ${SCRATCH}/build --target mpidsm_info mpidsm_jia --parallel 2)
file(GLOB_RECURSE info ${SCRATCH}/build/*/mpidsm_info)
run_step(${MPIEXEC} -np 1 ${info} -a)
if(NOT out MATCHES "not listed: mpidsm was built without libibverbs")
  message(FATAL_ERROR "mpidsm_info built without libibverbs did not say so:\n${out}")
endif()
file(GLOB_RECURSE library ${SCRATCH}/build/*/libmpidsm.so)
run_step(readelf -d ${library})
if(out MATCHES "libibverbs")
  message(FATAL_ERROR "libmpidsm built without libibverbs still needs it:\n${out}")
endif()
