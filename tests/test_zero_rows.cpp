// tests/test_zero_rows.cpp: a batch of 0 rows gets TensorFlow's values and reads no stale rows.
//
// Expected values, from TensorFlow's definitions (not from this code):
// - tf.compat.v1.losses.{sparse_softmax_cross_entropy, mean_squared_error} reduce with
//   Reduction.SUM_BY_NONZERO_WEIGHTS: sum of the losses / number of nonzero weights, a safe
//   division that is 0 when there are no weights. An empty batch: loss 0, and no element to
//   carry a gradient, so every variable's gradient is 0 (d/dW of x^T (...) with x empty).
// - tf.reduce_mean (numpy.mean) of an empty tensor is NaN; so is the per-batch accuracy, the
//   mean of tf.equal(...) over the batch. tf.reduce_sum of an empty tensor is 0.
//
// Each graph is bound for 32 rows and first run on 32 rows of other values, so the buffers
// hold nonzero numbers (checked) before the empty batch; a kernel that read them would leave a
// trace in the loss or the gradients.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <vector>

#include <hookfuse/autodiff.hpp>
#include <hookfuse/optim/gradient_descent.hpp>

namespace hf = hookfuse;

namespace {
constexpr hf::Index kCapacity = 32;
constexpr int kIn = 3;
constexpr int kOut = 4;

std::vector<float> features() {
  std::vector<float> x(kCapacity * kIn);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = 0.1f * static_cast<float>(i % 17) - 0.7f;
  return x;
}
std::vector<std::int32_t> labels() {
  std::vector<std::int32_t> y(kCapacity);
  for (std::size_t i = 0; i < y.size(); ++i) y[i] = static_cast<std::int32_t>(i % kOut);
  return y;
}
template <class V>
void set_weights(V& w) {
  for (hf::Index i = 0; i < w.value.rows(); ++i)
    for (hf::Index j = 0; j < w.value.cols(); ++j)
      w.value(i, j) = 0.25f * static_cast<float>(i) - 0.5f * static_cast<float>(j) + 0.125f;
}
}  // namespace

TEST_CASE("zero rows: sparse_softmax_cross_entropy is 0 with zero gradients, accuracy is NaN") {
  hf::Placeholder<"x", float, kIn> x;
  hf::Placeholder<"y", std::int32_t, 1> y;
  hf::Variable<"w", float, kIn, kOut> w;
  hf::Variable<"b", float, 1, kOut> b;
  set_weights(w);
  b.value.setConstant(0.5f);
  auto logits = hf::named<"logits">(hf::matmul(x, w) + b);
  auto g = hf::bind(kCapacity, hf::named<"loss">(hf::sparse_softmax_cross_entropy(y, logits)),
                    hf::named<"accuracy">(hf::accuracy(y, logits)));
  const auto xs = features();
  const auto ys = labels();

  g.feed<"x">(xs.data(), kCapacity, kIn);
  g.feed<"y">(ys.data(), kCapacity);
  const float full = g.forward();
  g.backward();
  REQUIRE(full > 0.0f);
  REQUIRE(w.grad.cwiseAbs().maxCoeff() > 0.0f);
  REQUIRE(b.grad.cwiseAbs().maxCoeff() > 0.0f);
  REQUIRE(std::isfinite(g.compute<"accuracy">()(0, 0)));

  // A valid pointer, 0 rows.
  g.feed<"x">(xs.data(), 0, kIn);
  g.feed<"y">(ys.data(), 0);
  CHECK(g.forward() == 0.0f);
  CHECK(g.value<"logits">().rows() == 0);
  g.backward();
  CHECK(w.grad.isZero(0.0f));
  CHECK(b.grad.isZero(0.0f));
  CHECK(std::isnan(g.compute<"accuracy">()(0, 0)));

  // And back to a full batch: the same values as before.
  g.feed<"x">(xs.data(), kCapacity, kIn);
  g.feed<"y">(ys.data(), kCapacity);
  CHECK(g.forward() == full);
}

TEST_CASE("zero rows: mean_squared_error is 0 with zero gradients") {
  hf::Placeholder<"x", float, kIn> x;
  hf::Placeholder<"t", float, kOut> t;
  hf::Variable<"w", float, kIn, kOut> w;
  hf::Variable<"b", float, 1, kOut> b;
  set_weights(w);
  b.value.setConstant(-0.25f);
  auto g = hf::bind(kCapacity, hf::named<"loss">(hf::mean_squared_error(t, hf::matmul(x, w) + b)));
  const auto xs = features();
  std::vector<float> ts(kCapacity * kOut);
  for (std::size_t i = 0; i < ts.size(); ++i) ts[i] = static_cast<float>(i % 5);

  g.feed<"x">(xs.data(), kCapacity, kIn);
  g.feed<"t">(ts.data(), kCapacity, kOut);
  REQUIRE(g.forward() > 0.0f);
  g.backward();
  REQUIRE(w.grad.cwiseAbs().maxCoeff() > 0.0f);
  REQUIRE(b.grad.cwiseAbs().maxCoeff() > 0.0f);

  g.feed<"x">(xs.data(), 0, kIn);
  g.feed<"t">(ts.data(), 0, kOut);
  CHECK(g.forward() == 0.0f);
  g.backward();
  CHECK(w.grad.isZero(0.0f));
  CHECK(b.grad.isZero(0.0f));

  // The session's fused SGD update (folded into the backward pass) leaves the weights as they
  // were: a zero gradient times the learning rate.
  const Eigen::Matrix<float, kIn, kOut, Eigen::RowMajor> w_before = w.value;
  const Eigen::Matrix<float, 1, kOut> b_before = b.value;
  const hf::GradientDescentOptimizer sgd(0.5);
  STATIC_REQUIRE(decltype(g)::update_fused<hf::detail::FuseAll, "w">());
  CHECK(g.forward() == 0.0f);
  g.backward<hf::detail::FuseAll>(sgd);
  g.apply_unfused<hf::detail::FuseAll>(sgd);
  CHECK(w.value == w_before);
  CHECK(b.value == b_before);
}

TEST_CASE("zero rows: reduce_mean as the loss is NaN, the variables' gradients are 0") {
  // d/dw of mean(x w) = x^T (1 / n): with no rows there is no term to sum, so 0, as TensorFlow's
  // gradient of tf.matmul with an empty batch (a [in, 0] x [0, out] product) gives.
  hf::Placeholder<"x", float, kIn> x;
  hf::Variable<"w", float, kIn, kOut> w;
  set_weights(w);
  auto g = hf::bind(kCapacity, hf::reduce_mean(hf::matmul(x, w)));
  const auto xs = features();
  g.feed<"x">(xs.data(), kCapacity, kIn);
  REQUIRE(std::isfinite(g.forward()));
  g.backward();
  REQUIRE(w.grad.cwiseAbs().maxCoeff() > 0.0f);

  g.feed<"x">(xs.data(), 0, kIn);
  CHECK(std::isnan(g.forward()));
  g.backward();
  CHECK(w.grad.isZero(0.0f));
}

TEST_CASE("zero rows: every op's forward and backward, reduce_sum of an empty batch is 0") {
  // relu, sigmoid, tanh, exp, log, square, scale, softmax, multiply, add (bias broadcast on
  // either side), subtract, matmul: reduce_sum over an empty batch is 0 and the gradients are 0.
  hf::Placeholder<"x", float, kIn> x;
  hf::Variable<"w", float, kIn, kOut> w;
  hf::Variable<"v", float, kOut, kOut> v;
  hf::Variable<"b", float, 1, kOut> b;
  hf::Variable<"c", float, 1, kOut> c;
  set_weights(w);
  set_weights(v);
  b.value.setConstant(0.5f);
  c.value.setConstant(2.0f);
  auto h = hf::relu(hf::matmul(x, w) + b);
  auto s = hf::sigmoid(h) * hf::tanh(hf::matmul(h, v));
  auto p = hf::softmax(c - hf::square(s) * 0.5f);
  auto e = hf::log(hf::exp(s) + p);
  auto g = hf::bind(kCapacity, hf::named<"loss">(hf::reduce_sum(e - b)));
  const auto xs = features();
  g.feed<"x">(xs.data(), kCapacity, kIn);
  REQUIRE(g.forward() != 0.0f);
  g.backward();
  REQUIRE(w.grad.cwiseAbs().maxCoeff() > 0.0f);
  REQUIRE(v.grad.cwiseAbs().maxCoeff() > 0.0f);
  REQUIRE(b.grad.cwiseAbs().maxCoeff() > 0.0f);
  REQUIRE(c.grad.cwiseAbs().maxCoeff() > 0.0f);

  g.feed<"x">(xs.data(), 0, kIn);
  CHECK(g.forward() == 0.0f);
  g.backward();
  CHECK(w.grad.isZero(0.0f));
  CHECK(v.grad.isZero(0.0f));
  CHECK(b.grad.isZero(0.0f));
  CHECK(c.grad.isZero(0.0f));
}

TEST_CASE("zero rows: reduce_mean as a second fetch-only tensor is NaN (and can be computed)") {
  // Two tensors outside the loss's graph: the second sits two tape places after the loss, which
  // once failed to compile (detail::reaches).
  hf::Placeholder<"x", float, kIn> x;
  hf::Placeholder<"y", std::int32_t, 1> y;
  hf::Variable<"w", float, kIn, kOut> w;
  set_weights(w);
  auto logits = hf::named<"logits">(hf::matmul(x, w));
  auto g = hf::bind(kCapacity, hf::named<"loss">(hf::sparse_softmax_cross_entropy(y, logits)),
                    hf::named<"accuracy">(hf::accuracy(y, logits)),
                    hf::named<"mean_logit">(hf::reduce_mean(logits)));
  const auto xs = features();
  const auto ys = labels();
  g.feed<"x">(xs.data(), kCapacity, kIn);
  g.feed<"y">(ys.data(), kCapacity, 1);
  g.forward();
  // Hand value: the mean of x·w over the batch, computed here without the graph.
  double sum = 0;
  for (hf::Index r = 0; r < kCapacity; ++r)
    for (int j = 0; j < kOut; ++j)
      for (int k = 0; k < kIn; ++k)
        sum += static_cast<double>(xs[static_cast<std::size_t>(r * kIn + k)]) *
               static_cast<double>(w.value(k, j));
  CHECK(g.compute<"mean_logit">()(0, 0) ==
        Approx(sum / static_cast<double>(kCapacity * kOut)).epsilon(1e-5));

  g.feed<"x">(xs.data(), 0, kIn);
  g.feed<"y">(ys.data(), 0, 1);
  CHECK(g.forward() == 0.0f);
  CHECK(std::isnan(g.compute<"mean_logit">()(0, 0)));
  CHECK(std::isnan(g.compute<"accuracy">()(0, 0)));
}
