# embedded/check_no_heap.cmake: fails when an ELF defines or references an allocation symbol
# (malloc and friends, _sbrk, operator new[] / new: _Znw*, _Zna*).
#   cmake -DNM=arm-none-eabi-nm -DELF=mcu_train.elf -P check_no_heap.cmake
execute_process(COMMAND "${NM}" "${ELF}" OUTPUT_VARIABLE symbols RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${NM} ${ELF} failed")
endif()
string(REGEX MATCHALL "[^\n]*[ \t](_?_?(wrap_)?_?(malloc|calloc|realloc|free|memalign|sbrk|_malloc_r|_sbrk_r)|_Znw[a-zA-Z0-9_]*|_Zna[a-zA-Z0-9_]*|_Zdl[a-zA-Z0-9_]*|_Zda[a-zA-Z0-9_]*)\n"
       found "${symbols}\n")
if(found)
  message(FATAL_ERROR "${ELF} has allocation symbols:\n${found}")
endif()
message(STATUS "${ELF}: no malloc, _sbrk, operator new or delete")
