// expect: (check_evaluation_hook\(\) \[with Hook = GradientReader; Session = hookfuse::MonitoredSession<.*hookfuse: this hook reads gradients \(reads_gradients\), but an evaluation session computes none|hookfuse: this hook reads gradients \(reads_gradients\), but an evaluation session computes none.*check_evaluation_hook<GradientReader, hookfuse::MonitoredSession<)
// A hook that reads the variables' gradients itself (reads_gradients) in an evaluation session
// (MonitoredSession), which computes none: it would read stale memory every run, so this is a
// compile error naming the hook and the session (detail::check_evaluation_hook). Control:
// tests/compile_ok/reads_gradients_in_evaluation_session.cpp (the same hook in a training
// session).
#include "lr_session.hpp"

using namespace hookfuse;

struct GradientReader {
  static constexpr bool reads_gradients = true;
  template <class Session>
  void end(Session&) {}
};

int main() { lr_snippet::evaluate(GradientReader{}); }
