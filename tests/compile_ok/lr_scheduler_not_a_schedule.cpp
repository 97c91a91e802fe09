// Control for tests/compile_fail/lr_scheduler_not_a_schedule.cpp: a callable of the global step.
#include <cstdint>
#include <hookfuse/hooks/learning_rate_scheduler_hook.hpp>

int main() {
  hookfuse::LearningRateSchedulerHook hook([](std::int64_t) { return 0.1; });
  (void)hook;
}
