// bench/step.cpp: one Fashion-MNIST training step (784 -> 256 ReLU -> 10, softmax cross-entropy,
// SGD, float32): hookfuse's fused step with the example's four hooks against a hand-written Eigen
// forward/backward/update of the same model, at batch 1, 32 and 128.
#include <benchmark/benchmark.h>

#include <hookfuse/hookfuse.hpp>
#include <limits>
#include <random>

namespace hf = hookfuse;

namespace {

constexpr int kIn = 784, kHidden = 256, kOut = 10;

using RowMatrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using LabelVector = Eigen::Matrix<std::int32_t, Eigen::Dynamic, 1>;

// A batch of random pixels and labels, fed again every step (no input cost in either loop).
struct RandomBatch {
  RowMatrix x;
  LabelVector y;
  explicit RandomBatch(hf::Index batch) : x(batch, kIn), y(batch) {
    std::mt19937 rng(7);
    for (hf::Index i = 0; i < x.size(); ++i) x.data()[i] = static_cast<float>(rng() % 256) / 255.f;
    for (hf::Index i = 0; i < batch; ++i) y(i) = static_cast<std::int32_t>(rng() % kOut);
  }
  bool next() { return true; }
  hf::Index batch_size() const { return x.rows(); }
  template <class G>
  void feed(G& g) {
    g.template feed<"x">(x.data(), x.rows());
    g.template feed<"labels">(y.data(), x.rows());
  }
};

void BM_hookfuse_step(benchmark::State& state) {
  const auto batch = static_cast<hf::Index>(state.range(0));
  hf::Placeholder<"x", float, kIn> x;
  hf::Placeholder<"labels", std::int32_t, 1> labels;
  hf::nn::Dense<"dense", float> hidden(kIn, kHidden, hf::nn::glorot_uniform{1});
  hf::nn::Dense<"logits", float> output(kHidden, kOut, hf::nn::glorot_uniform{2});
  auto logits = hf::named<"logits">(output(hf::relu(hidden(x))));
  auto loss = hf::named<"loss">(hf::sparse_softmax_cross_entropy(labels, logits));
  auto accuracy = hf::named<"accuracy">(hf::accuracy(labels, logits));
  hf::GlobalStep global_step;
  auto train_op = hf::GradientDescentOptimizer(0.01).minimize(loss, global_step);
  hf::MonitoredTrainingSession session(
      train_op, RandomBatch(batch),
      hf::hooks(hf::StopAtStepHook({.last_step = std::numeric_limits<std::int64_t>::max()}),
                hf::StepCounterHook<hf::SteadyClock, hf::NullLogger>({.every_n_steps = 100}),
                hf::NanTensorHook<"loss", hf::NullLogger>(),
                hf::BasicLoggingTensorHook<hf::LoggingPolicies<hf::SteadyClock, hf::NullLogger>,
                                           "loss", "accuracy">({.every_n_iter = 100})),
      accuracy);
  for (auto _ : state) session.run();
  benchmark::DoNotOptimize(hidden.kernel.value.data());
  state.SetItemsProcessed(state.iterations() * batch);
}

// The same step written by hand with Eigen, gradients in buffers, as a user would without a
// library: the baseline hookfuse's fused, hooked step is compared with.
void BM_handwritten_eigen_step(benchmark::State& state) {
  const auto batch = static_cast<hf::Index>(state.range(0));
  RandomBatch data(batch);
  RowMatrix w1(kIn, kHidden), w2(kHidden, kOut), gw1(kIn, kHidden), gw2(kHidden, kOut);
  Eigen::RowVectorXf b1 = Eigen::RowVectorXf::Zero(kHidden), b2 = Eigen::RowVectorXf::Zero(kOut);
  Eigen::RowVectorXf gb1(kHidden), gb2(kOut);
  hf::nn::glorot_uniform{1}(w1);
  hf::nn::glorot_uniform{2}(w2);
  RowMatrix h(batch, kHidden), z(batch, kOut), dz(batch, kOut), dh(batch, kHidden);
  const float lr = 0.01f;
  for (auto _ : state) {
    h.noalias() = data.x * w1;
    h.rowwise() += b1;
    h = h.cwiseMax(0.f);
    z.noalias() = h * w2;
    z.rowwise() += b2;
    float loss = 0;
    for (hf::Index i = 0; i < batch; ++i) {
      const float m = z.row(i).maxCoeff();
      dz.row(i) = (z.row(i).array() - m).exp().matrix();
      const float s = dz.row(i).sum();
      loss += m + std::log(s) - z(i, data.y(i));
      dz.row(i) /= s * static_cast<float>(batch);
      dz(i, data.y(i)) -= 1.f / static_cast<float>(batch);
    }
    benchmark::DoNotOptimize(loss);
    gw2.noalias() = h.transpose() * dz;
    gb2 = dz.colwise().sum();
    dh.noalias() = dz * w2.transpose();
    dh = (h.array() > 0.f).select(dh, 0.f);
    gw1.noalias() = data.x.transpose() * dh;
    gb1 = dh.colwise().sum();
    w1.noalias() -= lr * gw1;
    b1.noalias() -= lr * gb1;
    w2.noalias() -= lr * gw2;
    b2.noalias() -= lr * gb2;
  }
  benchmark::DoNotOptimize(w1.data());
  state.SetItemsProcessed(state.iterations() * batch);
}

}  // namespace

BENCHMARK(BM_handwritten_eigen_step)->Arg(1)->Arg(32)->Arg(128)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_hookfuse_step)->Arg(1)->Arg(32)->Arg(128)->Unit(benchmark::kMicrosecond);

BENCHMARK_MAIN();
