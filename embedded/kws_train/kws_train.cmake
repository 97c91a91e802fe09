# embedded/kws_train/kws_train.cmake: the bare-metal builds of embedded/kws_train (included at the
# end of embedded/CMakeLists.txt for the Cortex-M4F and of embedded/riscv/riscv.cmake for RV32):
#
#   kws_train.elf              Cortex-M4F, MPS2 AN386 (semihosting)
#   kws_train_rv32imac.elf     RV32 soft float, QEMU virt (UART, test finisher)
#   kws_train_rv32imafc.elf    RV32 single-precision FPU, QEMU virt
#
# The same start-up code, linker scripts, heap --wrap list and nm check as mcu_train, with
# 64 KB of flash and 64 KB of RAM instead of 32 (64 on RV32) and 8: the session of the
# 130 -> 25 -> 4 model (parameters, their gradients, the Momentum slots, the graph's buffers)
# lives on main's stack, and the linker script reserves 56 KB of RAM for the stack.
set(kws_dir "${CMAKE_CURRENT_LIST_DIR}")
set(kws_memory_flags
  -Wl,--defsym=__flash_size__=64K -Wl,--defsym=__ram_size__=64K -Wl,--defsym=__stack_size__=56K)

# hookfuse_kws_executable(<name> <platform dir> <linker script> <nm> <size> <compile options>...)
function(hookfuse_kws_executable name dir script nm size)
  add_executable(${name} "${kws_dir}/main.cpp" "${dir}/startup.c")
  set_target_properties(${name} PROPERTIES SUFFIX ".elf")
  target_include_directories(${name} PRIVATE "${dir}")
  target_compile_definitions(${name} PRIVATE EMBEDDED_BARE_METAL)
  target_compile_options(${name} PRIVATE ${ARGN})
  target_link_libraries(${name} PRIVATE hookfuse_embedded)
  target_link_options(${name} PRIVATE ${ARGN} "-T${script}" ${kws_memory_flags} -Wl,--gc-sections
    "-Wl,-Map=${CMAKE_CURRENT_BINARY_DIR}/${name}.map" -Wl,--print-memory-usage ${wrap_flags})
  target_link_libraries(${name} PRIVATE m)
  set_property(TARGET ${name} APPEND PROPERTY LINK_DEPENDS "${script}")
  add_custom_command(TARGET ${name} POST_BUILD
    COMMAND "${size}" -A "$<TARGET_FILE:${name}>"
    COMMAND "${CMAKE_COMMAND}" "-DNM=${nm}" "-DELF=$<TARGET_FILE:${name}>"
            -P "${CMAKE_CURRENT_SOURCE_DIR}/check_no_heap.cmake"
    VERBATIM)
endfunction()

if(HOOKFUSE_MCU_ARCH STREQUAL "riscv")
  foreach(variant IN ITEMS "rv32imac;ilp32" "rv32imafc;ilp32f")
    list(GET variant 0 march)
    list(GET variant 1 mabi)
    hookfuse_kws_executable(kws_train_${march} "${riscv}" "${riscv}/virt.ld" "${RISCV_NM}"
      "${RISCV_SIZE}" -march=${march} -mabi=${mabi} -mcmodel=medany)
  endforeach()
else()
  hookfuse_kws_executable(kws_train "${common}" "${common}/mps2_an386.ld" "${ARM_NM}" "${ARM_SIZE}")
endif()
