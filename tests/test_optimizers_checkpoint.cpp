// tests/test_optimizers_checkpoint.cpp: the optimizers' slot variables in checkpoints: Adam's
// slots and beta powers round-trip, a warm start takes weights and not slots, a resumed Adam
// session continues as an uninterrupted one, centered RMSProp's slots (split from
// test_optimizers.cpp to keep each file's compile time under a minute; the TF1 Adam fixture is
// test_optimizers_tf1_checkpoint.cpp's). The model and feeds are optimizer_test_model.hpp's;
// expected values are worked out by hand from TensorFlow's kernels
// (tensorflow/core/kernels/training_ops.cc, Apply*).
#include <catch2/catch.hpp>

#include <array>
#include <cmath>
#include <cstdint>
#include <functional>
#include <hookfuse/hookfuse.hpp>
#include <hookfuse/io/checkpoint_reader.hpp>
#include <hookfuse/io/saver.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "bundle_test_util.hpp"
#include "optimizer_test_model.hpp"

namespace hf = hookfuse;
using namespace optimizer_test;

TEST_CASE("Adam's slots and beta powers round-trip through a checkpoint", "[optim][checkpoint]") {
  hookfuse_test::TempDir dir;
  const std::string save_path = (dir.path() / "model.ckpt").string();
  hf::io::Saver saver;
  Model a;
  hf::MonitoredTrainingSession s(hf::AdamOptimizer(0.01).minimize(a.loss(), a.gs),
                                 hf::caller_feeds(1), hf::hooks());
  for (int t = 0; t < 2; ++t) s.run(hf::feed<"x">(xs[static_cast<std::size_t>(t)].data(), 1, 2));
  const auto saved = s.variables();
  const std::string prefix = saver.save(saved, save_path, s.global_step());

  // An independent reader sees TF's keys with the values the hand computation gives after two
  // steps: W/Adam = m_2 = 0.09 g_1 + 0.1 g_2, beta1_power = 0.9^3.
  const hf::io::CheckpointReader reader(prefix);
  CHECK(reader.get_tensor<double>("W/Adam")[0] == Approx(0.09 * 1 + 0.1 * -0.5).margin(1e-12));
  CHECK(reader.get_tensor<double>("W/Adam_1")[1] ==
        Approx(0.999 * 0.001 * 4 + 0.001 * 9).margin(1e-12));
  CHECK(reader.get_tensor<double>("beta1_power")[0] == Approx(0.729).margin(1e-12));
  CHECK(reader.get_tensor<double>("beta2_power")[0] == Approx(0.999 * 0.999 * 0.999).margin(1e-12));

  // A fresh model restores everything, and its next step equals the original's.
  Model b;
  hf::MonitoredTrainingSession r(hf::AdamOptimizer(0.01).minimize(b.loss(), b.gs),
                                 hf::caller_feeds(1), hf::hooks());
  const auto restored = r.variables();
  saver.restore(restored, prefix);
  for (std::size_t i = 0; i < saved.size(); ++i) {
    INFO(saved[i].name);
    if (saved[i].dtype == hf::DType::int64) {
      CHECK(restored[i].values<std::int64_t>()[0] == saved[i].values<std::int64_t>()[0]);
      continue;
    }
    const auto x = saved[i].values<double>();
    const auto y = restored[i].values<double>();
    REQUIRE(x.size() == y.size());
    for (std::size_t k = 0; k < x.size(); ++k) CHECK(y[k] == x[k]);
  }
  s.run(hf::feed<"x">(xs[2].data(), 1, 2));
  r.run(hf::feed<"x">(xs[2].data(), 1, 2));
  CHECK(b.values() == a.values());
  CHECK(b.gs.value == 3);
}

TEST_CASE("A warm start sets an Adam model's weights from an SGD checkpoint, not its slots",
          "[optim][checkpoint]") {
  // Estimator's warm start sets trainable variables only: the SGD checkpoint has no slots, and
  // the Adam model's slots keep their initial values.
  hookfuse_test::TempDir dir;
  Model a;
  hf::MonitoredTrainingSession sgd(hf::GradientDescentOptimizer(0.1).minimize(a.loss(), a.gs),
                                   hf::caller_feeds(1), hf::hooks());
  sgd.run(hf::feed<"x">(xs[0].data(), 1, 2));
  hf::io::Saver saver;
  const std::string prefix =
      saver.save(sgd.variables(), (dir.path() / "model.ckpt").string(), sgd.global_step());

  Model b;
  hf::MonitoredTrainingSession adam(
      hf::AdamOptimizer().minimize(b.loss(), b.gs), hf::caller_feeds(1),
      hf::SessionOptions{.warm_start_from = hf::io::WarmStart{prefix}}, hf::hooks());
  CHECK(b.values() == a.values());
  CHECK(b.values()[0] == Approx(0.5 - 0.1 * 1).margin(1e-12));
  const auto vars = adam.variables();
  CHECK(vars[2].name == "W/Adam");
  CHECK(vars[2].values<double>()[0] == 0.0);
  CHECK(vars[6].values<double>()[0] == 0.9);  // beta1_power
  CHECK(adam.global_step() == 0);
}

TEST_CASE("A session with Adam resumed from its checkpoint_dir continues as an uninterrupted run",
          "[optim][checkpoint]") {
  // TF's MonitoredTrainingSession restores every saved variable, slots and beta powers
  // included: run 2 steps saving each, restart, run the third; compare with 3 uninterrupted.
  using Quiet = hf::SessionOptions<hf::io::Saver, hf::SteadyClock, hf::NullLogger>;
  hookfuse_test::TempDir dir;
  {
    Model m;
    hf::MonitoredTrainingSession s(hf::AdamOptimizer(0.01).minimize(m.loss(), m.gs),
                                   hf::caller_feeds(1),
                                   Quiet{.checkpoint_dir = dir.path().string(),
                                         .save_checkpoint_steps = 1},
                                   hf::hooks());
    for (int t = 0; t < 2; ++t) s.run(hf::feed<"x">(xs[static_cast<std::size_t>(t)].data(), 1, 2));
  }
  Model r;
  hf::MonitoredTrainingSession s(hf::AdamOptimizer(0.01).minimize(r.loss(), r.gs),
                                 hf::caller_feeds(1),
                                 Quiet{.checkpoint_dir = dir.path().string(),
                                       .save_checkpoint_steps = 1},
                                 hf::hooks());
  REQUIRE(s.restored_from_checkpoint());
  CHECK(r.gs.value == 2);
  CHECK(s.optimizer_slots().non_slot[0] == Approx(0.729).margin(1e-12));  // beta1_power
  s.run(hf::feed<"x">(xs[2].data(), 1, 2));
  const auto uninterrupted = train(hf::AdamOptimizer(0.01));
  for (std::size_t i = 0; i < 3; ++i) CHECK(r.values()[i] == uninterrupted[i]);
}

namespace {
using QuietOptions = hf::SessionOptions<hf::io::Saver, hf::SteadyClock, hf::NullLogger>;
/// Trains `steps` steps of `optimizer` from w0 saving a checkpoint into `dir` after each.
template <class Opt>
void train_saving(const Opt& optimizer, const std::string& dir, int steps) {
  Model m;
  hf::MonitoredTrainingSession s(optimizer.minimize(m.loss(), m.gs), hf::caller_feeds(1),
                                 QuietOptions{.checkpoint_dir = dir, .save_checkpoint_steps = 1},
                                 hf::hooks());
  for (int t = 0; t < steps; ++t)
    s.run(hf::feed<"x">(xs[static_cast<std::size_t>(t)].data(), 1, 2));
}
}  // namespace

TEST_CASE("Centered RMSProp's three slots round-trip through a checkpoint under TF's names",
          "[optim][checkpoint]") {
  hookfuse_test::TempDir dir;
  const std::string d = dir.path().string();
  train_saving(hf::RMSPropOptimizer<true>(0.01), d, 1);
  // The file holds the three slots under TF's keys, with the hand-computed values after one
  // step of W(1,0) (g = 2, decay 0.9): ms = 1 + (4 - 1) * 0.1 = 1.3, mg = 0.1 * 2 = 0.2,
  // mom = 0.01 * 2 / sqrt(1.3 - 0.04 + 1e-10).
  const hf::io::CheckpointReader reader((dir.path() / "model.ckpt-1").string());
  CHECK(reader.get_tensor<double>("W/RMSProp")[1] == Approx(1.3).margin(1e-12));
  CHECK(reader.get_tensor<double>("W/RMSProp_1")[1] == Approx(0.2).margin(1e-12));
  CHECK(reader.get_tensor<double>("W/RMSProp_2")[1] ==
        Approx(0.02 / std::sqrt(1.26 + 1e-10)).margin(1e-12));
  CHECK(reader.get_tensor<double>("b/RMSProp_1").size() == 1);

  // A restarted session restores them and continues as an uninterrupted run.
  Model r;
  hf::MonitoredTrainingSession s(hf::RMSPropOptimizer<true>(0.01).minimize(r.loss(), r.gs),
                                 hf::caller_feeds(1),
                                 QuietOptions{.checkpoint_dir = d, .save_checkpoint_steps = 1},
                                 hf::hooks());
  REQUIRE(s.restored_from_checkpoint());
  const auto& slots = s.optimizer_slots().slots_of<decltype(r.W)>();
  CHECK(slots.slot[1](1, 0) == Approx(0.2).margin(1e-12));  // mg restored into mg
  CHECK(slots.slot[2](1, 0) == Approx(0.02 / std::sqrt(1.26 + 1e-10)).margin(1e-12));
  for (int t = 1; t < 3; ++t) s.run(hf::feed<"x">(xs[static_cast<std::size_t>(t)].data(), 1, 2));
  const auto uninterrupted = train(hf::RMSPropOptimizer<true>(0.01));
  for (std::size_t i = 0; i < 3; ++i) CHECK(r.values()[i] == uninterrupted[i]);
}

TEST_CASE("A plain RMSProp checkpoint and a centered one do not restore into each other",
          "[optim][checkpoint]") {
  // Both save "<var>/RMSProp_1": the momentum when plain, the mean gradient when centered (TF's
  // Saver would load one as the other). The restore refuses, naming the slot, and writes nothing.
  hookfuse_test::TempDir plain_dir, centered_dir;
  train_saving(hf::RMSPropOptimizer(0.01), plain_dir.path().string(), 2);
  train_saving(hf::RMSPropOptimizer<true>(0.01), centered_dir.path().string(), 2);

  SECTION("plain checkpoint, centered session: <var>/RMSProp_2 is missing") {
    Model m;
    const auto make = [&] {
      hf::MonitoredTrainingSession s(
          hf::RMSPropOptimizer<true>(0.01).minimize(m.loss(), m.gs), hf::caller_feeds(1),
          QuietOptions{.checkpoint_dir = plain_dir.path().string()}, hf::hooks());
    };
    CHECK_THROWS_AS(make(), hf::io::NotFoundError);
    CHECK_THROWS_WITH(make(), Catch::Contains("tensor 'W/RMSProp_2' for variable 'W/RMSProp_2'") &&
                                  Catch::Contains("'b/RMSProp_2'") &&
                                  Catch::Contains("nothing was written"));
    CHECK(m.values() == w0);
    CHECK(m.gs.value == 0);
  }
  SECTION("centered checkpoint, plain session: <var>/RMSProp_2 is there") {
    Model m;
    const auto make = [&] {
      hf::MonitoredTrainingSession s(
          hf::RMSPropOptimizer(0.01).minimize(m.loss(), m.gs), hf::caller_feeds(1),
          QuietOptions{.checkpoint_dir = centered_dir.path().string()}, hf::hooks());
    };
    CHECK_THROWS_AS(make(), hf::ValueError);
    CHECK_THROWS_WITH(make(), Catch::Contains("tensor 'W/RMSProp_1' cannot be restored into "
                                              "variable 'W/RMSProp_1'") &&
                                  Catch::Contains("also holds 'W/RMSProp_2'") &&
                                  Catch::Contains("saved by a centered RMSPropOptimizer") &&
                                  Catch::Contains("'b/RMSProp_1'"));
    CHECK(m.values() == w0);
    CHECK(m.gs.value == 0);
  }
  SECTION("each restores into its own kind") {
    Model p, c;
    hf::MonitoredTrainingSession sp(hf::RMSPropOptimizer(0.01).minimize(p.loss(), p.gs),
                                    hf::caller_feeds(1),
                                    QuietOptions{.checkpoint_dir = plain_dir.path().string()},
                                    hf::hooks());
    hf::MonitoredTrainingSession sc(hf::RMSPropOptimizer<true>(0.01).minimize(c.loss(), c.gs),
                                    hf::caller_feeds(1),
                                    QuietOptions{.checkpoint_dir = centered_dir.path().string()},
                                    hf::hooks());
    CHECK(sp.restored_from_checkpoint());
    CHECK(sc.restored_from_checkpoint());
    CHECK(p.gs.value == 2);
    CHECK(c.gs.value == 2);
  }
}
