# Installs the build tree into a scratch prefix, then uses it as users do:
#  - the installed mpidsm_info runs without LD_LIBRARY_PATH (install RPATH);
#  - tests/package builds with find_package(mpidsm) and runs under mpirun;
#  - a C program, a C++ program, a JIAJIA program and an OpenSHMEM program
#    build with pkg-config alone, and with the compiler wrappers mpidsmcc,
#    mpidsmcxx and mpidsm-oshcc, and run
#    under mpirun without LD_LIBRARY_PATH;
#  - the HTML API reference is installed;
#  - a project that adds the source tree with add_subdirectory configures
#    without mpidsm's tests, benchmarks and examples.
# Invoked by CTest with -DBUILD_DIR, -DSOURCE_DIR, -DSCRATCH, -DMPIEXEC and
# -DAPI_DOCS (MPIDSM_INSTALL_API_DOCS).
file(REMOVE_RECURSE ${SCRATCH})
set(prefix ${SCRATCH}/prefix)
include(${CMAKE_CURRENT_LIST_DIR}/run_step.cmake)

run_step(${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix})
run_step(env -u LD_LIBRARY_PATH ${prefix}/bin/mpidsm_info --parsable)
if(NOT out MATCHES "mpidsm.version=")
  message(FATAL_ERROR "installed mpidsm_info printed no version:\n${out}")
endif()

# The docs, plot scripts and examples; the examples build with the
# installed wrappers from a copy, and run.
foreach(file share/doc/mpidsm/guide.md share/doc/mpidsm/transport.md share/mpidsm/plot
             share/mpidsm/plot-scaling share/doc/mpidsm/examples/Makefile)
  if(NOT EXISTS ${prefix}/${file})
    message(FATAL_ERROR "${file} was not installed")
  endif()
endforeach()
file(REMOVE_RECURSE ${SCRATCH}/examples)
file(COPY ${prefix}/share/doc/mpidsm/examples DESTINATION ${SCRATCH})
run_step(make -s -j2 -C ${SCRATCH}/examples)
run_step(env -u LD_LIBRARY_PATH ${MPIEXEC} -np 2 --oversubscribe ${SCRATCH}/examples/matmul -n 128 -r 1)
run_step(env -u LD_LIBRARY_PATH ${MPIEXEC} -np 2 --oversubscribe ${SCRATCH}/examples/jia_jacobi -n 64 -i 4 -r 1)

# The optional benchmark component: the suite runs from the prefix, with
# no source tree and no LD_LIBRARY_PATH.
run_step(${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix} --component benchmarks)
run_step(env -u LD_LIBRARY_PATH "MPIRUN=${MPIEXEC} --oversubscribe"
         bash ${prefix}/libexec/mpidsm/benchmarks/run-suite --latency -m 1:8 -i 5 -x 1
         -o ${SCRATCH}/suite.csv)
if(NOT out MATCHES "run-suite: \\[10/10\\] dsm_barrier_latency done")
  message(FATAL_ERROR "the installed run-suite did not run the latency suite:\n${out}")
endif()

run_step(${CMAKE_COMMAND} -S ${SOURCE_DIR}/tests/package -B ${SCRATCH}/build
         -DCMAKE_PREFIX_PATH=${prefix})
run_step(${CMAKE_COMMAND} --build ${SCRATCH}/build)
run_step(${MPIEXEC} -np 1 ${SCRATCH}/build/consumer)
message(STATUS "${out}")
run_step(${MPIEXEC} -np 1 ${SCRATCH}/build/shmem_consumer)
message(STATUS "${out}")
# The consumer installed by its own `cmake --install` runs as it is.
run_step(${CMAKE_COMMAND} --install ${SCRATCH}/build --prefix ${SCRATCH}/consumer_prefix)
run_step(env -u LD_LIBRARY_PATH ${MPIEXEC} -np 1 ${SCRATCH}/consumer_prefix/bin/consumer)
run_step(env -u LD_LIBRARY_PATH ${MPIEXEC} -np 1 ${SCRATCH}/consumer_prefix/bin/shmem_consumer)
# An unknown component fails, naming it and the real ones.
file(WRITE ${SCRATCH}/bad_component/CMakeLists.txt
     "cmake_minimum_required(VERSION 3.25)\nproject(bad C CXX)\n"
     "find_package(mpidsm REQUIRED COMPONENTS shmem gpu)\n")
execute_process(COMMAND ${CMAKE_COMMAND} -S ${SCRATCH}/bad_component -B ${SCRATCH}/bad_component/build
                        -DCMAKE_PREFIX_PATH=${prefix}
                RESULT_VARIABLE result OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(result EQUAL 0 OR NOT err MATCHES "no component 'gpu'")
  message(FATAL_ERROR "find_package(mpidsm COMPONENTS gpu) did not fail naming it:\n${out}\n${err}")
endif()

file(GLOB_RECURSE pc_files ${prefix}/*/mpidsm.pc)
list(GET pc_files 0 pc_file)
get_filename_component(pc_dir ${pc_file} DIRECTORY)
# Builds `source` with `compiler` and the flags pkg-config gives for
# `package` alone, then runs it under mpirun without LD_LIBRARY_PATH.
function(build_with_pkg_config package compiler standard source)
  execute_process(COMMAND env PKG_CONFIG_PATH=${pc_dir} pkg-config --cflags --libs ${package}
                  RESULT_VARIABLE result OUTPUT_VARIABLE flags OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(NOT result EQUAL 0)
    message(FATAL_ERROR "pkg-config --cflags --libs ${package} failed (${result})")
  endif()
  separate_arguments(flags UNIX_COMMAND "${flags}")
  get_filename_component(name ${source} NAME_WE)
  run_step(${compiler} -std=${standard} ${SOURCE_DIR}/tests/package/${source} ${flags}
           -o ${SCRATCH}/pkg_config_${name})
  run_step(env -u LD_LIBRARY_PATH ${MPIEXEC} -np 1 ${SCRATCH}/pkg_config_${name})
  message(STATUS "${out}")
endfunction()
build_with_pkg_config(mpidsm cc c11 main.c)
# C++: the flags keep Open MPI's C++ bindings out.
build_with_pkg_config(mpidsm c++ c++20 main.cpp)
build_with_pkg_config(mpidsm-jia cc c11 jia_main.c)
build_with_pkg_config(mpidsm-shmem cc c11 shmem_main.c)

# The wrappers, as mpicc is used: no flags of the user's own.
function(build_with_wrapper wrapper source)
  get_filename_component(name ${source} NAME_WE)
  run_step(env -u LD_LIBRARY_PATH ${prefix}/bin/${wrapper} ${SOURCE_DIR}/tests/package/${source}
           ${ARGN} -o ${SCRATCH}/wrapped_${name})
  run_step(env -u LD_LIBRARY_PATH ${MPIEXEC} -np 1 ${SCRATCH}/wrapped_${name})
  message(STATUS "${out}")
endfunction()
build_with_wrapper(mpidsmcc main.c)
build_with_wrapper(mpidsmcxx main.cpp)
build_with_wrapper(mpidsmcc jia_main.c -lmpidsm_jia)
build_with_wrapper(mpidsm-oshcc shmem_main.c)
run_step(${prefix}/bin/mpidsmcxx --showme -c x.cpp)
if(NOT out MATCHES "-std=c\\+\\+20" OR out MATCHES "-lmpidsm")
  message(FATAL_ERROR "mpidsmcxx --showme -c: expected C++20 and no libraries:\n${out}")
endif()
# The wrappers' manners, as Open MPI's: compile flags alone, link flags
# alone, and a version line.
run_step(${prefix}/bin/mpidsmcxx --showme:compile)
if(NOT out MATCHES "-std=c\\+\\+20" OR out MATCHES "-lmpidsm|-L")
  message(FATAL_ERROR "mpidsmcxx --showme:compile: expected compile flags only:\n${out}")
endif()
run_step(${prefix}/bin/mpidsm-oshcc --showme:link)
if(NOT out MATCHES "-lmpidsm_shmem -lmpidsm" OR out MATCHES "-I")
  message(FATAL_ERROR "mpidsm-oshcc --showme:link: expected link flags only:\n${out}")
endif()
run_step(${prefix}/bin/mpidsmcc --version)
if(NOT out MATCHES "^mpidsmcc \\(mpidsm [0-9]+\\.[0-9]+\\.[0-9]+\\)")
  message(FATAL_ERROR "mpidsmcc --version: expected mpidsm's version first:\n${out}")
endif()
run_step(env -u LD_LIBRARY_PATH ${prefix}/bin/mpidsm_info --version)
if(NOT out MATCHES "^mpidsm_info \\(mpidsm [0-9]+\\.[0-9]+\\.[0-9]+\\)")
  message(FATAL_ERROR "mpidsm_info --version: expected its version:\n${out}")
endif()
foreach(file LICENSE CHANGELOG.md README.md)
  if(NOT EXISTS ${prefix}/share/doc/mpidsm/${file})
    message(FATAL_ERROR "${file} was not installed to share/doc/mpidsm")
  endif()
endforeach()
# The manual pages, where man finds them (MANPATH follows bin/ to share/man).
foreach(page man7/mpidsm.7 man1/mpidsm_info.1 man1/mpidsm_paths.1 man1/mpidsmcc.1 man1/mpidsmcxx.1
             man1/mpidsm-oshcc.1 man1/mpidsm-oshcxx.1 man1/mpidsm_benchmarks.1)
  if(NOT EXISTS ${prefix}/share/man/${page})
    message(FATAL_ERROR "the manual page ${page} was not installed to share/man")
  endif()
endforeach()
if(API_DOCS AND NOT EXISTS ${prefix}/share/doc/mpidsm/api/index.html)
  message(FATAL_ERROR "the HTML API reference was not installed (share/doc/mpidsm/api)")
endif()

run_step(${CMAKE_COMMAND} -S ${SOURCE_DIR}/tests/package/subproject -B ${SCRATCH}/subproject
         -DMPIDSM_SOURCE_DIR=${SOURCE_DIR})
