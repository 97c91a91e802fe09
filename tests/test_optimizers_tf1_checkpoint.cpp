// tests/test_optimizers_tf1_checkpoint.cpp: a checkpoint written by TensorFlow 1's Saver after
// Adam training (the fixture ckpt_tf1_saver_houseprices) restores into a hookfuse model with
// Adam: every variable, both slots of each and the beta powers. Split from
// test_optimizers_checkpoint.cpp: this model's ten fixed-shape float variables made that file
// the slowest of the suite to compile (120 s of CPU with the sanitizer flags, 2 December).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <hookfuse/hookfuse.hpp>
#include <hookfuse/io/checkpoint_reader.hpp>
#include <hookfuse/io/saver.hpp>
#include <memory>
#include <string>
#include <vector>

#include "bundle_test_util.hpp"

namespace hf = hookfuse;
namespace {
/// The houseprices network's shapes: 8 -> 100 -> 5 -> 5 -> 10 -> 1, TF1's default names
/// "Variable", "Variable_1", ... (kernels [in, out], biases [out]).
struct HousePrices {
  hf::Placeholder<"x", float, 8> x;
  hf::Placeholder<"y", float, 1> y;
  hf::Variable<"Variable", float, 8, 100> w0;
  hf::Variable<"Variable_1", float, 1, 100, 1> b0;
  hf::Variable<"Variable_2", float, 100, 5> w1;
  hf::Variable<"Variable_3", float, 1, 5, 1> b1;
  hf::Variable<"Variable_4", float, 5, 5> w2;
  hf::Variable<"Variable_5", float, 1, 5, 1> b2;
  hf::Variable<"Variable_6", float, 5, 10> w3;
  hf::Variable<"Variable_7", float, 1, 10, 1> b3;
  hf::Variable<"Variable_8", float, 10, 1> w4;
  hf::Variable<"Variable_9", float, 1, 1, 1> b4;
  hf::GlobalStep gs;
  HousePrices() {
    w0.value.setConstant(0.01f);
    w1.value.setConstant(0.01f);
    w2.value.setConstant(0.01f);
    w3.value.setConstant(0.01f);
    w4.value.setConstant(0.01f);
  }
  auto loss() {
    using namespace hf;
    auto h = relu(matmul(relu(matmul(relu(matmul(relu(matmul(x, w0) + b0), w1) + b1), w2) + b2),
                         w3) + b3);
    return named<"loss">(mean_squared_error(y, matmul(h, w4) + b4));
  }
};
}  // namespace

TEST_CASE("The TF1 Adam checkpoint ckpt_tf1_saver_houseprices loads into an Adam-trained model",
          "[optim][checkpoint]") {
  const auto prefix = hookfuse_test::tf_fixture("ckpt_tf1_saver_houseprices/model.ckpt");
  auto m = std::make_unique<HousePrices>();
  hf::MonitoredTrainingSession s(hf::AdamOptimizer(0.001).minimize(m->loss(), m->gs),
                                 hf::caller_feeds(4), hf::hooks());
  std::vector<float> xb(4 * 8, 0.5f), yb(4, 1.0f);
  s.run(hf::feed<"x">(xb.data(), 4, 8), hf::feed<"y">(yb.data(), 4));  // Adam-trained
  const auto vars = s.variables();
  // The fixture has no global_step (and two untrained scalars, Variable_10 and Variable_11,
  // that this model does not have): restore every variable, slot and beta power but the step.
  REQUIRE(vars.back().name == "global_step");
  REQUIRE(vars.size() == 10 + 20 + 2 + 1);
  hf::io::Saver saver;
  saver.restore(hf::VariableList(vars.data(), vars.size() - 1), prefix.string());

  // Values from the fixture's README and from an independent reader of the same file.
  CHECK(m->w0.value(0, 0) == -0.702847898f);
  CHECK(m->w0.value(0, 1) == 0.751050413f);
  const hf::io::CheckpointReader reader(prefix.string());
  for (const auto& v : vars) {
    if (v.name == "global_step") continue;
    INFO(v.name);
    const auto want = reader.get_tensor<float>(std::string(v.name));
    const auto got = v.values<float>();
    REQUIRE(got.size() == want.size());
    CHECK(std::equal(got.begin(), got.end(), want.begin()));
  }
  CHECK(s.optimizer_slots().non_slot[0] == 0.0f);               // beta1_power
  CHECK(s.optimizer_slots().non_slot[1] == 4.16217225e-18f);    // beta2_power
  // And training continues from there (finite loss and weights).
  s.run(hf::feed<"x">(xb.data(), 4, 8), hf::feed<"y">(yb.data(), 4));
  CHECK(std::isfinite(m->w0.value(0, 0)));
  CHECK(std::isfinite(m->b4.value(0, 0)));
}
