# cmake -DCOMMAND="<program;args>" -DEXPECT=<regex> [-DEXPECT_FAILURE=ON] [-DREJECT=<regex>]
#       -P expect_output.cmake
# Runs COMMAND and fails unless it exits 0 (with EXPECT_FAILURE: not 0) and
# its output (stdout and stderr) matches EXPECT: for behaviour visible only in
# what a program prints.
execute_process(COMMAND ${COMMAND} RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err
                INPUT_FILE /dev/null)
if(EXPECT_FAILURE AND status EQUAL 0)
  message(FATAL_ERROR "exit status 0, expected a failure\n${out}\n${err}")
elseif(NOT EXPECT_FAILURE AND NOT status EQUAL 0)
  message(FATAL_ERROR "exit status ${status}\n${out}\n${err}")
endif()
if(NOT "${out}${err}" MATCHES "${EXPECT}")
  message(FATAL_ERROR "output does not match '${EXPECT}':\n${out}\n${err}")
endif()
# -DREJECT=<regex>: fails when the output matches it too.
if(DEFINED REJECT AND "${out}${err}" MATCHES "${REJECT}")
  message(FATAL_ERROR "output matches '${REJECT}', which it must not:\n${out}\n${err}")
endif()
