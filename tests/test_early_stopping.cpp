// EarlyStoppingHook (keras.callbacks.EarlyStopping's rules) and hook state in checkpoints
// ("hooks/<hook name>/<field>", session/hook_state.hpp): exact stopping steps on fed sequences,
// best weights restored, a resumed run stopping where an uninterrupted one does.
#include <algorithm>
#include <array>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <hookfuse/hookfuse.hpp>
#include <hookfuse/io/checkpoint_reader.hpp>
#include <limits>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <vector>

#include "temp_dir.hpp"

namespace hf = hookfuse;
namespace fs = std::filesystem;

namespace {

/// One-feature linear regression in double, loss = mean((W x + b - y)^2) with y = 0, from W = 0.5,
/// b = -0.25; "probe" = sum(x) over the one-row batch: the monitored value is the fed x.
struct Model {
  hf::Placeholder<"x", double, 1> x;
  hf::Placeholder<"y", double, 1> y;
  hf::Variable<"W", double, 1, 1> W;
  hf::Variable<"b", double, 1, 1> b;
  hf::GlobalStep gs;
  Model() {
    W.value(0, 0) = 0.5;
    b.value(0, 0) = -0.25;
  }
  auto loss() { return hf::named<"loss">(hf::mean_squared_error(y, hf::matmul(x, W) + b)); }
  auto probe() { return hf::named<"probe">(hf::reduce_sum(x)); }
  auto train_op(double lr = 0.01) { return hf::GradientDescentOptimizer(lr).minimize(loss(), gs); }
};

/// Run t feeds x = (*seq)[t], y = 0, from t = start; ends after the last value.
struct SequenceInput {
  const std::vector<double>* seq;
  std::size_t t = 0;
  double x = 0.0, y = 0.0;
  bool next() {
    if (t >= seq->size()) return false;
    x = (*seq)[t++];
    return true;
  }
  hf::Index batch_size() const { return 1; }
  template <class G>
  void feed(G& g) {
    g.template feed<"x">(&x, 1);
    g.template feed<"y">(&y, 1);
  }
};

/// SGD by hand on the first `runs` values of seq, rate lr: {W, b}. With one row and y = 0,
/// e = W x + b, dloss/dW = 2 e x, dloss/db = 2 e.
std::array<double, 2> sgd_by_hand(const std::vector<double>& seq, std::size_t runs, double lr) {
  double W = 0.5, b = -0.25;
  for (std::size_t t = 0; t < runs; ++t) {
    const double x = seq[t];
    const double e = W * x + b;
    const double gW = 2 * e * x, gb = 2 * e;
    W -= lr * gW;
    b -= lr * gb;
  }
  return {W, b};
}

template <class S>
void run_until_stop(S& s) {
  while (!s.should_stop()) s.run();
}

using ES = hf::EarlyStoppingHook<"probe", hf::NullLogger>;
using Quiet = hf::SessionOptions<hf::io::Saver, hf::SteadyClock, hf::NullLogger>;

}  // namespace

TEST_CASE("EarlyStoppingHook: Keras' wait counter and min_delta, restores the best weights",
          "[hooks][early_stopping]") {
  // tf.keras EarlyStopping.on_epoch_end by hand, mode min, min_delta 0.1, patience 2, one check
  // per run (check c after run c, global step c + 1 after it): wait += 1; improved when
  // v + 0.1 < best: best = v, wait = 0; stop when wait >= 2 and c > 0.
  //  c  v     improved           wait
  //  0  5.0   yes (inf)          0
  //  1  4.0   yes (4.1 < 5)      0
  //  2  3.95  no (4.05 >= 4)     1
  //  3  3.0   yes (3.1 < 4)      0     best: global step 4
  //  4  3.5   no                 1
  //  5  2.95  no (3.05 >= 3)     2 -> stop at global step 6
  const std::vector<double> seq = {5.0, 4.0, 3.95, 3.0, 3.5, 2.95, 1.0, 0.5};
  const std::array<std::int64_t, 6> wait = {0, 0, 1, 0, 1, 2};
  Model m;
  hf::MonitoredTrainingSession s(
      m.train_op(), SequenceInput{&seq},
      hf::hooks(ES({.min_delta = 0.1, .patience = 2, .restore_best_weights = true})), m.probe());
  for (std::size_t c = 0; c < 6; ++c) {
    INFO("check " << c);
    REQUIRE(!s.should_stop());
    s.run();
    CHECK(s.hook<0>().wait() == wait[c]);
  }
  CHECK(s.should_stop());
  CHECK(s.global_step() == 6);
  CHECK(s.hook<0>().stopped_step() == 6);
  CHECK(s.hook<0>().best() == 3.0);
  CHECK(s.hook<0>().best_step() == 4);
  // The weights after the best check's run (4 SGD runs), not those after 6 runs.
  const auto best = sgd_by_hand(seq, 4, 0.01);
  const auto last = sgd_by_hand(seq, 6, 0.01);
  REQUIRE(std::fabs(best[0] - last[0]) > 1e-6);
  CHECK(m.W.value(0, 0) == Approx(best[0]).epsilon(1e-12));
  CHECK(m.b.value(0, 0) == Approx(best[1]).epsilon(1e-12));
}

TEST_CASE("EarlyStoppingHook: the best weights in a caller's buffer (the embedded way)",
          "[hooks][early_stopping]") {
  // The sequence of the first case: stops at step 6 with the weights of step 4. W and b are two
  // doubles: 16 bytes, W first (tape order).
  const std::vector<double> seq = {5.0, 4.0, 3.95, 3.0, 3.5, 2.95, 1.0, 0.5};
  std::array<double, 2> buffer{};
  Model m;
  hf::MonitoredTrainingSession s(
      m.train_op(), SequenceInput{&seq},
      hf::hooks(ES({.min_delta = 0.1,
                    .patience = 2,
                    .restore_best_weights = true,
                    .best_weights_buffer = std::as_writable_bytes(std::span(buffer))})),
      m.probe());
  CHECK(ES::best_weights_bytes(s) == 16);
  run_until_stop(s);
  CHECK(s.global_step() == 6);
  const auto best = sgd_by_hand(seq, 4, 0.01);
  CHECK(buffer[0] == Approx(best[0]).epsilon(1e-12));
  CHECK(buffer[1] == Approx(best[1]).epsilon(1e-12));
  CHECK(m.W.value(0, 0) == Approx(best[0]).epsilon(1e-12));

  std::array<double, 1> small{};
  Model m2;
  CHECK_THROWS_AS(
      hf::MonitoredTrainingSession(
          m2.train_op(), SequenceInput{&seq},
          hf::hooks(ES({.restore_best_weights = true,
                        .best_weights_buffer = std::as_writable_bytes(std::span(small))})),
          m2.probe()),
      std::invalid_argument);
}

TEST_CASE("EarlyStoppingHook: without restore_best_weights the last weights stay",
          "[hooks][early_stopping]") {
  const std::vector<double> seq = {5.0, 4.0, 3.95, 3.0, 3.5, 2.95, 1.0, 0.5};
  Model m;
  const ES hook({.min_delta = 0.1, .patience = 2});  // copied into the session
  hf::MonitoredTrainingSession s(m.train_op(), SequenceInput{&seq}, hf::hooks(hook), m.probe());
  run_until_stop(s);
  CHECK(s.global_step() == 6);
  const auto last = sgd_by_hand(seq, 6, 0.01);
  CHECK(m.W.value(0, 0) == Approx(last[0]).epsilon(1e-12));
  CHECK(m.b.value(0, 0) == Approx(last[1]).epsilon(1e-12));
}

// tf-keras 2.15.0, tf_keras/callbacks.py, EarlyStopping.on_epoch_end (the rules of every
// EarlyStoppingHook case here):
//         self.wait += 1
//         if self._is_improvement(current, self.best):
//             self.best = current
//             self.best_epoch = epoch
//             if self.restore_best_weights:
//                 self.best_weights = self.model.get_weights()
//             # Only restart wait if we beat both the baseline and our previous
//             # best.
//             if self.baseline is None or self._is_improvement(
//                 current, self.baseline
//             ):
//                 self.wait = 0
//             return
//
//         # Only check after the first epoch.
//         if self.wait >= self.patience and epoch > 0:
//             self.stopped_epoch = epoch
//             self.model.stop_training = True

TEST_CASE("EarlyStoppingHook: patience 0 never stops on an improving check",
          "[hooks][early_stopping]") {
  // Mode min, patience 0, min_delta 0, one check per run (check c after run c, global step
  // c + 1). Every check that improves returns before the stop test, so wait >= 0 never stops
  // one; the first check that does not improve stops:
  //  c  v    improved  wait  stop?
  //  0  3.0  yes       0     no (returned)
  //  1  2.0  yes       0     no (returned)
  //  2  1.0  yes       0     no (returned)
  //  3  0.0  yes       0     no (returned)
  //  4  0.5  no        1     1 >= 0 and epoch 4 > 0: stop at global step 5
  {
    const std::vector<double> seq = {3.0, 2.0, 1.0, 0.0, 0.5, -1.0};
    Model m;
    hf::MonitoredTrainingSession s(m.train_op(), SequenceInput{&seq}, hf::hooks(ES()), m.probe());
    for (int c = 0; c < 4; ++c) {
      INFO("check " << c);
      s.run();
      CHECK_FALSE(s.should_stop());
      CHECK(s.hook<0>().wait() == 0);
    }
    s.run();
    CHECK(s.should_stop());
    CHECK(s.global_step() == 5);
    CHECK(s.hook<0>().stopped_step() == 5);
    CHECK(s.hook<0>().best() == 0.0);
    CHECK(s.hook<0>().best_step() == 4);
  }
  // A check that does not improve at epoch 0 (NaN) does not stop either ("epoch > 0"):
  //  c0 NaN: wait 1, not improved, epoch 0; c1 1.0 improves (returned); c2 1.0: wait 1, stop at
  //  global step 3.
  {
    const std::vector<double> seq = {std::numeric_limits<double>::quiet_NaN(), 1.0, 1.0, 0.0};
    Model m;
    hf::MonitoredTrainingSession s(m.train_op(), SequenceInput{&seq}, hf::hooks(ES()), m.probe());
    run_until_stop(s);
    CHECK(s.global_step() == 3);
    CHECK(s.hook<0>().stopped_step() == 3);
  }
}

TEST_CASE("EarlyStoppingHook: improving above the baseline never stops, beating it resets wait",
          "[hooks][early_stopping]") {
  // Mode min, baseline 1.0, patience 2. Each check below improves on best but not on the
  // baseline: wait keeps growing (no reset), yet the check returns before the stop test:
  //  c  v    improved (best)  beats 1.0  wait  stop?
  //  0  3.0  yes              no         1     no (returned)
  //  1  2.5  yes              no         2     no (returned; wait >= patience already)
  //  2  2.0  yes              no         3     no (returned)
  //  3  1.5  yes              no         4     no (returned)
  //  4  1.6  no               -          5     5 >= 2, epoch 4 > 0: stop at global step 5
  {
    const std::vector<double> seq = {3.0, 2.5, 2.0, 1.5, 1.6, 0.5};
    const std::array<std::int64_t, 4> wait = {1, 2, 3, 4};
    Model m;
    hf::MonitoredTrainingSession s(m.train_op(), SequenceInput{&seq},
                                   hf::hooks(ES({.patience = 2, .baseline = 1.0})), m.probe());
    for (std::size_t c = 0; c < 4; ++c) {
      INFO("check " << c);
      s.run();
      CHECK_FALSE(s.should_stop());
      CHECK(s.hook<0>().wait() == wait[c]);
    }
    s.run();
    CHECK(s.should_stop());
    CHECK(s.global_step() == 5);
    CHECK(s.hook<0>().wait() == 5);
    CHECK(s.hook<0>().best() == 1.5);
    CHECK(s.hook<0>().best_step() == 4);
  }
  // "accuracy" ends in "accuracy": mode automatic is max. baseline 0.5, patience 2. Beating
  // the baseline at c1 resets the counter: 0.3 (wait 1, returned), 0.6 (improves, beats 0.5:
  // wait 0, returned), 0.55 (wait 1), 0.58 (wait 2 >= 2: stop at global step 4).
  {
    const std::vector<double> seq = {0.3, 0.6, 0.55, 0.58, 0.1, 0.1};
    Model m;
    auto accuracy = hf::named<"accuracy">(hf::reduce_sum(m.x));
    hf::MonitoredTrainingSession s(m.train_op(), SequenceInput{&seq},
                                   hf::hooks(hf::EarlyStoppingHook<"accuracy", hf::NullLogger>(
                                       {.patience = 2, .baseline = 0.5})),
                                   accuracy);
    CHECK(s.hook<0>().maximize());
    run_until_stop(s);
    CHECK(s.global_step() == 4);
    CHECK(s.hook<0>().best() == 0.6);
  }
}

TEST_CASE("EarlyStoppingHook: mode automatic maximises val_auc (names ending in acc/accuracy/auc)",
          "[hooks][early_stopping]") {
  // tf-keras 2.15.0, EarlyStopping.__init__:
  //         else:
  //             if (
  //                 self.monitor.endswith("acc")
  //                 or self.monitor.endswith("accuracy")
  //                 or self.monitor.endswith("auc")
  //             ):
  //                 self.monitor_op = np.greater
  //             else:
  //                 self.monitor_op = np.less
  // So "val_auc" is max. patience 1: c0 0.6 best; c1 0.7 best (0.7 > 0.6); c2 0.65: wait 1 >= 1,
  // stop at global step 3. (As mode min it would stop at step 2: 0.7 does not go below 0.6.)
  const std::vector<double> seq = {0.6, 0.7, 0.65, 0.9};
  Model m;
  auto val_auc = hf::named<"val_auc">(hf::reduce_sum(m.x));
  hf::MonitoredTrainingSession s(
      m.train_op(), SequenceInput{&seq},
      hf::hooks(hf::EarlyStoppingHook<"val_auc", hf::NullLogger>({.patience = 1})), val_auc);
  CHECK(s.hook<0>().maximize());
  run_until_stop(s);
  CHECK(s.global_step() == 3);
  CHECK(s.hook<0>().best() == 0.7);
  CHECK(s.hook<0>().best_step() == 2);
  // The suffix, not the substring: "acc_loss" is min, "val_acc" and "val_accuracy" are max.
  CHECK_FALSE(hf::EarlyStoppingHook<"acc_loss", hf::NullLogger>().maximize());
  CHECK(hf::EarlyStoppingHook<"val_acc", hf::NullLogger>().maximize());
  CHECK(hf::EarlyStoppingHook<"val_accuracy", hf::NullLogger>().maximize());
  CHECK_FALSE(
      hf::EarlyStoppingHook<"val_auc", hf::NullLogger>({.mode = hf::MonitorMode::min}).maximize());
  // ReduceLROnPlateau keeps its own rule in the same release (ReduceLROnPlateau._reset):
  //         if self.mode == "min" or (
  //             self.mode == "auto" and "acc" not in self.monitor
  //         ):
  // so there "val_auc" is min and "acc_loss" max.
  CHECK_FALSE(hf::ReduceLROnPlateauHook<"val_auc", hf::NullLogger>().maximize());
  CHECK(hf::ReduceLROnPlateauHook<"acc_loss", hf::NullLogger>().maximize());
}

TEST_CASE("EarlyStoppingHook: NaN never improves, logs the stop and the restore",
          "[hooks][early_stopping]") {
  struct Lines {
    std::vector<std::string>* out;
    void log(hf::Severity, std::string_view text) const { out->emplace_back(text); }
  };
  std::vector<std::string> lines;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  // c0 2.0 best; c1 NaN: wait 1; c2 NaN: wait 2 -> stop at 3 (patience 2).
  const std::vector<double> seq = {2.0, nan, nan, 1.0};
  Model m;
  hf::MonitoredTrainingSession s(m.train_op(), SequenceInput{&seq},
                                 hf::hooks(hf::EarlyStoppingHook<"probe", Lines>(
                                     {.patience = 2, .restore_best_weights = true}, Lines{&lines})),
                                 m.probe());
  // NaN fed as x makes the loss NaN too; the hook only compares.
  run_until_stop(s);
  CHECK(s.global_step() == 3);
  REQUIRE(lines.size() == 2);
  CHECK(lines[0] == "Step 3: early stopping.");
  CHECK(lines[1] == "Restoring model weights from the end of the best check: step 1.");
  const auto best = sgd_by_hand(seq, 1, 0.01);
  CHECK(m.W.value(0, 0) == Approx(best[0]).epsilon(1e-12));
}

TEST_CASE("EarlyStoppingHook: requests its tensor only on the runs it checks, argument checks",
          "[hooks][early_stopping]") {
  ES hook({.every_n_iter = 3});
  std::int64_t step = 0;
  hf::SessionRunContext ctx(&step);
  std::vector<bool> active;
  for (int i = 0; i < 7; ++i) active.push_back(hook.before_run(ctx).active);
  CHECK(active == std::vector<bool>{false, false, true, false, false, true, false});
  CHECK_THROWS_WITH(ES({.patience = -1}), "EarlyStoppingHook: patience must be >= 0, got -1");
  CHECK_THROWS_WITH(ES({.mode = static_cast<hf::MonitorMode>(5)}),
                    "EarlyStoppingHook: mode must be automatic, min or max, got 5");
  CHECK_THROWS_AS(ES({.every_n_iter = 0}), std::invalid_argument);
  CHECK_THROWS_AS(ES({.min_delta = std::numeric_limits<double>::infinity()}),
                  std::invalid_argument);
  CHECK_THROWS_AS(ES({.baseline = std::numeric_limits<double>::quiet_NaN()}),
                  std::invalid_argument);
  CHECK_FALSE(ES().maximize());
  CHECK(ES({.mode = hf::MonitorMode::max}).maximize());
}

TEST_CASE("EarlyStoppingHook on an evaluation metric: val_loss of a second graph, every 2 runs",
          "[hooks][early_stopping]") {
  // Keras' EarlyStopping(monitor="val_loss", patience=2, restore_best_weights=True) with
  // validation data, one "epoch" = 2 runs. Training: SGD at rate 0.1 on the x of seq (y = 0);
  // validation: one point x = 1.5, y = 0.6, val_loss = (1.5 W + b - 0.6)^2 from a second graph
  // bound to the same variables. With the weights of sgd_by_hand (W, b after k runs):
  //  check  after run  W          b          val_loss                      wait
  //  0      2          0.42       -0.33      (0.63 - 0.33 - 0.6)^2 = 0.09   0 (best)
  //  1      4          -0.0192    -0.0672    (-0.696)^2 = 0.484416          1
  //  2      6          0.036096   -0.022656  (-0.568512)^2 = 0.3232059      2 -> stop at step 6
  // and the weights of step 2 come back.
  const std::vector<double> seq = {1.0, 1.0, -2.0, 1.0, 3.0, -1.0, 2.0, 1.0, 1.0, 1.0};
  Model m;
  auto val = hf::bind(1, m.loss());
  double x_val = 1.5, y_val = 0.6;
  std::vector<double> seen_W, seen_val;
  auto evaluate = [&] {
    val.feed<"x">(&x_val, 1);
    val.feed<"y">(&y_val, 1);
    const double v = static_cast<double>(val.forward());
    seen_W.push_back(m.W.value(0, 0));
    seen_val.push_back(v);
    return v;
  };
  auto hook = hf::early_stopping_on_evaluation<"val_loss", hf::NullLogger>(
      evaluate, {.patience = 2, .restore_best_weights = true, .every_n_iter = 2});
  // The training session fetches nothing for it.
  STATIC_REQUIRE(std::is_same_v<decltype(hook)::RunArgs, hf::SessionRunArgs<>>);
  CHECK_FALSE(hook.maximize());
  hf::MonitoredTrainingSession s(m.train_op(0.1), SequenceInput{&seq}, hf::hooks(hook));
  run_until_stop(s);
  CHECK(s.global_step() == 6);
  CHECK(s.hook<0>().stopped_step() == 6);
  CHECK(s.hook<0>().best_step() == 2);
  CHECK(s.hook<0>().best() == Approx(0.09).epsilon(1e-12));
  // Evaluated once per check, after that check's run: the weights of runs 2, 4, 6.
  REQUIRE(seen_W.size() == 3);
  for (std::size_t c = 0; c < 3; ++c) {
    INFO("check " << c);
    const auto w = sgd_by_hand(seq, 2 * (c + 1), 0.1);
    CHECK(seen_W[c] == Approx(w[0]).epsilon(1e-12));
    CHECK(seen_val[c] == Approx(std::pow(1.5 * w[0] + w[1] - 0.6, 2)).epsilon(1e-12));
  }
  CHECK(seen_val[1] == Approx(0.484416).epsilon(1e-9));
  CHECK(seen_val[2] == Approx(0.323205894144).epsilon(1e-9));
  // Restored: the weights after run 2 (W 0.42, b -0.33), not those after run 6.
  CHECK(m.W.value(0, 0) == Approx(0.42).epsilon(1e-12));
  CHECK(m.b.value(0, 0) == Approx(-0.33).epsilon(1e-12));
}

TEST_CASE("EarlyStoppingHook on an evaluation metric: val_accuracy is mode max, state keys",
          "[hooks][early_stopping]") {
  // "val_accuracy" ends in "accuracy": mode automatic is max. patience 1, one check per run:
  //  c0 0.5 best (wait 0); c1 0.7 best (0); c2 0.6 wait 1 >= 1 -> stop at global step 3.
  const std::vector<double> metric = {0.5, 0.7, 0.6, 0.9};
  const std::vector<double> seq(6, 1.0);
  std::size_t calls = 0;
  Model m;
  hf::MonitoredTrainingSession s(
      m.train_op(), SequenceInput{&seq},
      hf::hooks(hf::early_stopping_on_evaluation<"val_accuracy", hf::NullLogger>(
          [&] { return metric.at(calls++); }, {.patience = 1})));
  CHECK(s.hook<0>().maximize());
  run_until_stop(s);
  CHECK(s.global_step() == 3);
  CHECK(calls == 3);
  CHECK(s.hook<0>().best() == 0.7);
  CHECK(s.hook<0>().best_step() == 2);
  // The same resumable state as on a training tensor.
  const auto state = s.hook<0>().checkpoint_state();
  CHECK(std::tuple_size_v<decltype(state)> == 6);
  CHECK(*std::get<1>(state).value == 1);  // wait
  CHECK(*std::get<2>(state).value == 3);  // checks
}

TEST_CASE("Hook state: keys hooks/<name>/<field>, a second hook of one name is <name>_1",
          "[hooks][early_stopping][checkpoint]") {
  const std::vector<double> seq = {1.0};
  Model m;
  auto accuracy = hf::named<"accuracy">(hf::reduce_sum(m.x));
  hf::MonitoredTrainingSession s(m.train_op(), SequenceInput{&seq},
                                 hf::hooks(hf::StopAtStepHook({.num_steps = 5}), ES(),
                                           hf::EarlyStoppingHook<"accuracy", hf::NullLogger>(),
                                           hf::ReduceLROnPlateauHook<"probe", hf::NullLogger>()),
                                 m.probe(), accuracy);
  const auto vars = s.variables();
  std::vector<std::string> names;
  for (const auto& v : vars) names.emplace_back(v.name);
  // W, b, global_step, then 6 + 6 + 5 hook fields in hook order.
  const std::vector<std::string> expected = {"W",
                                             "b",
                                             "global_step",
                                             "hooks/EarlyStoppingHook/best",
                                             "hooks/EarlyStoppingHook/wait",
                                             "hooks/EarlyStoppingHook/checks",
                                             "hooks/EarlyStoppingHook/runs_to_check",
                                             "hooks/EarlyStoppingHook/best_step",
                                             "hooks/EarlyStoppingHook/stopped_step",
                                             "hooks/EarlyStoppingHook_1/best",
                                             "hooks/EarlyStoppingHook_1/wait",
                                             "hooks/EarlyStoppingHook_1/checks",
                                             "hooks/EarlyStoppingHook_1/runs_to_check",
                                             "hooks/EarlyStoppingHook_1/best_step",
                                             "hooks/EarlyStoppingHook_1/stopped_step",
                                             "hooks/ReduceLROnPlateauHook/best",
                                             "hooks/ReduceLROnPlateauHook/wait",
                                             "hooks/ReduceLROnPlateauHook/cooldown_counter",
                                             "hooks/ReduceLROnPlateauHook/lr",
                                             "hooks/ReduceLROnPlateauHook/runs_to_check"};
  CHECK(names == expected);
  CHECK(vars[3].dtype == hf::DType::float64);
  CHECK(vars[4].dtype == hf::DType::int64);
  CHECK(vars[3].shape.rank == 0);
  CHECK(vars[3].optional);
  CHECK_FALSE(vars[0].optional);
}

TEST_CASE("Hook state: a resumed run stops at the step an uninterrupted run stops at",
          "[hooks][early_stopping][checkpoint]") {
  // mode min, patience 3, min_delta 0: improvements at c0 (5), c1 (4), c3 (3), c6 (2.9); wait
  // after c7..c9: 1, 2, 3 -> stop at check 9, global step 10.
  const std::vector<double> seq = {5.0, 4.0, 4.5, 3.0, 3.2, 3.1, 2.9, 3.0, 3.0, 3.0, 2.0, 1.0};
  const ES::Options opts{.patience = 3};
  Model straight;
  {
    hf::MonitoredTrainingSession s(straight.train_op(), SequenceInput{&seq}, hf::hooks(ES(opts)),
                                   straight.probe());
    run_until_stop(s);
    CHECK(s.global_step() == 10);
    CHECK(s.hook<0>().stopped_step() == 10);
  }

  hookfuse_test::TempDir dir("early");
  const fs::path D = dir.path;
  {  // Process 1: trains to step 8 (StopAtStepHook), saved at end().
    Model m;
    hf::MonitoredTrainingSession s(
        m.train_op(), SequenceInput{&seq}, Quiet{.checkpoint_dir = D.string()},
        hf::hooks(hf::StopAtStepHook({.last_step = 8}), ES(opts)), m.probe());
    run_until_stop(s);
    CHECK(s.global_step() == 8);
    CHECK(s.hook<ES>().stopped_step() == 0);
    s.close();
  }
  // The checkpoint at 8 holds the state after check 7 (2.9 best at step 7, wait 1, 8 checks).
  const hf::io::CheckpointReader r(D / "model.ckpt-8");
  CHECK(r.get_tensor<double>("hooks/EarlyStoppingHook/best") == std::vector<double>{2.9});
  CHECK(r.get_tensor<std::int64_t>("hooks/EarlyStoppingHook/wait") == std::vector<std::int64_t>{1});
  CHECK(r.get_tensor<std::int64_t>("hooks/EarlyStoppingHook/checks") ==
        std::vector<std::int64_t>{8});
  CHECK(r.get_tensor<std::int64_t>("hooks/EarlyStoppingHook/best_step") ==
        std::vector<std::int64_t>{7});
  CHECK(r.get_tensor<std::int64_t>("hooks/EarlyStoppingHook/stopped_step") ==
        std::vector<std::int64_t>{0});
  bool listed = false;
  for (const auto& [name, shape] : hf::io::list_variables(D / "model.ckpt-8"))
    if (name == "hooks/EarlyStoppingHook/runs_to_check") listed = shape.dims() == 0;
  CHECK(listed);

  {  // Process 2: restores step 8 and the hook's state, the input continues at run 8.
    Model m;
    hf::MonitoredTrainingSession s(m.train_op(), SequenceInput{&seq, 8},
                                   Quiet{.checkpoint_dir = D.string()}, hf::hooks(ES(opts)),
                                   m.probe());
    REQUIRE(s.restored_from_checkpoint());
    CHECK(s.hook<ES>().wait() == 1);
    CHECK(s.hook<ES>().checks() == 8);
    run_until_stop(s);
    CHECK(s.global_step() == 10);
    CHECK(s.hook<ES>().stopped_step() == 10);
    CHECK(m.W.value(0, 0) == straight.W.value(0, 0));
    CHECK(m.b.value(0, 0) == straight.b.value(0, 0));
  }
}

TEST_CASE("Hook state: a checkpoint without the hook's keys leaves its initial state",
          "[hooks][early_stopping][checkpoint]") {
  const std::vector<double> seq = {5.0, 4.0, 4.5, 3.0, 3.2, 3.1, 2.9};
  hookfuse_test::TempDir dir("early_old");
  const fs::path D = dir.path;
  {  // An older run without EarlyStopping: its checkpoint has no hooks/ keys.
    Model m;
    hf::MonitoredTrainingSession s(m.train_op(), SequenceInput{&seq},
                                   Quiet{.checkpoint_dir = D.string()},
                                   hf::hooks(hf::StopAtStepHook({.last_step = 3})), m.probe());
    run_until_stop(s);
    s.close();
  }
  CHECK_FALSE(
      hf::io::CheckpointReader(D / "model.ckpt-3").has_tensor("hooks/EarlyStoppingHook/wait"));
  Model m;
  hf::MonitoredTrainingSession s(m.train_op(), SequenceInput{&seq, 3},
                                 Quiet{.checkpoint_dir = D.string()},
                                 hf::hooks(ES({.patience = 1})), m.probe());
  REQUIRE(s.restored_from_checkpoint());
  CHECK(s.global_step() == 3);
  CHECK(s.hook<ES>().checks() == 0);
  CHECK(s.hook<ES>().wait() == 0);
  CHECK(s.hook<ES>().best() == std::numeric_limits<double>::infinity());
  // From its initial state: c0 3.0 best (never stops), c1 3.2 wait 1 -> stop at step 5.
  run_until_stop(s);
  CHECK(s.global_step() == 5);
}

TEST_CASE(
    "Hook state: a hook inside a ConditionalHook saves its state when present, none when "
    "absent",
    "[hooks][early_stopping][checkpoint][conditional]") {
  // The sequence of the resumed-run case above: mode min, patience 3; an uninterrupted run
  // stops at global step 10, and the state after run 8 is best 2.9, wait 1, 8 checks.
  const std::vector<double> seq = {5.0, 4.0, 4.5, 3.0, 3.2, 3.1, 2.9, 3.0, 3.0, 3.0, 2.0, 1.0};
  const ES::Options opts{.patience = 3};
  hookfuse_test::TempDir dir("early_cond");
  const fs::path present = dir.path / "present", absent = dir.path / "absent";
  {  // Present (the chief): trains to step 8, saved at end().
    Model m;
    hf::MonitoredTrainingSession s(
        m.train_op(), SequenceInput{&seq}, Quiet{.checkpoint_dir = present.string()},
        hf::hooks(hf::StopAtStepHook({.last_step = 8}), hf::ConditionalHook(ES(opts), true)),
        m.probe());
    run_until_stop(s);
    CHECK(s.global_step() == 8);
    s.close();
  }
  {
    const hf::io::CheckpointReader r(present / "model.ckpt-8");
    CHECK(r.get_tensor<double>("hooks/EarlyStoppingHook/best") == std::vector<double>{2.9});
    CHECK(r.get_tensor<std::int64_t>("hooks/EarlyStoppingHook/wait") ==
          std::vector<std::int64_t>{1});
    CHECK(r.get_tensor<std::int64_t>("hooks/EarlyStoppingHook/checks") ==
          std::vector<std::int64_t>{8});
  }
  {  // Resumed with the hook present: it continues from wait 1 and stops at step 10.
    Model m;
    hf::MonitoredTrainingSession s(m.train_op(), SequenceInput{&seq, 8},
                                   Quiet{.checkpoint_dir = present.string()},
                                   hf::hooks(hf::ConditionalHook(ES(opts), true)), m.probe());
    REQUIRE(s.restored_from_checkpoint());
    REQUIRE(s.hook<hf::ConditionalHook<ES>>().has_value());
    CHECK(s.hook<hf::ConditionalHook<ES>>().get_if()->wait() == 1);
    CHECK(s.hook<hf::ConditionalHook<ES>>().get_if()->checks() == 8);
    run_until_stop(s);
    CHECK(s.global_step() == 10);
    CHECK(s.hook<hf::ConditionalHook<ES>>().get_if()->stopped_step() == 10);
  }
  {  // Absent (a non-chief): none of its keys; a second EarlyStoppingHook beside it keeps the
     // suffix _1, so the keys do not depend on which conditional hooks a run installs.
    Model m;
    hf::MonitoredTrainingSession s(
        m.train_op(), SequenceInput{&seq}, Quiet{.checkpoint_dir = absent.string()},
        hf::hooks(hf::StopAtStepHook({.last_step = 8}), hf::ConditionalHook(ES(opts), false),
                  ES({.patience = 100})),
        m.probe());
    const auto vars = s.variables();
    std::vector<std::string> names;
    for (const auto& v : vars) names.emplace_back(v.name);
    const std::vector<std::string> expected = {"W",
                                               "b",
                                               "global_step",
                                               "hooks/EarlyStoppingHook_1/best",
                                               "hooks/EarlyStoppingHook_1/wait",
                                               "hooks/EarlyStoppingHook_1/checks",
                                               "hooks/EarlyStoppingHook_1/runs_to_check",
                                               "hooks/EarlyStoppingHook_1/best_step",
                                               "hooks/EarlyStoppingHook_1/stopped_step"};
    CHECK(names == expected);
    CHECK(decltype(vars)::capacity() == 3 + 6 + 6);
    run_until_stop(s);
    CHECK(s.global_step() == 8);
    s.close();
  }
  std::vector<std::string> saved;
  for (const auto& [name, shape] : hf::io::list_variables(absent / "model.ckpt-8"))
    saved.push_back(name);
  CHECK(std::find(saved.begin(), saved.end(), "hooks/EarlyStoppingHook/wait") == saved.end());
  CHECK(std::find(saved.begin(), saved.end(), "hooks/EarlyStoppingHook_1/wait") != saved.end());
  CHECK(saved.size() == 9);
  {  // That checkpoint restored into a run where the hook is present: its initial state.
    Model m;
    hf::MonitoredTrainingSession s(m.train_op(), SequenceInput{&seq, 8},
                                   Quiet{.checkpoint_dir = absent.string()},
                                   hf::hooks(hf::ConditionalHook(ES(opts), true)), m.probe());
    REQUIRE(s.restored_from_checkpoint());
    CHECK(s.global_step() == 8);
    CHECK(s.hook<hf::ConditionalHook<ES>>().get_if()->checks() == 0);
    CHECK(s.hook<hf::ConditionalHook<ES>>().get_if()->best() ==
          std::numeric_limits<double>::infinity());
  }
}

TEST_CASE("Hook state: ReduceLROnPlateauHook resumes with its reduced rate and counters",
          "[hooks][plateau][checkpoint]") {
  // patience 1, factor 0.5, lr 0.1: c0 5 best; c1 6 wait 1 -> lr 0.05, wait 0; c2 7 wait 1 ->
  // 0.025. Interrupted after c1 (step 2): the resumed run reduces to 0.025 at its first check.
  // The rate is Keras' float32 one times the factor in double (tf-keras 2.15.0 with numpy 1.24:
  // `new_lr = old_lr * self.factor`, old_lr an np.float32): float32(0.1) * 0.5.
  const double reduced = static_cast<double>(0.1f) * 0.5;
  const std::vector<double> seq = {5.0, 6.0, 7.0};
  using Plateau = hf::ReduceLROnPlateauHook<"probe", hf::NullLogger>;
  const Plateau::Options opts{.factor = 0.5, .patience = 1, .min_delta = 0.0};
  hookfuse_test::TempDir dir("plateau");
  const fs::path D = dir.path;
  {
    Model m;
    hf::MonitoredTrainingSession s(
        m.train_op(0.1), SequenceInput{&seq}, Quiet{.checkpoint_dir = D.string()},
        hf::hooks(hf::StopAtStepHook({.last_step = 2}), Plateau(opts)), m.probe());
    run_until_stop(s);
    CHECK(s.optimizer().learning_rate() == Approx(0.05));
    s.close();
  }
  const hf::io::CheckpointReader r(D / "model.ckpt-2");
  CHECK(r.get_tensor<double>("hooks/ReduceLROnPlateauHook/lr") == std::vector<double>{reduced});
  CHECK(r.get_tensor<double>("hooks/ReduceLROnPlateauHook/best") == std::vector<double>{5.0});
  CHECK(r.get_tensor<std::int64_t>("hooks/ReduceLROnPlateauHook/wait") ==
        std::vector<std::int64_t>{0});
  Model m;
  hf::MonitoredTrainingSession s(m.train_op(0.1), SequenceInput{&seq, 2},
                                 Quiet{.checkpoint_dir = D.string()}, hf::hooks(Plateau(opts)),
                                 m.probe());
  CHECK(s.optimizer().learning_rate() == Approx(0.05));
  CHECK(s.hook<Plateau>().best() == 5.0);
  s.run();
  CHECK(s.optimizer().learning_rate() == Approx(0.025));
}

TEST_CASE("Hook state: TimerStopHook resumes its elapsed time (Lightning Timer's time_elapsed)",
          "[hooks][timer_stop][checkpoint]") {
  // Budget 5 s, each run takes 1 s (the fake clock advances before it). Process 1 runs 3 times
  // (elapsed 3 at its last check) and saves at step 3. Process 2 starts at t = 1000 (the time
  // the job was down does not count): 4 s after its first run, 5 s after its second: stops at
  // step 5. Without the restored 3 s it would stop at step 8.
  using Timer = hf::TimerStopHook<hf::ClockRef<hf::FakeClock>, hf::NullLogger>;
  const std::vector<double> seq(20, 1.0);
  hookfuse_test::TempDir dir("timer");
  const fs::path D = dir.path;
  {
    hf::FakeClock clock{0.0};
    Model m;
    hf::MonitoredTrainingSession s(
        m.train_op(), SequenceInput{&seq}, Quiet{.checkpoint_dir = D.string()},
        hf::hooks(hf::StopAtStepHook({.last_step = 3}), Timer({.seconds = 5.0}, {&clock})));
    while (!s.should_stop()) {
      clock.advance(1.0);
      s.run();
    }
    CHECK(s.global_step() == 3);
    s.close();
  }
  CHECK(hf::io::CheckpointReader(D / "model.ckpt-3")
            .get_tensor<double>("hooks/TimerStopHook/elapsed") == std::vector<double>{3.0});
  hf::FakeClock clock{1000.0};
  Model m;
  hf::MonitoredTrainingSession s(m.train_op(), SequenceInput{&seq, 3},
                                 Quiet{.checkpoint_dir = D.string()},
                                 hf::hooks(Timer({.seconds = 5.0}, {&clock})));
  CHECK(s.hook<Timer>().elapsed() == 3.0);
  while (!s.should_stop()) {
    clock.advance(1.0);
    s.run();
  }
  CHECK(s.global_step() == 5);
  CHECK(s.hook<Timer>().stopped_at() == 5);
}
