# run_checked.cmake: runs a program and checks its exit code, its output and, optionally, a file
# it wrote. (ctest's PASS_REGULAR_EXPRESSION alone ignores the exit code, so a crash after the
# match would pass.)
#   cmake [-DEXPECT_RC=<code>] [-DPASS_REGEX=<regex>] [-DDIR=<dir>] [-DFILE=<path>
#         -DFILE_REGEX=<regex>] -P run_checked.cmake -- <program> [args...]
# EXPECT_RC: the exit code required (default 0; a crash never matches). PASS_REGEX: the output
# (stdout and stderr) must match. DIR: removed, recreated and made the working directory, so
# that a program writing relative paths starts empty on every run. FILE, FILE_REGEX: the file
# must exist afterwards and its text match.
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
if(NOT DEFINED EXPECT_RC)
  set(EXPECT_RC 0)
endif()
set(working_directory "")
if(DEFINED DIR)
  file(REMOVE_RECURSE "${DIR}")
  file(MAKE_DIRECTORY "${DIR}")
  set(working_directory WORKING_DIRECTORY "${DIR}")
endif()

execute_process(COMMAND ${command} ${working_directory}
                RESULT_VARIABLE rc OUTPUT_VARIABLE output ERROR_VARIABLE output)
message(NOTICE "${output}")
if(NOT rc STREQUAL "${EXPECT_RC}")
  message(FATAL_ERROR "exited with ${rc}, expected ${EXPECT_RC}")
endif()
if(DEFINED PASS_REGEX AND NOT output MATCHES "${PASS_REGEX}")
  message(FATAL_ERROR "output does not match: ${PASS_REGEX}")
endif()
if(DEFINED FILE)
  if(NOT EXISTS "${FILE}")
    message(FATAL_ERROR "${FILE} was not written")
  endif()
  file(READ "${FILE}" text)
  if(NOT text MATCHES "${FILE_REGEX}")
    message(FATAL_ERROR "${FILE} does not match: ${FILE_REGEX}\n${text}")
  endif()
endif()
