// The fixed counterpart of tests/compile_fail/profiler_protocol_incomplete.cpp: must compile.
#include "../compile_fail/lr_session.hpp"

using namespace hookfuse;

struct HalfProfiler {
  static constexpr bool wants_phase_timings = true;
  int timed = 0;
  bool should_time_step(const SessionRunContext&) { return true; }
  double now() { return 0.0; }
  void after_timed_step(const StepTimeline&) { ++timed; }
  void after_run(SessionRunContext&, const SessionRunValues<>&) {}
};

int main() { lr_snippet::train(HalfProfiler{}, StopAtStepHook({.num_steps = 2})); }
