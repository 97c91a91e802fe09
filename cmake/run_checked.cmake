# run_checked.cmake: runs a program and requires BOTH exit code 0 and output matching a regex.
# (ctest's PASS_REGULAR_EXPRESSION alone ignores the exit code, so a crash after the match
# would pass.)
#   cmake -DPASS_REGEX=<regex> -P run_checked.cmake -- <program> [args...]
cmake_minimum_required(VERSION 3.21)

set(command "")
set(after_dashes FALSE)
math(EXPR last "${CMAKE_ARGC} - 1")
foreach(i RANGE ${last})
  if(after_dashes)
    list(APPEND command "${CMAKE_ARGV${i}}")
  elseif(CMAKE_ARGV${i} STREQUAL "--")
    set(after_dashes TRUE)
  endif()
endforeach()
if(NOT command)
  message(FATAL_ERROR "run_checked.cmake: no command after --")
endif()

execute_process(COMMAND ${command} RESULT_VARIABLE rc OUTPUT_VARIABLE output ERROR_VARIABLE output)
message(NOTICE "${output}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "exited with ${rc}")
endif()
if(NOT output MATCHES "${PASS_REGEX}")
  message(FATAL_ERROR "output does not match: ${PASS_REGEX}")
endif()
