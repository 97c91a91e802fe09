# embedded/tests.cmake: the host build's tests of the embedded example (included by the top-level
# CMakeLists.txt when tests are built).
#
#   embedded.mcu_train_host          mcu_train compiled for the host and run (always)
#   embedded.mcu_train_host_embedded_mode   the same with -fno-exceptions -fno-rtti
#                                    -DHOOKFUSE_EMBEDDED (always)
#   embedded.kws_train_host(_embedded_mode)   embedded/kws_train on the host, both ways (always)
#   embedded.strip_error_strings_argument, embedded.strip_error_strings_message
#                                    HOOKFUSE_STRIP_ERROR_STRINGS: errors reach error_handler
#                                    as the one fixed text (embedded/strip_errors, always)
#   embedded.core_headers_no_os      the core headers include no <iostream>, <filesystem>,
#                                    <fstream>, <functional>, <thread> (always)
#   embedded.mcu_resume_host_hosted, embedded.mcu_resume_host_embedded
#                                    mcu_resume (checkpoint in a byte array) on the host (always)
# With arm-none-eabi-g++ and qemu-system-arm on the PATH (scripts/edge-check.sh installs them):
#   embedded.mcu_build               cross-builds embedded/ into <build>/embedded-mcu (fixture)
#   embedded.mcu_no_heap_symbols     arm-none-eabi-nm: no malloc, _sbrk, _Znw*, _Zna* in the ELF
#   embedded.mcu_train_qemu          runs mcu_train.elf on qemu-system-arm -M mps2-an386
#   embedded.mcu_heap_hook_fails_to_link
#                                    a hook with a std::vector must fail to link
#   embedded.mcu_resume_qemu, embedded.mcu_resume_no_heap_symbols
#                                    mcu_resume.elf on qemu-system-arm, and its nm check
# HOOKFUSE_STRIP_ERROR_STRINGS: an argument check's error and a built message both reach
# error_handler as the fixed text of hookfuse/config.hpp (embedded/strip_errors prints it and
# exits 3).
add_executable(strip_errors_host "${CMAKE_CURRENT_LIST_DIR}/strip_errors/main.cpp")
target_link_libraries(strip_errors_host PRIVATE hookfuse::hookfuse hookfuse_warnings)
target_compile_options(strip_errors_host PRIVATE ${HOOKFUSE_TEST_FLAGS} -fno-exceptions -fno-rtti)
target_compile_definitions(strip_errors_host PRIVATE HOOKFUSE_EMBEDDED HOOKFUSE_STRIP_ERROR_STRINGS)
foreach(mode IN ITEMS argument message)
  add_test(NAME embedded.strip_error_strings_${mode}
    COMMAND "${CMAKE_COMMAND}" -DEXPECT_RC=3
            "-DPASS_REGEX=^error_handler: hookfuse: error \\(message stripped: HOOKFUSE_STRIP_ERROR_STRINGS\\)\n$"
            -P "${PROJECT_SOURCE_DIR}/cmake/run_checked.cmake" -- $<TARGET_FILE:strip_errors_host> ${mode})
endforeach()
add_executable(mcu_train_host "${CMAKE_CURRENT_LIST_DIR}/mcu_train/main.cpp")
target_link_libraries(mcu_train_host PRIVATE hookfuse::hookfuse hookfuse_warnings)
target_compile_options(mcu_train_host PRIVATE ${HOOKFUSE_TEST_FLAGS})
set(mcu_pass_regex "first_loss: 1\\.[0-9]*\nlast_loss: 0\\.0[0-9]*\ntrain_accuracy: (1|0\\.9[5-9][0-9]*)\n.*mcu_train: PASS")
add_test(NAME embedded.mcu_train_host
  COMMAND "${CMAKE_COMMAND}" "-DPASS_REGEX=${mcu_pass_regex}"
          -P "${PROJECT_SOURCE_DIR}/cmake/run_checked.cmake" -- $<TARGET_FILE:mcu_train_host>)
# The same program in the embedded mode on the host: -fno-exceptions -fno-rtti and
# HOOKFUSE_EMBEDDED (errors through error_handler, log lines from hookfuse's own number
# formatting instead of printf's, which must give the same text).
add_executable(mcu_train_host_embedded "${CMAKE_CURRENT_LIST_DIR}/mcu_train/main.cpp")
target_link_libraries(mcu_train_host_embedded PRIVATE hookfuse::hookfuse hookfuse_warnings)
target_compile_options(mcu_train_host_embedded PRIVATE ${HOOKFUSE_TEST_FLAGS}
                       -fno-exceptions -fno-rtti)
target_compile_definitions(mcu_train_host_embedded PRIVATE HOOKFUSE_EMBEDDED)
add_test(NAME embedded.mcu_train_host_embedded_mode
  COMMAND "${CMAKE_COMMAND}" "-DPASS_REGEX=${mcu_pass_regex}"
          -P "${PROJECT_SOURCE_DIR}/cmake/run_checked.cmake" --
          $<TARGET_FILE:mcu_train_host_embedded>)
# embedded/kws_train on the host, normal and embedded mode. Expected: a first loss near ln 4
# (1.386), test accuracy at least 0.9, and 4 * (130*25 + 25 + 25*4 + 4) = 13,516 bytes of
# parameters and as many of Momentum slots (one per variable, of its shape).
set(kws_pass_regex "first_loss: 1\\.[0-9]*\n.*test_accuracy: (1|0\\.9[0-9]*)\nparameter_bytes: 13516\noptimizer_state_bytes: 13516\n.*kws_train: PASS")
add_executable(kws_train_host "${CMAKE_CURRENT_LIST_DIR}/kws_train/main.cpp")
add_executable(kws_train_host_embedded "${CMAKE_CURRENT_LIST_DIR}/kws_train/main.cpp")
target_compile_options(kws_train_host_embedded PRIVATE -fno-exceptions -fno-rtti)
target_compile_definitions(kws_train_host_embedded PRIVATE HOOKFUSE_EMBEDDED)
foreach(t IN ITEMS kws_train_host kws_train_host_embedded)
  target_link_libraries(${t} PRIVATE hookfuse::hookfuse hookfuse_warnings)
  target_compile_options(${t} PRIVATE ${HOOKFUSE_TEST_FLAGS})
endforeach()
add_test(NAME embedded.kws_train_host
  COMMAND "${CMAKE_COMMAND}" "-DPASS_REGEX=${kws_pass_regex}"
          -P "${PROJECT_SOURCE_DIR}/cmake/run_checked.cmake" -- $<TARGET_FILE:kws_train_host>)
add_test(NAME embedded.kws_train_host_embedded_mode
  COMMAND "${CMAKE_COMMAND}" "-DPASS_REGEX=${kws_pass_regex}"
          -P "${PROJECT_SOURCE_DIR}/cmake/run_checked.cmake" --
          $<TARGET_FILE:kws_train_host_embedded>)
set_tests_properties(embedded.kws_train_host embedded.kws_train_host_embedded_mode
                     PROPERTIES LABELS embedded)
# The core headers use nothing of a hosted OS (hookfuse/data/ reads files and is not core).
add_test(NAME embedded.core_headers_no_os
  COMMAND "${CMAKE_COMMAND}" "-DINCLUDE_DIR=${PROJECT_SOURCE_DIR}/include"
          -P "${CMAKE_CURRENT_LIST_DIR}/check_core_headers.cmake")
set_tests_properties(embedded.mcu_train_host embedded.mcu_train_host_embedded_mode
                     embedded.core_headers_no_os PROPERTIES LABELS embedded)

# embedded/mcu_resume on the host, hosted and embedded mode: save at N, reset, restore,
# continue to 2N, equal bit for bit to an uninterrupted run; a flipped byte is refused.
set(mcu_resume_regex "corrupt_restore: crc_mismatch\nrestore: ok\nrestored_step: 150\nfinal_step: 300\nresumed_equals_uninterrupted: bit for bit\n.*mcu_resume: PASS")
foreach(mode IN ITEMS hosted embedded)
  add_executable(mcu_resume_host_${mode} "${CMAKE_CURRENT_LIST_DIR}/mcu_resume/main.cpp")
  target_link_libraries(mcu_resume_host_${mode} PRIVATE hookfuse::hookfuse hookfuse_warnings)
  target_compile_options(mcu_resume_host_${mode} PRIVATE ${HOOKFUSE_TEST_FLAGS})
  if(mode STREQUAL "embedded")
    target_compile_options(mcu_resume_host_${mode} PRIVATE -fno-exceptions -fno-rtti)
    target_compile_definitions(mcu_resume_host_${mode} PRIVATE HOOKFUSE_EMBEDDED)
  endif()
  add_test(NAME embedded.mcu_resume_host_${mode}
    COMMAND "${CMAKE_COMMAND}" "-DPASS_REGEX=${mcu_resume_regex}"
            -P "${PROJECT_SOURCE_DIR}/cmake/run_checked.cmake" -- $<TARGET_FILE:mcu_resume_host_${mode}>)
  set_tests_properties(embedded.mcu_resume_host_${mode} PROPERTIES LABELS embedded)
endforeach()

find_program(HOOKFUSE_ARM_CXX arm-none-eabi-g++)
find_program(HOOKFUSE_ARM_NM arm-none-eabi-nm)
find_program(HOOKFUSE_QEMU_ARM qemu-system-arm)
if(NOT HOOKFUSE_ARM_CXX OR NOT HOOKFUSE_ARM_NM OR NOT HOOKFUSE_QEMU_ARM)
  message(STATUS "hookfuse: arm-none-eabi-g++ or qemu-system-arm not found; the Cortex-M tests "
                 "are not registered (scripts/edge-check.sh installs them)")
  return()
endif()

set(mcu_dir "${PROJECT_BINARY_DIR}/embedded-mcu")
add_test(NAME embedded.mcu_build
  COMMAND "${CMAKE_COMMAND}" "-DSOURCE_DIR=${PROJECT_SOURCE_DIR}" "-DBINARY_DIR=${mcu_dir}"
          -P "${CMAKE_CURRENT_LIST_DIR}/mcu_build.cmake")
add_test(NAME embedded.mcu_no_heap_symbols
  COMMAND "${CMAKE_COMMAND}" "-DNM=${HOOKFUSE_ARM_NM}" "-DELF=${mcu_dir}/mcu_train.elf"
          -P "${CMAKE_CURRENT_LIST_DIR}/check_no_heap.cmake")
add_test(NAME embedded.mcu_train_qemu
  COMMAND "${CMAKE_COMMAND}" "-DPASS_REGEX=${mcu_pass_regex}"
          -P "${PROJECT_SOURCE_DIR}/cmake/run_checked.cmake" --
          "${HOOKFUSE_QEMU_ARM}" -M mps2-an386 -nographic -semihosting
          -kernel "${mcu_dir}/mcu_train.elf")
add_test(NAME embedded.mcu_heap_hook_fails_to_link
  COMMAND "${CMAKE_COMMAND}" --build "${mcu_dir}" --target mcu_train_heap_hook)
set_tests_properties(embedded.mcu_build PROPERTIES
  LABELS embedded FIXTURES_SETUP hookfuse_mcu TIMEOUT 600)
set_tests_properties(embedded.mcu_no_heap_symbols embedded.mcu_train_qemu
  PROPERTIES LABELS embedded FIXTURES_REQUIRED hookfuse_mcu TIMEOUT 120)
# Passes only if the link fails, naming a wrapped allocation function.
set_tests_properties(embedded.mcu_heap_hook_fails_to_link PROPERTIES
  LABELS embedded FIXTURES_REQUIRED hookfuse_mcu TIMEOUT 600
  PASS_REGULAR_EXPRESSION "undefined reference to `__wrap__Znwj'")
add_test(NAME embedded.mcu_resume_no_heap_symbols
  COMMAND "${CMAKE_COMMAND}" "-DNM=${HOOKFUSE_ARM_NM}" "-DELF=${mcu_dir}/mcu_resume.elf"
          -P "${CMAKE_CURRENT_LIST_DIR}/check_no_heap.cmake")
add_test(NAME embedded.mcu_resume_qemu
  COMMAND "${CMAKE_COMMAND}" "-DPASS_REGEX=${mcu_resume_regex}"
          -P "${PROJECT_SOURCE_DIR}/cmake/run_checked.cmake" --
          "${HOOKFUSE_QEMU_ARM}" -M mps2-an386 -nographic -semihosting
          -kernel "${mcu_dir}/mcu_resume.elf")
set_tests_properties(embedded.mcu_resume_no_heap_symbols embedded.mcu_resume_qemu
  PROPERTIES LABELS embedded FIXTURES_REQUIRED hookfuse_mcu TIMEOUT 120)
