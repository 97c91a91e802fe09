// tests/lr_model.hpp: the one-feature linear regression the hook and session tests train.
#pragma once

#include <cstdint>
#include <limits>
#include <hookfuse/hookfuse.hpp>

namespace hookfuse_test {

/// Placeholders "x" and "y" ([batch, 1]), variables "W" and "b" (start at 0), a global step.
/// The expressions refer to the variables by address, so a model stays where it is.
struct LrModel {
  hookfuse::Placeholder<"x", float, 1> x;
  hookfuse::Placeholder<"y", float, 1> y;
  hookfuse::Variable<"W", float, 1, 1> W;
  hookfuse::Variable<"b", float, 1, 1> b;
  hookfuse::GlobalStep gs;

  explicit LrModel(std::int64_t initial_step = 0) { gs.value = initial_step; }
  LrModel(const LrModel&) = delete;
  LrModel& operator=(const LrModel&) = delete;

  /// "loss": mean((W x + b - y)^2).
  auto loss() {
    using namespace hookfuse;
    return named<"loss">(mean_squared_error(y, matmul(x, W) + b));
  }
  /// "accuracy", a metric outside the loss's graph: mean(x) over the batch.
  auto accuracy() { return hookfuse::named<"accuracy">(hookfuse::reduce_mean(x)); }
  /// "probe", outside the loss's graph: computed only when fetched; sum(x) over the batch.
  auto probe() { return hookfuse::named<"probe">(hookfuse::reduce_sum(x)); }
  /// SGD on the loss; the default learning rate 0 keeps W = b = 0, so the loss shows the input.
  auto train_op(double learning_rate = 0.0) {
    return hookfuse::GradientDescentOptimizer(learning_rate).minimize(loss(), gs);
  }
};

/// An input for LrModel: batch i (from 1) feeds x = i, y = 2 i (one row); after `limit`
/// batches, the end of the input (-1: never).
struct CountingInput {
  float x = 0.0f;
  float y = 0.0f;
  std::int64_t i = 0;
  std::int64_t limit = -1;
  bool next() {
    if (limit >= 0 && i >= limit) return false;
    ++i;
    x = static_cast<float>(i);
    y = 2.0f * static_cast<float>(i);
    return true;
  }
  hookfuse::Index batch_size() const { return 1; }
  template <class G>
  void feed(G& g) {
    g.template feed<"x">(&x, 1);
    g.template feed<"y">(&y, 1);
  }
};

/// An input for LrModel whose run k (from 1) feeds x = k / 4 and y = k (one row): with W = b = 0
/// (learning rate 0) the loss mean((0 - y)^2) is k^2 and "accuracy" (mean(x)) is k / 4, all
/// exact in float32. x is NaN in run `nan_at` (-1: never); after `limit` batches, the end of the
/// input (-1: never).
struct QuarterInput {
  float x = 0.0f;
  float y = 0.0f;
  std::int64_t i = 0;
  std::int64_t nan_at = -1;
  std::int64_t limit = -1;
  bool next() {
    if (limit >= 0 && i >= limit) return false;
    ++i;
    x = i == nan_at ? std::numeric_limits<float>::quiet_NaN() : static_cast<float>(i) / 4.0f;
    y = static_cast<float>(i);
    return true;
  }
  hookfuse::Index batch_size() const { return 1; }
  template <class G>
  void feed(G& g) {
    g.template feed<"x">(&x, 1);
    g.template feed<"y">(&y, 1);
  }
};

}  // namespace hookfuse_test
