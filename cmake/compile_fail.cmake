# compile_fail.cmake: compiles one snippet with -fsyntax-only and checks the outcome.
#
# Run at ctest time as
#   cmake -DCXX=<compiler> -DCXX_ID=<GNU|Clang> -DFLAGS_FILE=<file> -DSOURCE=<snippet.cpp>
#         -DMODE=<fail|ok> -P compile_fail.cmake
#
# MODE=fail: the snippet must contain a line `// expect: <regex>` (by convention its first
#   line); the check passes only if compilation fails AND the compiler output matches <regex>
#   (CMake regex syntax: no \d or \s; use [0-9] and [ \t]).
# MODE=ok: the snippet must compile. Guards against a broken command line making every
#   compile-fail test pass vacuously.
# MODE=pch: compiles the header SOURCE into the precompiled header OUTPUT (SOURCE.gch's place
#   for -include), with the snippets' own flags, so that GCC accepts it for them.
# -DPCH=<header> (fail and ok, optional): `-include <header>` before the snippet, for snippets
#   whose first line of code includes that header's one include (<hookfuse/hookfuse.hpp>):
#   the same declarations, parsed once for all of them (<header>.gch, MODE=pch). GCC uses the
#   .gch when it was built with the same flags, else it parses the header: slower, same result.
# FLAGS_FILE is generated at configure time (tests/CMakeLists.txt) and sets
#   HOOKFUSE_CHECK_INCLUDES, HOOKFUSE_CHECK_DEFINITIONS, HOOKFUSE_CHECK_OWN_INCLUDE and
#   HOOKFUSE_CHECK_IMPLICIT_INCLUDES.
cmake_minimum_required(VERSION 3.21)

foreach(var CXX CXX_ID FLAGS_FILE SOURCE MODE)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "compile_fail.cmake: -D${var}=... is required")
  endif()
endforeach()
include("${FLAGS_FILE}")

set(expect "")
if(MODE STREQUAL "fail")
  file(READ "${SOURCE}" content)
  if(NOT content MATCHES "(^|\n)// expect: ([^\r\n]*)")
    message(FATAL_ERROR "${SOURCE}: no `// expect: <regex>` line")
  endif()
  string(STRIP "${CMAKE_MATCH_2}" expect)
  if(expect STREQUAL "")
    message(FATAL_ERROR "${SOURCE}: empty `// expect:` regex")
  endif()
elseif(MODE STREQUAL "pch")
  if(NOT DEFINED OUTPUT)
    message(FATAL_ERROR "compile_fail.cmake: MODE=pch needs -DOUTPUT=<file.gch>")
  endif()
elseif(NOT MODE STREQUAL "ok")
  message(FATAL_ERROR "compile_fail.cmake: MODE must be fail, ok or pch, not '${MODE}'")
endif()

if(MODE STREQUAL "pch")
  set(args -std=c++20 -x c++-header)
else()
  set(args -std=c++20 -fsyntax-only)
endif()
# No caret lines: an echoed source line must not be what satisfies the regex.
if(CXX_ID STREQUAL "GNU")
  list(APPEND args -fno-diagnostics-show-caret -fdiagnostics-color=never)
elseif(CXX_ID MATCHES "Clang")
  list(APPEND args -fno-caret-diagnostics -fno-color-diagnostics)
endif()
foreach(dir IN LISTS HOOKFUSE_CHECK_INCLUDES)
  if(dir IN_LIST HOOKFUSE_CHECK_IMPLICIT_INCLUDES)
    continue()  # -isystem /usr/include breaks #include_next in the standard library
  elseif(dir STREQUAL HOOKFUSE_CHECK_OWN_INCLUDE)
    list(APPEND args "-I${dir}")
  else()
    list(APPEND args -isystem "${dir}")
  endif()
endforeach()
foreach(def IN LISTS HOOKFUSE_CHECK_DEFINITIONS)
  list(APPEND args "-D${def}")
endforeach()

# ASCII quotes in diagnostics, whatever the caller's locale.
set(ENV{LC_ALL} C)
if(MODE STREQUAL "pch")
  execute_process(
    COMMAND "${CXX}" ${args} "${SOURCE}" -o "${OUTPUT}"
    RESULT_VARIABLE rc
    OUTPUT_VARIABLE output
    ERROR_VARIABLE output)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "compile_fail.cmake: the precompiled header failed (${rc}):\n${output}")
  endif()
  return()
endif()
if(DEFINED PCH AND NOT PCH STREQUAL "")
  list(APPEND args -include "${PCH}")
endif()
execute_process(
  COMMAND "${CXX}" ${args} "${SOURCE}"
  RESULT_VARIABLE rc
  OUTPUT_VARIABLE output
  ERROR_VARIABLE output)

# Details go out verbatim (FATAL_ERROR would reflow the compiler output).
function(fail reason)
  list(JOIN args " " args_str)
  message(NOTICE "${CXX} ${args_str} ${SOURCE}\n${output}")
  message(FATAL_ERROR "${SOURCE}: ${reason}")
endfunction()

if(MODE STREQUAL "ok")
  if(NOT rc EQUAL 0)
    fail("expected to compile, but failed (${rc})")
  endif()
  message(STATUS "compiled as expected: ${SOURCE}")
elseif(rc EQUAL 0)
  fail("expected a compile error matching `${expect}`, but it compiled")
elseif(NOT output MATCHES "${expect}")
  fail("compilation failed, but the output does not match `${expect}`")
else()
  message(STATUS "failed to compile as expected (matched `${expect}`): ${SOURCE}")
endif()
