# embedded/mcu_build.cmake: configures and builds embedded/ for the Cortex-M4F (ctest fixture).
#   cmake -DSOURCE_DIR=<repo> -DBINARY_DIR=<dir> -P mcu_build.cmake
execute_process(
  COMMAND "${CMAKE_COMMAND}" -S "${SOURCE_DIR}/embedded" -B "${BINARY_DIR}"
          "-DCMAKE_TOOLCHAIN_FILE=${SOURCE_DIR}/cmake/toolchain-cortex-m4.cmake"
  RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "configuring ${SOURCE_DIR}/embedded failed")
endif()
execute_process(COMMAND "${CMAKE_COMMAND}" --build "${BINARY_DIR}" --target mcu_train
                RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "building mcu_train failed")
endif()
execute_process(COMMAND "${CMAKE_COMMAND}" --build "${BINARY_DIR}" --target mcu_resume
                RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "building mcu_resume failed")
endif()
