# mpidsm_info as users call it: --parsable prints only NAME=value lines,
# names the MPI library and every variable, and an unknown MPIDSM_* variable
# gets a warning on stderr; the kernel's prices and features are listed. Invoked by CTest with -DINFO=<mpidsm_info>.
execute_process(COMMAND env MPIDSM_TYPO_VARIABLE=1 MPIDSM_LOCKS=64 ${INFO} --parsable -a
                RESULT_VARIABLE result OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT result EQUAL 0)
  message(FATAL_ERROR "mpidsm_info --parsable -a failed (${result}):\n${out}\n${err}")
endif()
string(REGEX REPLACE "\n$" "" body "${out}")
string(REPLACE "\n" ";" lines "${body}")
foreach(line IN LISTS lines)
  if(NOT line MATCHES "^[A-Za-z_.]+=.")
    message(FATAL_ERROR "not a NAME=value line: '${line}'")
  endif()
endforeach()
foreach(expected "mpi.library=Open MPI v" "mpidsm.version=" "ucx.version=" "build.compiler="
                 "MPIDSM_LOCKS=64\n" "MPIDSM_SHM_EAGER_LIMIT=4096\n" "MPIDSM_PROGRESS_THREAD=auto\n"
                 "kernel.write_fault_us=" "kernel.read_allocates=" "kernel.userfaultfd="
                 "kernel.userfaultfd_wp_async=" "kernel.pagemap_scan=")
  string(FIND "${out}" "${expected}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "'${expected}' missing from:\n${out}")
  endif()
endforeach()
if(NOT err MATCHES "warning: unknown variable MPIDSM_TYPO_VARIABLE is ignored")
  message(FATAL_ERROR "no warning about MPIDSM_TYPO_VARIABLE on stderr:\n${err}")
endif()

# Every bad variable is reported, each on its own line, and the exit status
# says so; the table shows sizes with their unit.
execute_process(COMMAND env MPIDSM_LOCKS=0 MPIDSM_DSM_SIZE=12 MPIDSM_COHERENCE=sideways ${INFO}
                RESULT_VARIABLE result OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT result EQUAL 1)
  message(FATAL_ERROR "mpidsm_info with bad variables exited ${result}, expected 1:\n${err}")
endif()
foreach(variable MPIDSM_LOCKS MPIDSM_DSM_SIZE MPIDSM_COHERENCE)
  if(NOT err MATCHES "mpidsm_info: [^\n]*${variable}")
    message(FATAL_ERROR "${variable} not reported:\n${err}")
  endif()
endforeach()
if(NOT out MATCHES "MPIDSM_HEAP_SIZE += 134217728 \\(128 MiB\\)")
  message(FATAL_ERROR "sizes without their unit:\n${out}")
endif()
