// The fixed counterpart of tests/compile_fail/no_train_fetches_gradient.cpp: must compile.
#include "../compile_fail/lr_session.hpp"

using namespace hookfuse;

int main() {
  lr_snippet::LrModel m;
  MonitoredTrainingSession session(GradientDescentOptimizer(0.01).minimize(m.loss(), m.gs),
                                   lr_snippet::LrInput{}, hooks());
  auto values = session.run<"loss">(no_train);
  return values ? 0 : 1;
}
