// tests/checkpoint_fixtures.hpp: what the checkpoint tests (test_checkpoint_saver_hook,
// test_session_checkpoint) train LrModel with: a constant input that can move a fake clock,
// and a loop that runs a session until it stops.
//
// run_until_stop is kept out of lr_model.hpp on purpose: a session over an input of namespace
// hookfuse_test finds it by argument-dependent lookup, which would make it ambiguous with the
// run_until_stop other test files define for themselves.
#pragma once

#include <hookfuse/hookfuse.hpp>

#include "lr_model.hpp"

namespace hookfuse_test {

/// An input for LrModel feeding x = 1, y = 2 (one row) forever; advances `clock` (if any) by
/// `tick` seconds before each batch.
struct ConstInput {
  hookfuse::FakeClock* clock = nullptr;
  double tick = 0.0;
  float x = 1.0f;
  float y = 2.0f;
  bool next() {
    if (clock != nullptr) clock->advance(tick);
    return true;
  }
  hookfuse::Index batch_size() const { return 1; }
  template <class G>
  void feed(G& g) {
    g.template feed<"x">(&x, 1);
    g.template feed<"y">(&y, 1);
  }
};

/// Runs `session` until it should stop, at most `max_runs` times; returns the runs made.
template <class Session>
int run_until_stop(Session& session, int max_runs = 100000) {
  int runs = 0;
  while (!session.should_stop() && runs < max_runs) {
    session.run();
    ++runs;
  }
  return runs;
}

}  // namespace hookfuse_test
