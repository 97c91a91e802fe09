# cmake/toolchain-cortex-m4.cmake: bare-metal Arm Cortex-M4F with Debian's gcc-arm-none-eabi and
# libstdc++-arm-none-eabi-newlib (newlib-nano). Used by embedded/CMakeLists.txt:
#   cmake -S embedded -B build-mcu -DCMAKE_TOOLCHAIN_FILE=cmake/toolchain-cortex-m4.cmake
set(CMAKE_SYSTEM_NAME Generic)
set(CMAKE_SYSTEM_PROCESSOR arm)

set(CMAKE_C_COMPILER arm-none-eabi-gcc)
set(CMAKE_CXX_COMPILER arm-none-eabi-g++)
set(CMAKE_ASM_COMPILER arm-none-eabi-gcc)
# No OS to link a test executable for: try_compile builds a static library instead.
set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)

set(HOOKFUSE_CORTEX_M4F_FLAGS
    "-mcpu=cortex-m4 -mthumb -mfpu=fpv4-sp-d16 -mfloat-abi=hard")
set(CMAKE_C_FLAGS_INIT "${HOOKFUSE_CORTEX_M4F_FLAGS}")
set(CMAKE_CXX_FLAGS_INIT
    "${HOOKFUSE_CORTEX_M4F_FLAGS} -fno-exceptions -fno-rtti -fno-threadsafe-statics -fno-use-cxa-atexit")
set(CMAKE_EXE_LINKER_FLAGS_INIT "--specs=nano.specs -nostartfiles")

# Headers and libraries come from the toolchain; programs (qemu, nm) from the host.
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
