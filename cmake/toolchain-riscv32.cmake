# cmake/toolchain-riscv32.cmake: bare-metal RV32 with Debian's gcc-riscv64-unknown-elf and
# picolibc-riscv64-unknown-elf. Used by embedded/CMakeLists.txt, which builds one program per
# ISA (rv32imac/ilp32 soft float, rv32imafc/ilp32f hard float) in the same build tree:
#   cmake -S embedded -B build-riscv -DCMAKE_TOOLCHAIN_FILE=cmake/toolchain-riscv32.cmake
#
# The compiler's default target is rv64gc; the -march/-mabi flags are per target, and with
# --specs=picolibc.specs they select picolibc's multilib (riscv64-unknown-elf-gcc
# -print-multi-lib lists them). Debian 12 ships no libstdc++ for riscv64-unknown-elf; the C++
# headers come from libstdc++-arm-none-eabi-dev (embedded/CMakeLists.txt,
# HOOKFUSE_RISCV_CXX_INCLUDE_DIRS); nothing of libstdc++ is linked.
set(CMAKE_SYSTEM_NAME Generic)
set(CMAKE_SYSTEM_PROCESSOR riscv32)

set(CMAKE_C_COMPILER riscv64-unknown-elf-gcc)
set(CMAKE_CXX_COMPILER riscv64-unknown-elf-g++)
set(CMAKE_ASM_COMPILER riscv64-unknown-elf-gcc)
# No OS to link a test executable for, and no libstdc++ to link one with: try_compile builds a
# static library instead.
set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)

set(CMAKE_C_FLAGS_INIT "--specs=picolibc.specs")
set(CMAKE_CXX_FLAGS_INIT
    "--specs=picolibc.specs -fno-exceptions -fno-rtti -fno-threadsafe-statics -fno-use-cxa-atexit")
# No crt0: embedded/riscv/startup.c starts the program. (embedded/CMakeLists.txt links with the C
# driver: g++ would ask for a -lstdc++ that does not exist.)
set(CMAKE_EXE_LINKER_FLAGS_INIT "-nostartfiles")

set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
