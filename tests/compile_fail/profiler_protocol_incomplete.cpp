// expect: (check_phase_timing_hook(\(\) \[with Hook = |<)HalfProfiler[],;>].*hookfuse: this hook declares wants_phase_timings but lacks|hookfuse: this hook declares wants_phase_timings but lacks.*check_phase_timing_hook(\(\) \[with Hook = |<)HalfProfiler[],;>])
// A hook that asks for phase timings (wants_phase_timings) but misspells a method of the timing
// protocol would never be timed: an error naming the hook, not a silent no-op.
// Control: tests/compile_ok/profiler_protocol_incomplete.cpp (the protocol complete).
#include "lr_session.hpp"

using namespace hookfuse;

struct HalfProfiler {
  static constexpr bool wants_phase_timings = true;
  int timed = 0;
  bool should_time(const SessionRunContext&) { return true; }  // should_time_step
  double now() { return 0.0; }
  void after_timed_step(const StepTimeline&) { ++timed; }
  void after_run(SessionRunContext&, const SessionRunValues<>&) {}
};

int main() { lr_snippet::train(HalfProfiler{}, StopAtStepHook({.num_steps = 2})); }
