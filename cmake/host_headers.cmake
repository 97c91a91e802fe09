# cmake/host_headers.cmake: Eigen3::Eigen, Boost::headers and Catch2::Catch2 for a cross build,
# from the host's header-only packages.
#
# The headers are architecture-independent, but Boost's and Catch2's live directly in the host's
# /usr/include, next to glibc's headers, which must not reach a cross compiler (-isystem
# /usr/include would put the host's <stdio.h> before the target's). So each package gets a
# directory in the build tree holding only a link to its own subdirectory.
set(HOOKFUSE_HOST_INCLUDE_DIR "/usr/include" CACHE PATH
    "Host directory holding eigen3/, boost/ and catch2/ (cross builds only)")

set(_hookfuse_host_headers "${PROJECT_BINARY_DIR}/host-headers")
foreach(pkg boost catch2)
  if(NOT EXISTS "${HOOKFUSE_HOST_INCLUDE_DIR}/${pkg}")
    message(FATAL_ERROR "hookfuse: no ${HOOKFUSE_HOST_INCLUDE_DIR}/${pkg} (HOOKFUSE_HOST_INCLUDE_DIR)")
  endif()
  file(MAKE_DIRECTORY "${_hookfuse_host_headers}/${pkg}")
  file(CREATE_LINK "${HOOKFUSE_HOST_INCLUDE_DIR}/${pkg}" "${_hookfuse_host_headers}/${pkg}/${pkg}"
       SYMBOLIC)
endforeach()
if(NOT EXISTS "${HOOKFUSE_HOST_INCLUDE_DIR}/eigen3/Eigen/Core")
  message(FATAL_ERROR "hookfuse: no ${HOOKFUSE_HOST_INCLUDE_DIR}/eigen3/Eigen/Core")
endif()

add_library(Eigen3::Eigen INTERFACE IMPORTED)
set_target_properties(Eigen3::Eigen PROPERTIES
  INTERFACE_INCLUDE_DIRECTORIES "${HOOKFUSE_HOST_INCLUDE_DIR}/eigen3")
add_library(Boost::headers INTERFACE IMPORTED)
set_target_properties(Boost::headers PROPERTIES
  INTERFACE_INCLUDE_DIRECTORIES "${_hookfuse_host_headers}/boost")
add_library(Catch2::Catch2 INTERFACE IMPORTED)
set_target_properties(Catch2::Catch2 PROPERTIES
  INTERFACE_INCLUDE_DIRECTORIES "${_hookfuse_host_headers}/catch2")
# Catch.cmake (catch_discover_tests) is a script, not a header: the host's copy serves.
find_path(HOOKFUSE_CATCH_CMAKE_DIR Catch.cmake PATHS /usr/lib/cmake/Catch2 /usr/share/cmake/Catch2
          NO_CMAKE_FIND_ROOT_PATH NO_DEFAULT_PATH)
if(HOOKFUSE_CATCH_CMAKE_DIR)
  list(APPEND CMAKE_MODULE_PATH "${HOOKFUSE_CATCH_CMAKE_DIR}")
endif()
