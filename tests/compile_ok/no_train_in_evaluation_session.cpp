// The fixed counterpart of tests/compile_fail/no_train_in_evaluation_session.cpp: must compile.
#include "../compile_fail/lr_session.hpp"

using namespace hookfuse;

int main() {
  lr_snippet::LrModel m;
  MonitoredSession session(m.gs, lr_snippet::LrInput{}, hooks(), m.loss());
  return session.run() ? 0 : 1;
}
