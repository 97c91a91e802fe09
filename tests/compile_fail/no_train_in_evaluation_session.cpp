// expect: check_no_train\(\) \[with .*Session = hookfuse::MonitoredSession<.*hookfuse: run\(no_train, \.\.\.\) is for a session that trains
// run(no_train) on an evaluation session (MonitoredSession), whose runs never train: an error
// saying to call run() (detail::SessionInterface::check_no_train). Control:
// tests/compile_ok/no_train_in_evaluation_session.cpp (run()).
#include "lr_session.hpp"

using namespace hookfuse;

int main() {
  lr_snippet::LrModel m;
  MonitoredSession session(m.gs, lr_snippet::LrInput{}, hooks(), m.loss());
  return session.run(no_train) ? 0 : 1;
}
