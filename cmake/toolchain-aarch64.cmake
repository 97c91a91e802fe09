# cmake/toolchain-aarch64.cmake: Linux on aarch64 with Debian's g++-aarch64-linux-gnu, linked
# statically so that qemu-aarch64 (qemu-user) runs the tests without an aarch64 sysroot:
#   cmake -S . -B build-aarch64 -DCMAKE_TOOLCHAIN_FILE=cmake/toolchain-aarch64.cmake
#   cmake --build build-aarch64 -j2 && ctest --test-dir build-aarch64
# Use it with HOOKFUSE_CORE_ONLY=ON (the default under this file): zlib, google benchmark, fmt
# and CLI11 are not installed for the target. Eigen, Boost and Catch2 are header-only and
# architecture-independent: they are taken from the host (cmake/host_headers.cmake).
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)

set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
set(CMAKE_EXE_LINKER_FLAGS_INIT "-static")

# ctest (and catch_discover_tests at build time) run the target's programs through qemu-user.
find_program(HOOKFUSE_QEMU_AARCH64 NAMES qemu-aarch64 qemu-aarch64-static REQUIRED)
set(CMAKE_CROSSCOMPILING_EMULATOR "${HOOKFUSE_QEMU_AARCH64}")

set(CMAKE_FIND_ROOT_PATH /usr/aarch64-linux-gnu)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

set(HOOKFUSE_CORE_ONLY ON CACHE BOOL "Build only the core (no zlib, data, examples, benchmarks)")
