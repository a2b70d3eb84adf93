# cmake -DGROFF=<groff> -DPAGE=<page> -P check_man_page.cmake
# Fails when groff warns about the page (-ww: every warning) or when it
# lacks a NAME, DESCRIPTION or SEE ALSO section.
execute_process(COMMAND ${GROFF} -man -ww -z ${PAGE} RESULT_VARIABLE status
                ERROR_VARIABLE warnings OUTPUT_QUIET)
if(NOT status EQUAL 0 OR NOT warnings STREQUAL "")
  message(FATAL_ERROR "groff on ${PAGE}: status ${status}\n${warnings}")
endif()
file(READ ${PAGE} text)
foreach(section NAME DESCRIPTION "SEE ALSO")
  if(NOT text MATCHES "\\.SH \"?${section}")
    message(FATAL_ERROR "${PAGE} has no ${section} section")
  endif()
endforeach()
if(text MATCHES "@[A-Z_]+@")
  message(FATAL_ERROR "${PAGE} holds an unconfigured @VARIABLE@")
endif()
