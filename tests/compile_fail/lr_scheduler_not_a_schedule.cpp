// expect: LearningRateSchedulerHook needs a schedule
// A learning rate given where a schedule is expected (a number, not a callable of the global
// step) is a compile error saying what a schedule is.
// Control: tests/compile_ok/lr_scheduler_not_a_schedule.cpp (a lambda of the global step).
#include <hookfuse/hooks/learning_rate_scheduler_hook.hpp>

int main() {
  hookfuse::LearningRateSchedulerHook hook(0.1);
  (void)hook;
}
