# mpidsm_add_mpi_test(<name> SOURCES <files...> NP <n...> [ENV <VAR=value...>] [SUFFIX <s>])
#
# Builds one GoogleTest executable linked with the MPI-aware gtest main and
# registers it in CTest once per rank count, as <name>.np<N>[.<suffix>], run
# through mpirun with --oversubscribe so 4 ranks fit on a 2-core machine.
# Every launch gets a timeout so a deadlock fails the test instead of hanging CI.
set(MPIDSM_MPI_TEST_TIMEOUT 300 CACHE STRING "Seconds before an mpirun test is killed")

# Allow mpirun as root (CI runs as root) and keep Open MPI off InfiniBand
# probing that prints warnings on machines without RDMA devices.
set(MPIDSM_MPI_TEST_ENV
    OMPI_ALLOW_RUN_AS_ROOT=1
    OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    OMPI_MCA_btl=self,vader,tcp
    OMPI_MCA_pml=ob1
    OMPI_MCA_rmaps_base_oversubscribe=1)

function(mpidsm_add_mpi_test_executable name)
  cmake_parse_arguments(ARG "" "" "SOURCES" ${ARGN})
  if(NOT TARGET ${name})
    add_executable(${name} ${ARG_SOURCES})
    target_link_libraries(${name} PRIVATE mpidsm_mpi_gtest_main mpidsm::mpidsm)
  endif()
endfunction()

function(mpidsm_add_mpi_test name)
  cmake_parse_arguments(ARG "" "SUFFIX" "SOURCES;NP;ENV" ${ARGN})
  mpidsm_add_mpi_test_executable(${name} SOURCES ${ARG_SOURCES})
  foreach(np IN LISTS ARG_NP)
    set(test_name ${name}.np${np})
    if(ARG_SUFFIX)
      string(APPEND test_name .${ARG_SUFFIX})
    endif()
    add_test(NAME ${test_name}
             COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${np} --oversubscribe
                     ${MPIEXEC_PREFLAGS} $<TARGET_FILE:${name}> ${MPIEXEC_POSTFLAGS})
    set_tests_properties(${test_name} PROPERTIES
                         TIMEOUT ${MPIDSM_MPI_TEST_TIMEOUT}
                         PROCESSORS ${np}
                         ENVIRONMENT "${MPIDSM_MPI_TEST_ENV};${ARG_ENV}")
  endforeach()
endfunction()
