// tests/test_progress_bar_hook.cpp: ProgressBarHook against tf.keras 2.x's Progbar (verbose=1):
// bar, ETA and time-per-step formats, value averaging, terminal redraws and plain lines. A fake
// clock, an ostringstream; every expected line is derived by hand in the comments.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <functional>
#include <hookfuse/hookfuse.hpp>
#include <hookfuse/hooks/progress_bar_hook.hpp>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "lr_model.hpp"

using namespace hookfuse;

namespace {

using FakeRef = ClockRef<FakeClock>;
template <fixed_string... Names>
using FakeBar = BasicProgressBarHook<FakeRef, Names...>;

/// Drives a hook by hand: each run() takes `seconds` on the clock and adds 1 to the global
/// step; the values are the floats passed.
template <class Hook, fixed_string... Names>
struct Driver {
  Hook& hook;
  FakeClock& clock;
  std::int64_t gs = 0;
  std::string fetched;  // '1' for a run whose before_run asked for the tensors, else '0'

  Driver(Hook& h, FakeClock& c) : hook(h), clock(c) {}

  void run(double seconds, std::initializer_list<float> vs) {
    SessionRunContext ctx(&gs);
    const bool active = hook.before_run(ctx).active;
    fetched += active ? '1' : '0';
    clock.advance(seconds);
    ++gs;
    std::vector<float> storage(vs);
    SessionRunValues<Names...> values{};
    if (active)
      for (std::size_t i = 0; i < storage.size(); ++i)
        values.results[i] = TensorValue{&storage[i], 1, 1, 1, 1, DType::float32};
    hook.after_run(ctx, values);
  }
};

std::string eta(double s) {
  std::string out;
  detail::append_keras_eta(out, s);
  return out;
}
std::string per_step(double s) {
  std::string out;
  detail::append_keras_time_per_step(out, s);
  return out;
}
std::string value(double v) {
  std::string out;
  detail::append_keras_value(out, v);
  return out;
}

/// Run k (from 1) feeds x = k / 4 and y = k: the loss (W = b = 0) is k^2.
using CountingInput = hookfuse_test::QuarterInput;

}  // namespace

TEST_CASE("Keras' ETA, time-per-step and value formats", "[progress][format]") {
  // ETA: '%d:%02d:%02d' % (eta // 3600, (eta % 3600) // 60, eta % 60) past 3600 s,
  // '%d:%02d' % (eta // 60, eta % 60) past 60 s, else '%ds' % eta (%d truncates).
  CHECK(eta(3725.9) == "1:02:05");  // 1 h, 125.9 s -> 2 min, 5.9 s -> 5
  CHECK(eta(3600.0) == "60:00");    // not > 3600
  CHECK(eta(83.7) == "1:23");
  CHECK(eta(60.0) == "60s");
  CHECK(eta(59.9) == "59s");
  CHECK(eta(0.4) == "0s");
  // Time per step: ' %.0fs/step' from 1 s or at 0, ' %.0fms/step' from 1 ms, else us.
  CHECK(per_step(0.0) == " 0s/step");
  CHECK(per_step(2.5) == " 2s/step");  // %.0f rounds half to even
  CHECK(per_step(0.0456) == " 46ms/step");
  CHECK(per_step(0.0004) == " 400us/step");
  // Values: ' %.4f' when abs(v) > 1e-3, else ' %.4e'.
  CHECK(value(0.52341) == "0.5234");
  CHECK(value(-0.5) == "-0.5000");
  CHECK(value(0.001) == "1.0000e-03");
  CHECK(value(0.0) == "0.0000e+00");
  CHECK(value(std::nan("")) == "nan");
  CHECK(value(-std::nan("")) == "nan");
  CHECK(value(std::numeric_limits<double>::infinity()) == "inf");
}

TEST_CASE("ProgressBarHook off a terminal: a line every every_n_iter runs and at the total",
          "[progress][lines]") {
  FakeClock clock;
  std::ostringstream out;
  FakeBar<"loss"> hook(
      {.total = 10, .width = 10, .stream = &out, .is_tty = false, .every_n_iter = 4},
      FakeRef{&clock});
  REQUIRE_FALSE(hook.is_tty());
  hook.begin();
  Driver<FakeBar<"loss">, "loss"> d(hook, clock);
  // The first run takes 2 s, the others 1 s; run k fetches loss k.
  for (int k = 1; k <= 10; ++k) d.run(k == 1 ? 2.0 : 1.0, {static_cast<float>(k)});
  std::ostringstream end_out;
  hook.end(end_out);  // the run that reached the total printed the last line
  // Run 4 (step 4, t = 5): loss 4 counts for the 4 steps since the start: average 4. Time per
  // step (t - end of run 1) / (steps since) = (5 - 2) / 3 = 1; ETA 1 * (10 - 4) = 6 s; bar
  // int(10 * 4/10) = 4: "===>" and 6 dots; count padded to 2 digits.
  // Run 8 (t = 9): (16 + 8 * 4) / 8 = 6; (9 - 2) / 7 = 1 s; ETA 2 s; bar 8: "=======>..".
  // Run 10 reaches the total (t = 11): (48 + 10 * 2) / 10 = 6.8; elapsed 11 s; (11 - 2) / 9 = 1.
  CHECK(out.str() ==
        " 4/10 [===>......] - ETA: 6s - 1.0 steps/sec - loss: 4.0000\n"
        " 8/10 [=======>..] - ETA: 2s - 1.0 steps/sec - loss: 6.0000\n"
        "10/10 [==========] - 11s 1s/step - 1.0 steps/sec - loss: 6.8000\n");
  // The tensors were fetched only in the runs that printed.
  CHECK(d.fetched == "0001000101");
}

TEST_CASE("ProgressBarHook on a terminal: redraws in place at most every interval seconds",
          "[progress][tty]") {
  FakeClock clock;
  std::ostringstream out;
  FakeBar<"loss", "acc"> hook({.total = 4,
                               .width = 8,
                               .stream = &out,
                               .is_tty = true,
                               .interval = 0.5,
                               .stateful_metrics = {"acc"}},
                              FakeRef{&clock});
  hook.begin();
  Driver<FakeBar<"loss", "acc">, "loss", "acc"> d(hook, clock);
  // Every run takes 0.5 s; run k: loss k, acc k / 4 (stateful: shown as is).
  for (int k = 1; k <= 4; ++k) d.run(0.5, {static_cast<float>(k), static_cast<float>(k) / 4.0f});
  // Run 1 draws (the first; t = 0.5): time per step (0.5 - 0) / 1; ETA 0.5 * 3 = 1.5 -> 1s;
  // bar int(8 / 4) = 2: "=>". Run 2 starts at 0.5, 0 s after that drawing: no. Run 3 starts at
  // 1.0, 0.5 s after: draws at t = 1.5: loss (1 + 3 * 2) / 3 = 2.3333, time per step
  // (1.5 - 0.5) / 2 = 0.5, ETA 0.5 -> 0s, bar int(8 * 3/4) = 6. Run 4 reaches the total
  // (t = 2): (7 + 4) / 4 = 2.75, elapsed 2 s, (2 - 0.5) / 3 = 0.5 s = 500ms/step; newline.
  CHECK(out.str() ==
        "\r1/4 [=>......] - ETA: 1s - 2.0 steps/sec - loss: 1.0000 - acc: 0.2500"
        "\r3/4 [=====>..] - ETA: 0s - 2.0 steps/sec - loss: 2.3333 - acc: 0.7500"
        "\r4/4 [========] - 2s 500ms/step - 2.0 steps/sec - loss: 2.7500 - acc: 1.0000\n");
  CHECK(d.fetched == "1011");
}

TEST_CASE(
    "ProgressBarHook without a total: no bar, no ETA, a shorter line is padded, end() "
    "ends the line",
    "[progress][tty]") {
  FakeClock clock;
  std::ostringstream out;
  FakeBar<"loss"> hook({.stream = &out, .is_tty = true, .interval = 0.0}, FakeRef{&clock});
  hook.begin();
  Driver<FakeBar<"loss">, "loss"> d(hook, clock);
  d.run(2.0, {1000.0f});
  d.run(2.0, {-980.0f});
  std::ostringstream unused;
  hook.end(unused);
  // '%7d/Unknown', then elapsed and time per step: run 1 at t = 2: 2 s, 2 s/step, 0.5 steps/sec,
  // loss 1000 (62 characters). Run 2 at t = 4: (4 - 2) / 1 = 2 s/step, loss (1000 - 980) / 2 =
  // 10 (60 characters): 2 spaces cover the end of the previous line. end() draws the last line
  // at t = 4 again and ends it.
  CHECK(out.str() ==
        "\r      1/Unknown - 2s 2s/step - 0.5 steps/sec - loss: 1000.0000"
        "\r      2/Unknown - 4s 2s/step - 0.5 steps/sec - loss: 10.0000  "
        "\r      2/Unknown - 4s 2s/step - 0.5 steps/sec - loss: 10.0000\n");
}

TEST_CASE("ProgressBarHook: a session that stops before the total prints its last line at end()",
          "[progress][lines]") {
  FakeClock clock;
  std::ostringstream out;
  FakeBar<"loss"> hook({.total = 100, .width = 10, .stream = &out, .is_tty = false},
                       FakeRef{&clock});
  hook.begin();
  Driver<FakeBar<"loss">, "loss"> d(hook, clock);
  for (int k = 1; k <= 5; ++k) d.run(1.0, {0.5f});
  int session = 0;
  hook.end(session);
  // Nothing fetched before (every_n_iter 100): no value to show, as Keras shows a metric from
  // its first update on. Step 5 of 100, t = 5: int(10 * 5 / 100) = 0 drawn; elapsed 5 s;
  // (5 - 1) / 4 = 1 s/step.
  CHECK(out.str() == "  5/100 [..........] - 5s 1s/step - 1.0 steps/sec\n");
  CHECK(d.fetched == "00000");
}

TEST_CASE("ProgressBarHook: runs past the total keep the usual cadence, without an ETA",
          "[progress][lines]") {
  FakeClock clock;
  std::ostringstream out;
  FakeBar<"loss"> hook({.total = 2, .width = 4, .stream = &out, .is_tty = false, .every_n_iter = 3},
                       FakeRef{&clock});
  hook.begin();
  Driver<FakeBar<"loss">, "loss"> d(hook, clock);
  for (int k = 1; k <= 4; ++k) d.run(1.0, {static_cast<float>(k)});
  int session = 0;
  hook.end(session);
  // Run 2 reaches the total (t = 2): loss 2 for 2 steps; (2 - 1) / 1 = 1 s/step. Run 3 is the
  // every_n_iter line (t = 3): (4 + 3) / 3; past the total: elapsed and time per step, the bar
  // full. Run 4 draws nothing; end() prints the last line at step 4 with the same values.
  CHECK(out.str() ==
        "2/2 [====] - 2s 1s/step - 1.0 steps/sec - loss: 2.0000\n"
        "3/2 [====] - 3s 1s/step - 1.0 steps/sec - loss: 2.3333\n"
        "4/2 [====] - 4s 1s/step - 1.0 steps/sec - loss: 2.3333\n");
  CHECK(d.fetched == "0110");
}

TEST_CASE("ProgressBarHook in a MonitoredTrainingSession", "[progress][session]") {
  hookfuse_test::LrModel m;
  FakeClock clock;
  std::ostringstream out;
  FakeBar<"loss"> hook({.total = 3, .stream = &out, .is_tty = false}, FakeRef{&clock});
  {
    MonitoredTrainingSession session(m.train_op(), CountingInput{}, hooks(std::ref(hook)));
    while (!session.should_stop() && m.gs.value < 3) session.run();
  }
  // Only the run that reaches step 3 fetches: loss 9 (y = 3) for the 3 steps since the start.
  // No time passed: 0s, 0s/step, no steps/sec. The default width is 30.
  CHECK(out.str() == "3/3 [==============================] - 0s 0s/step - loss: 9.0000\n");
}

TEST_CASE("ProgressBarHook checks its options", "[progress][errors]") {
  std::ostringstream out;
  CHECK_THROWS_AS(ProgressBarHook<"loss">({.total = 0, .stream = &out}), std::invalid_argument);
  CHECK_THROWS_AS(ProgressBarHook<"loss">({.width = 0, .stream = &out}), std::invalid_argument);
  CHECK_THROWS_AS(ProgressBarHook<"loss">({.stream = &out, .interval = -1.0}),
                  std::invalid_argument);
  CHECK_THROWS_AS(ProgressBarHook<"loss">({.stream = &out, .every_n_iter = 0}),
                  std::invalid_argument);
  try {
    ProgressBarHook<"loss">({.stream = &out, .stateful_metrics = {"acc"}});
    FAIL("no error");
  } catch (const std::invalid_argument& e) {
    CHECK(std::string(e.what()) ==
          "ProgressBarHook: stateful_metrics names 'acc', which is not one of the hook's tensors");
  }
  // Any stream other than the standard ones is not a terminal.
  CHECK_FALSE(ProgressBarHook<"loss">({.stream = &out}).is_tty());
}
