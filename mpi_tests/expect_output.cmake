# cmake -DCOMMAND="<program;args>" -DEXPECT=<regex> -P expect_output.cmake
# Runs COMMAND and fails unless it exits 0 and its output (stdout and stderr)
# matches EXPECT: for behaviour visible only in what a program prints.
execute_process(COMMAND ${COMMAND} RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err
                INPUT_FILE /dev/null)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "exit status ${status}\n${out}\n${err}")
endif()
if(NOT "${out}${err}" MATCHES "${EXPECT}")
  message(FATAL_ERROR "output does not match '${EXPECT}':\n${out}\n${err}")
endif()
