// bench/mlp.hpp: the benchmarked model, shared by every benchmark and peer so that all of them
// train the same network from the same weights on the same batches.
//
// Fashion-MNIST MLP: x [B, 784] -> dense 256 + ReLU -> dense 10 -> sparse softmax cross-entropy,
// SGD, float32. Initial weights: hookfuse::nn::glorot_uniform{1} for the hidden kernel,
// glorot_uniform{2} for the output kernel, zero biases (what BM_hookfuse_step builds).
#pragma once

#include "hookfuse/detail/eigen.hpp"  // Eigen, GCC 12 AVX-512 false positive silenced
#include <cmath>
#include <cstdint>
#include <hookfuse/hookfuse.hpp>
#include <hookfuse/nn/initializers.hpp>
#include <limits>
#include <random>

namespace hookfuse_bench {

constexpr int kIn = 784, kHidden = 256, kOut = 10;

using RowMatrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using LabelVector = Eigen::Matrix<std::int32_t, Eigen::Dynamic, 1>;

/// A batch of random pixels in [0, 1] and labels in 0..9 (seed 7), fed again every step, so no
/// benchmark pays for input. Also an input for MonitoredTrainingSession (next/batch_size/feed).
struct RandomBatch {
  RowMatrix x;
  LabelVector y;
  explicit RandomBatch(Eigen::Index batch) : x(batch, kIn), y(batch) {
    std::mt19937 rng(7);
    for (Eigen::Index i = 0; i < x.size(); ++i)
      x.data()[i] = static_cast<float>(rng() % 256) / 255.f;
    for (Eigen::Index i = 0; i < batch; ++i) y(i) = static_cast<std::int32_t>(rng() % kOut);
  }
  bool next() { return true; }
  Eigen::Index batch_size() const { return x.rows(); }
  template <class G>
  void feed(G& g) {
    g.template feed<"x">(x);  // rows and columns checked against the placeholder
    g.template feed<"labels">(y);
  }
};

/// The initial weights every implementation starts from: w1 [784, 256], w2 [256, 10], row-major
/// (rows are inputs, as tf.layers.dense's kernel), biases zero.
struct InitialWeights {
  RowMatrix w1{kIn, kHidden}, w2{kHidden, kOut};
  Eigen::RowVectorXf b1 = Eigen::RowVectorXf::Zero(kHidden), b2 = Eigen::RowVectorXf::Zero(kOut);
  InitialWeights() {
    hookfuse::nn::glorot_uniform{1}(w1);
    hookfuse::nn::glorot_uniform{2}(w2);
  }
};

/// Builds the model in hookfuse with the Fashion-MNIST example's four hooks (StopAtStepHook,
/// StepCounterHook every 100 steps, NanTensorHook, LoggingTensorHook on loss and accuracy every
/// 100 runs; all logging to a NullLogger), a MonitoredTrainingSession on `input` training with
/// `optimizer` (and `extra_hooks` after the four), and calls body(session). Initial weights as
/// InitialWeights.
template <class Input, class Optimizer, class Body, class... ExtraHooks>
void with_hookfuse_session_using(Input input, Optimizer optimizer, Body&& body,
                                 ExtraHooks... extra_hooks) {
  namespace hf = hookfuse;
  hf::Placeholder<"x", float, kIn> x;
  hf::Placeholder<"labels", std::int32_t, 1> labels;
  hf::nn::Dense<"dense", float> hidden(kIn, kHidden, hf::nn::glorot_uniform{1});
  hf::nn::Dense<"logits", float> output(kHidden, kOut, hf::nn::glorot_uniform{2});
  auto logits = hf::named<"logits">(output(hf::relu(hidden(x))));
  auto loss = hf::named<"loss">(hf::sparse_softmax_cross_entropy(labels, logits));
  auto accuracy = hf::named<"accuracy">(hf::accuracy(labels, logits));
  hf::GlobalStep global_step;
  auto train_op = optimizer.minimize(loss, global_step);
  hf::MonitoredTrainingSession session(
      train_op, std::move(input),
      hf::hooks(hf::StopAtStepHook({.last_step = std::numeric_limits<std::int64_t>::max()}),
                hf::StepCounterHook<hf::SteadyClock, hf::NullLogger>({.every_n_steps = 100}),
                hf::NanTensorHook<"loss", hf::NullLogger>(),
                hf::BasicLoggingTensorHook<hf::LoggingPolicies<hf::SteadyClock, hf::NullLogger>,
                                           "loss", "accuracy">({.every_n_iter = 100}),
                std::move(extra_hooks)...),
      accuracy);
  body(session);
}

/// with_hookfuse_session_using with GradientDescentOptimizer(learning_rate).
template <class Input, class Body>
void with_hookfuse_session(Input input, double learning_rate, Body&& body) {
  with_hookfuse_session_using(std::move(input), hookfuse::GradientDescentOptimizer(learning_rate),
                              std::forward<Body>(body));
}

/// The step written by hand with Eigen, as a user would without a library.
/// FusedUpdate = false: gradients go to buffers, then the update (the "gradients in buffers"
/// baseline). FusedUpdate = true: the weight-gradient products accumulate straight into the
/// weights (w -= lr * x^T * d), the gradients are never stored.
class HandwrittenMlp {
 public:
  HandwrittenMlp(Eigen::Index capacity, float learning_rate)
      : h_(capacity, kHidden), z_(capacity, kOut), dz_(capacity, kOut), dh_(capacity, kHidden),
        lr_(learning_rate) {
    const InitialWeights init;
    w1_ = init.w1;
    w2_ = init.w2;
    b1_ = init.b1;
    b2_ = init.b2;
    gw1_.resize(kIn, kHidden);
    gw2_.resize(kHidden, kOut);
    gb1_.resize(kHidden);
    gb2_.resize(kOut);
  }

  /// One SGD step on x [batch, 784] (row-major) and labels [batch]; returns the mean loss.
  template <bool FusedUpdate>
  float step(const RowMatrix& x, const LabelVector& y) {
    const Eigen::Index batch = x.rows();
    auto h = h_.topRows(batch);
    auto z = z_.topRows(batch);
    auto dz = dz_.topRows(batch);
    auto dh = dh_.topRows(batch);
    h.noalias() = x * w1_;
    h.rowwise() += b1_;
    h = h.cwiseMax(0.f);
    z.noalias() = h * w2_;
    z.rowwise() += b2_;
    float loss = 0;
    const float inv_b = 1.f / static_cast<float>(batch);
    for (Eigen::Index i = 0; i < batch; ++i) {
      const float m = z.row(i).maxCoeff();
      dz.row(i) = (z.row(i).array() - m).exp().matrix();
      const float s = dz.row(i).sum();
      loss += m + std::log(s) - z(i, y(i));
      dz.row(i) /= s * static_cast<float>(batch);
      dz(i, y(i)) -= inv_b;
    }
    dh.noalias() = dz * w2_.transpose();
    dh = (h.array() > 0.f).select(dh, 0.f);
    if constexpr (FusedUpdate) {
      w2_.noalias() -= lr_ * (h.transpose() * dz);
      b2_.noalias() -= lr_ * dz.colwise().sum();
      w1_.noalias() -= lr_ * (x.transpose() * dh);
      b1_.noalias() -= lr_ * dh.colwise().sum();
    } else {
      gw2_.noalias() = h.transpose() * dz;
      gb2_ = dz.colwise().sum();
      gw1_.noalias() = x.transpose() * dh;
      gb1_ = dh.colwise().sum();
      w1_.noalias() -= lr_ * gw1_;
      b1_.noalias() -= lr_ * gb1_;
      w2_.noalias() -= lr_ * gw2_;
      b2_.noalias() -= lr_ * gb2_;
    }
    return loss * inv_b;
  }

  const RowMatrix& w1() const { return w1_; }
  const RowMatrix& w2() const { return w2_; }
  const Eigen::RowVectorXf& b1() const { return b1_; }
  const Eigen::RowVectorXf& b2() const { return b2_; }

 private:
  RowMatrix w1_, w2_, gw1_, gw2_;
  Eigen::RowVectorXf b1_, b2_, gb1_, gb2_;
  RowMatrix h_, z_, dz_, dh_;
  float lr_;
};

}  // namespace hookfuse_bench
