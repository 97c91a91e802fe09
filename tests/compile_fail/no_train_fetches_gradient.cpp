// expect: check_no_train_fetch\(\) \[with Hook = void; .*Name = hookfuse::fixed_string<12>[{]"gradients/W"[}].*hookfuse: session.run\(no_train\) computes no gradient
// The caller fetches a gradient in a run that does not train (session.run<...>(no_train)), which
// has no backward pass: an error naming the name (detail::check_no_train_fetch, Hook = void).
// Control: tests/compile_ok/no_train_fetches_gradient.cpp (the loss instead).
#include "lr_session.hpp"

using namespace hookfuse;

int main() {
  lr_snippet::LrModel m;
  MonitoredTrainingSession session(GradientDescentOptimizer(0.01).minimize(m.loss(), m.gs),
                                   lr_snippet::LrInput{}, hooks());
  auto values = session.run<"gradients/W">(no_train);
  return values ? 0 : 1;
}
