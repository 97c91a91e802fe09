# embedded/check_core_headers.cmake: the core headers (all of include/hookfuse except data/, io/,
# distributed/ (MPI, hosted builds only), the Estimator (estimator/, nn/variable_store.hpp), the streaming metrics (metrics/) and the
# hosted-only hooks: summary_saver_hook.hpp, variable_initialization_hook.hpp and
# profiler_hook.hpp (files), final_ops_hook.hpp (copies at end() into std::vector),
# global_step_waiter_hook.hpp (sleeps with std::this_thread), csv_logger_hook.hpp (a file, through
# io/csv_writer.hpp) and progress_bar_hook.hpp (an std::ostream, std::cerr); not in core builds)
# and autodiff/thread_pool.hpp (std::thread; gemm.hpp and threads.hpp include it only outside
# HOOKFUSE_EMBEDDED)
# must not include what a bare-metal target lacks or what allocates behind the user's back.
#   cmake -DINCLUDE_DIR=<repo>/include -P check_core_headers.cmake
file(GLOB_RECURSE headers "${INCLUDE_DIR}/hookfuse/*.hpp")
set(bad "")
foreach(h IN LISTS headers)
  if(h MATCHES "/hookfuse/(data|io|estimator|metrics|distributed)/" OR h MATCHES "/hookfuse/nn/variable_store\\.hpp$" OR h MATCHES "/hookfuse/autodiff/thread_pool\\.hpp$" OR h MATCHES "/hookfuse/hooks/(summary_saver|variable_initialization|profiler|final_ops|global_step_waiter|csv_logger|progress_bar)_hook\\.hpp$")
    continue()
  endif()
  file(STRINGS "${h}" lines REGEX "^[ \t]*#[ \t]*include[ \t]*<(iostream|fstream|sstream|filesystem|functional|thread|mutex|vector|map|list|deque)>|std::function<")
  foreach(l IN LISTS lines)
    string(APPEND bad "  ${h}: ${l}\n")
  endforeach()
endforeach()
# io/ reads and writes files, except the on-device checkpoint (a byte buffer), which is core.
foreach(h IN ITEMS "${INCLUDE_DIR}/hookfuse/io/buffer_checkpoint.hpp"
                   "${INCLUDE_DIR}/hookfuse/io/detail/buffer_bytes.hpp")
  file(STRINGS "${h}" lines REGEX "^[ \t]*#[ \t]*include[ \t]*<(iostream|fstream|sstream|filesystem|functional|thread|mutex|vector|map|list|deque|string)>|std::function<")
  foreach(l IN LISTS lines)
    string(APPEND bad "  ${h}: ${l}\n")
  endforeach()
endforeach()
if(bad)
  message(FATAL_ERROR "core headers use what an embedded build cannot have:\n${bad}")
endif()
message(STATUS "core headers: no <iostream>, <fstream>, <sstream>, <filesystem>, <functional>, "
               "<thread>, <mutex>, containers or std::function")
