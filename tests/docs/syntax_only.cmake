# syntax_only.cmake: the compiler launcher of the docs_blocks object library
# (tests/docs/CMakeLists.txt). Runs the compile command given after -- (which has -fsyntax-only:
# the code is parsed and its templates instantiated, no code is generated), then creates the
# object file the command names after -o, which -fsyntax-only does not write, so that the build
# tool sees the object up to date until a source or header changes (the compiler's depfile).
#   cmake -P syntax_only.cmake -- <compiler> <arguments>...
cmake_minimum_required(VERSION 3.21)

set(command "")
set(after_dashes FALSE)
set(object "")
set(next_is_object FALSE)
math(EXPR last "${CMAKE_ARGC} - 1")
foreach(i RANGE ${last})
  set(argument "${CMAKE_ARGV${i}}")
  if(after_dashes)
    list(APPEND command "${argument}")
    if(next_is_object)
      set(object "${argument}")
      set(next_is_object FALSE)
    elseif(argument STREQUAL "-o")
      set(next_is_object TRUE)
    endif()
  elseif(argument STREQUAL "--")
    set(after_dashes TRUE)
  endif()
endforeach()
if(NOT command OR object STREQUAL "")
  message(FATAL_ERROR "syntax_only.cmake: expected -- <compiler> ... -o <object> ...")
endif()

execute_process(COMMAND ${command} RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "syntax_only.cmake: the compiler exited with ${rc}")
endif()
file(TOUCH "${object}")
