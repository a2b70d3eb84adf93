# The one-sided benchmarks' raw UCX column (--ucx), checked under mpirun with
# 2 ranks: put and get bandwidth and put latency each print the column's
# description and a positive UCX figure with its ratio on every row, and exit
# 0, which they do only when the last raw UCX operation moved its bytes (the
# target's memory, or for gets the origin's buffer, holds the other side's
# pattern). Sizes reach 256 KiB: under UCX_TLS=tcp,self (the second run)
# puts from 128 KiB travel as rendezvous messages received in place.
# Invoked by CTest with -DMPIRUN=<command prefix, ;-list> -DPUT_BW=<put_bw>
# -DGET_BW=<get_bw> -DPUT_LATENCY=<put_latency> -DLABEL=<what MPIRUN sets>.
include(${CMAKE_CURRENT_LIST_DIR}/run_checked.cmake)

set(number "[0-9]+\\.[0-9]+")
foreach(benchmark ${PUT_BW} ${GET_BW} ${PUT_LATENCY})
  run_checked(0 ${benchmark} --ucx -m 65536:262144 -i 8 -x 1)
  if(NOT out MATCHES "\n# UCX: ucp_put_nbx" OR NOT out MATCHES " UCX +mpidsm/UCX\n")
    message(FATAL_ERROR "${LABEL} ${benchmark} --ucx: no UCX column in the header:\n${out}")
  endif()
  foreach(size 65536 131072 262144)
    if(NOT out MATCHES "\n${size} [^\n]* +${number} +${number}\n"
       OR out MATCHES "\n${size} [^\n]* (nan|inf|-?0\\.00) +[^ \n]+\n")
      message(FATAL_ERROR "${LABEL} ${benchmark} --ucx: no UCX figure at ${size}:\n${out}")
    endif()
  endforeach()
endforeach()
