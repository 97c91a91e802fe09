// The compiling twin of tests/compile_fail/output_dir_without_io.cpp: with
// hookfuse/io/summary_writer_cache.hpp included, StepCounterHook takes an output_dir. Compiled,
// not run.
#include <hookfuse/hooks/step_counter_hook.hpp>
#include <hookfuse/io/summary_writer_cache.hpp>

int main() {
  hookfuse::StepCounterHook<> hook({.every_n_steps = 10, .output_dir = "runs/x"});
  (void)hook;
}
