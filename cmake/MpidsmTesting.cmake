# mpidsm_add_mpi_test(<name> SOURCES <files...> NP <n...> [BARE] [ENV <VAR=value...>]
#                     [SUFFIX <s>] [ARGS <program arguments...>] [TIMEOUT <seconds>])
#
# Builds one GoogleTest executable linked with the MPI-aware gtest main and
# registers it in CTest once per rank count, as <name>.np<N>[.<suffix>], run
# through mpirun with --oversubscribe so 4 ranks fit on a 2-core machine.
# Every launch gets a timeout so a deadlock fails the test instead of hanging CI.
#
# The environment of each test is stated here and nowhere else: run-with-env
# drops every OMPI_*, PMIX_*, PRTE_*, UCX_* and MPIDSM_* variable the caller's
# shell holds, then sets the project's Open MPI settings (or, with BARE, only
# what mpirun needs to run as root, as a user would run it) plus ENV.
set(MPIDSM_MPI_TEST_TIMEOUT 300 CACHE STRING "Seconds before an mpirun test is killed")

# mpirun as root (CI runs as root); nothing else.
set(MPIDSM_MPI_BARE_ENV OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1)
# The project's settings (scripts/env.sh): Open MPI's traffic over ob1 (its
# UCX PML refuses to start without InfiniBand and would only print warnings),
# and osc/sm first for the benchmarks' MPI column.
set(MPIDSM_MPI_PROJECT_ENV
    ${MPIDSM_MPI_BARE_ENV}
    OMPI_MCA_btl=self,vader,tcp
    OMPI_MCA_pml=ob1
    OMPI_MCA_osc=sm,ucx,pt2pt
    OMPI_MCA_rmaps_base_oversubscribe=1)
set(MPIDSM_RUN_WITH_ENV ${CMAKE_CURRENT_LIST_DIR}/run-with-env)

function(mpidsm_add_mpi_test_executable name)
  cmake_parse_arguments(ARG "" "" "SOURCES" ${ARGN})
  if(NOT TARGET ${name})
    add_executable(${name} ${ARG_SOURCES})
    target_link_libraries(${name} PRIVATE mpidsm_mpi_gtest_main mpidsm::mpidsm)
  endif()
endfunction()

# The command prefix that runs `np` ranks with the given environment.
function(mpidsm_mpirun_command out np bare)
  if(bare)
    set(settings ${MPIDSM_MPI_BARE_ENV})
  else()
    set(settings ${MPIDSM_MPI_PROJECT_ENV})
  endif()
  set(${out} ${MPIDSM_RUN_WITH_ENV} ${settings} ${ARGN} --
      ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${np} --oversubscribe ${MPIEXEC_PREFLAGS}
      PARENT_SCOPE)
endfunction()

function(mpidsm_add_mpi_test name)
  cmake_parse_arguments(ARG "BARE" "SUFFIX;TIMEOUT" "SOURCES;NP;ENV;ARGS" ${ARGN})
  if(NOT ARG_TIMEOUT)
    set(ARG_TIMEOUT ${MPIDSM_MPI_TEST_TIMEOUT})
  endif()
  mpidsm_add_mpi_test_executable(${name} SOURCES ${ARG_SOURCES})
  foreach(np IN LISTS ARG_NP)
    set(test_name ${name}.np${np})
    if(ARG_SUFFIX)
      string(APPEND test_name .${ARG_SUFFIX})
    endif()
    mpidsm_mpirun_command(mpirun ${np} "${ARG_BARE}" ${ARG_ENV})
    add_test(NAME ${test_name} COMMAND ${mpirun} $<TARGET_FILE:${name}> ${MPIEXEC_POSTFLAGS}
                                       ${ARG_ARGS})
    set_tests_properties(${test_name} PROPERTIES TIMEOUT ${ARG_TIMEOUT} PROCESSORS ${np})
  endforeach()
endfunction()
