# embedded/riscv/riscv.cmake: the RV32 part of embedded/CMakeLists.txt (included when configured
# with cmake/toolchain-riscv32.cmake). One build tree, one program per ISA:
#
#   mcu_train_rv32imac.elf    -march=rv32imac  -mabi=ilp32   soft float
#   mcu_train_rv32imafc.elf   -march=rv32imafc -mabi=ilp32f  single-precision FPU
#
# for QEMU's virt board (embedded/riscv/virt.ld, startup.c, virt.hpp):
#   qemu-system-riscv32 -M virt -bios none -nographic -kernel build-riscv/mcu_train_rv32imafc.elf
#
# Debian 12 ships no libstdc++ for riscv64-unknown-elf. The headers are those of
# libstdc++-arm-none-eabi-dev (GCC 12.2, configured for newlib, from which picolibc derives):
# apart from bits/ (c++config.h, whose ARM-specific parts are under __ARM_EABI__) they are the
# same on every target. The core needs templates and inline functions only; no libstdc++ or
# libsupc++ code is linked, and the link uses the C driver (g++'s would add -lstdc++).
file(GLOB cxx_dirs LIST_DIRECTORIES true "/usr/include/newlib/c++/12*")
list(SORT cxx_dirs)
list(GET cxx_dirs -1 cxx_dir)
set(HOOKFUSE_RISCV_CXX_INCLUDE_DIRS "${cxx_dir};${cxx_dir}/arm-none-eabi" CACHE STRING
    "libstdc++ headers for the RV32 build (Debian: libstdc++-arm-none-eabi-dev)")
foreach(d IN LISTS HOOKFUSE_RISCV_CXX_INCLUDE_DIRS)
  if(NOT EXISTS "${d}")
    message(FATAL_ERROR "No ${d}: install libstdc++-arm-none-eabi-dev or set HOOKFUSE_RISCV_CXX_INCLUDE_DIRS")
  endif()
endforeach()
if(NOT EXISTS "${cxx_dir}/type_traits")
  message(FATAL_ERROR "No libstdc++ headers in ${cxx_dir}: install libstdc++-arm-none-eabi-dev")
endif()
target_include_directories(hookfuse_embedded SYSTEM INTERFACE ${HOOKFUSE_RISCV_CXX_INCLUDE_DIRS})

set(CMAKE_CXX_LINK_EXECUTABLE
    "<CMAKE_C_COMPILER> <FLAGS> <CMAKE_CXX_LINK_FLAGS> <LINK_FLAGS> <OBJECTS> -o <TARGET> <LINK_LIBRARIES>")

set(riscv "${CMAKE_CURRENT_SOURCE_DIR}/riscv")
find_program(RISCV_NM riscv64-unknown-elf-nm REQUIRED)
find_program(RISCV_SIZE riscv64-unknown-elf-size REQUIRED)

# hookfuse_riscv_executable(<name> <march> <mabi>): <name>.elf for QEMU's virt board, linked with
# the project's start-up code and linker script and without a heap.
function(hookfuse_riscv_executable name march mabi)
  add_executable(${name} "${CMAKE_CURRENT_SOURCE_DIR}/mcu_train/main.cpp" "${riscv}/startup.c"
                 "${CMAKE_CURRENT_SOURCE_DIR}/common/small_libc.c")
  set_target_properties(${name} PROPERTIES SUFFIX ".elf")
  target_include_directories(${name} PRIVATE "${riscv}")
  target_compile_definitions(${name} PRIVATE EMBEDDED_BARE_METAL)
  target_compile_options(${name} PRIVATE -march=${march} -mabi=${mabi} -mcmodel=medany)
  target_link_libraries(${name} PRIVATE hookfuse_embedded)
  target_link_options(${name} PRIVATE -march=${march} -mabi=${mabi}
    "-T${riscv}/virt.ld" -Wl,--gc-sections "-Wl,-Map=${CMAKE_CURRENT_BINARY_DIR}/${name}.map"
    -Wl,--print-memory-usage ${wrap_flags})
  target_link_libraries(${name} PRIVATE m)
  set_property(TARGET ${name} APPEND PROPERTY LINK_DEPENDS "${riscv}/virt.ld")
  add_custom_command(TARGET ${name} POST_BUILD
    COMMAND "${RISCV_SIZE}" -A "$<TARGET_FILE:${name}>"
    COMMAND "${CMAKE_COMMAND}" "-DNM=${RISCV_NM}" "-DELF=$<TARGET_FILE:${name}>"
            -P "${CMAKE_CURRENT_SOURCE_DIR}/check_no_heap.cmake"
    VERBATIM)
endfunction()

hookfuse_riscv_executable(mcu_train_rv32imac rv32imac ilp32)
hookfuse_riscv_executable(mcu_train_rv32imafc rv32imafc ilp32f)
# Errors as one fixed text, as on the Cortex-M4F (embedded/CMakeLists.txt).
foreach(t IN ITEMS mcu_train_rv32imac mcu_train_rv32imafc)
  target_compile_definitions(${t} PRIVATE HOOKFUSE_STRIP_ERROR_STRINGS)
endforeach()

# embedded/kws_train for both ISAs (kws_train_rv32imac.elf, kws_train_rv32imafc.elf).
include("${CMAKE_CURRENT_SOURCE_DIR}/kws_train/kws_train.cmake")
# embedded/mcu_resume (a checkpoint in a byte array survives a reset), for both ISAs.
hookfuse_riscv_executable(mcu_resume_rv32imac rv32imac ilp32)
hookfuse_riscv_executable(mcu_resume_rv32imafc rv32imafc ilp32f)
foreach(t IN ITEMS mcu_resume_rv32imac mcu_resume_rv32imafc)
  set_property(TARGET ${t} PROPERTY SOURCES
    "${CMAKE_CURRENT_SOURCE_DIR}/mcu_resume/main.cpp" "${riscv}/startup.c")
  target_link_options(${t} PRIVATE -Wl,--defsym=__stack_size__=6464)  # as on the Cortex-M4F
endforeach()
