# consumer_test.cmake: configures, builds and runs a small project that consumes hookfuse.
#
# Run at ctest time as
#   cmake -DSOURCE_DIR=<consumer project> -DBINARY_DIR=<its build dir> -DGENERATOR=<gen>
#         [-DMAKE_PROGRAM=<prog>] -DCXX=<compiler> [-DINSTALL_FROM=<hookfuse build dir>
#         -DPREFIX=<install prefix>] [-DHOOKFUSE_SOURCE_DIR=<dir>] -P consumer_test.cmake
#
# With INSTALL_FROM, hookfuse is first installed into a fresh PREFIX, and the consumer finds
# it there (and only there: the package registries are off).
cmake_minimum_required(VERSION 3.21)

foreach(var SOURCE_DIR BINARY_DIR GENERATOR CXX)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "consumer_test.cmake: -D${var}=... is required")
  endif()
endforeach()

function(run step)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(NOT rc EQUAL 0)
    list(JOIN ARGN " " cmd)
    message(NOTICE "${cmd}\n${out}")  # verbatim; FATAL_ERROR would reflow it
    message(FATAL_ERROR "${step} failed (${rc})")
  endif()
  message(STATUS "${step}: ok")
endfunction()

set(configure_args -S "${SOURCE_DIR}" -B "${BINARY_DIR}" -G "${GENERATOR}"
    "-DCMAKE_CXX_COMPILER=${CXX}"
    -DCMAKE_FIND_PACKAGE_NO_PACKAGE_REGISTRY=ON
    -DCMAKE_FIND_PACKAGE_NO_SYSTEM_PACKAGE_REGISTRY=ON)
if(MAKE_PROGRAM)
  list(APPEND configure_args "-DCMAKE_MAKE_PROGRAM=${MAKE_PROGRAM}")
endif()
if(DEFINED INSTALL_FROM)
  file(REMOVE_RECURSE "${PREFIX}")
  run("install hookfuse into ${PREFIX}"
      "${CMAKE_COMMAND}" --install "${INSTALL_FROM}" --prefix "${PREFIX}")
  list(APPEND configure_args "-DCMAKE_PREFIX_PATH=${PREFIX}" "-DEXPECTED_PREFIX=${PREFIX}")
endif()
if(DEFINED HOOKFUSE_SOURCE_DIR)
  list(APPEND configure_args "-DHOOKFUSE_SOURCE_DIR=${HOOKFUSE_SOURCE_DIR}")
endif()

file(REMOVE_RECURSE "${BINARY_DIR}")
run("configure" "${CMAKE_COMMAND}" ${configure_args})
run("build" "${CMAKE_COMMAND}" --build "${BINARY_DIR}")
run("run" "${BINARY_DIR}/consumer")
