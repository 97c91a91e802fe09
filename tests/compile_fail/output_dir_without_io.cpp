// expect: hookfuse: a hook's output_dir needs #include <hookfuse/io/summary_writer_cache.hpp>
// The core hooks know io::SummaryWriterCache only by a forward declaration: giving
// StepCounterHook an output_dir without the io header is a compile error that says what to
// include. (Not the umbrella header: in hosted builds it includes SummarySaverHook and with it
// the io layer.)
// Control: tests/compile_ok/output_dir_without_io.cpp (the header included).
#include <hookfuse/hooks/step_counter_hook.hpp>

int main() {
  hookfuse::StepCounterHook<> hook({.every_n_steps = 10, .output_dir = "runs/x"});
  (void)hook;
}
