// tests/optimizer_test_model.hpp: the model and three feeds shared by test_optimizers.cpp (update
// formulas, fusion) and test_optimizers_checkpoint.cpp (slots in checkpoints): loss =
// reduce_sum(x W + b) for x [1, 2] (fed), W [2, 1], b [1], so dloss/dW = x^T and dloss/db = 1.
#pragma once

#include <catch2/catch.hpp>

#include <array>
#include <cstddef>
#include <hookfuse/hookfuse.hpp>

namespace hf = hookfuse;

namespace optimizer_test {

/// The three steps' inputs: the gradient of W at step t is xs[t] (transposed), of b is 1.
inline constexpr std::array<std::array<double, 2>, 3> xs = {{{1.0, 2.0}, {-0.5, 3.0}, {2.0, -1.0}}};
inline constexpr std::array<double, 3> w0 = {0.5, -0.25, 0.1};  // W(0, 0), W(1, 0), b

struct Model {
  hf::Placeholder<"x", double, 2> x;
  hf::Variable<"W", double, 2, 1> W;
  hf::Variable<"b", double, 1, 1, 1> b;
  hf::GlobalStep gs;
  Model() {
    W.value(0, 0) = w0[0];
    W.value(1, 0) = w0[1];
    b.value(0, 0) = w0[2];
  }
  auto loss() { return hf::named<"loss">(hf::reduce_sum(hf::matmul(x, W) + b)); }
  std::array<double, 3> values() const { return {W.value(0, 0), W.value(1, 0), b.value(0, 0)}; }
};

/// The gradient of element i (W(0,0), W(1,0), b) at step t.
inline double grad(int t, int i) { return i < 2 ? xs[static_cast<std::size_t>(t)][static_cast<std::size_t>(i)] : 1.0; }

/// Runs `steps` steps of `optimizer` from w0 and returns W(0,0), W(1,0), b.
template <class Opt>
std::array<double, 3> train(const Opt& optimizer, int steps = 3) {
  Model m;
  hf::MonitoredTrainingSession s(optimizer.minimize(m.loss(), m.gs), hf::caller_feeds(1),
                                 hf::hooks());
  for (int t = 0; t < steps; ++t) s.run(hf::feed<"x">(xs[static_cast<std::size_t>(t)].data(), 1, 2));
  CHECK(m.gs.value == steps);
  return m.values();
}

inline void check_close(const std::array<double, 3>& got, const std::array<double, 3>& want) {
  for (std::size_t i = 0; i < 3; ++i) {
    INFO("element " << i);
    CHECK(got[i] == Approx(want[i]).margin(1e-6).epsilon(0));
  }
}

}  // namespace optimizer_test
