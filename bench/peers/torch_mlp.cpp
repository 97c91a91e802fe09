// bench/peers/torch_mlp.cpp: the benchmark MLP (784 -> 256 ReLU -> 10, sparse softmax
// cross-entropy, plain SGD, float32) in LibTorch's C++ frontend, as a user would write it:
// a torch::nn::Module of two torch::nn::Linear, autograd, torch::optim::SGD, one thread.
//
// BM_libtorch_step/B: one step (forward, backward, update) on RandomBatch(B), SGD 0.01, as
// BM_handwritten_eigen_step in bench/step.cpp. BM_libtorch_epoch: the Fashion-MNIST epoch of
// bench/fashion_mnist.hpp, as BM_handwritten_eigen_epoch in bench/epoch.cpp. Both start from
// hookfuse_bench::InitialWeights. BM_libtorch_forward/1000: the forward pass alone (x -> logits)
// under torch::NoGradGuard, as an evaluation runs it, beside bench/estimator.cpp's
// BM_forward_logits and BM_estimator_evaluate. Before benchmarking, the binary checks that 20 steps at batch
// 1 and 32 match the hand-written Eigen step (peer_common.hpp) and exits if they do not.
// Run with OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 (bench/compare.sh does); --threads=N gives
// LibTorch (torch::set_num_threads) and OpenBLAS N threads instead of one.
#include <benchmark/benchmark.h>
#include <torch/torch.h>

#include <Eigen/Core>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>

#include "../fashion_mnist.hpp"
#include "../mlp.hpp"
#include "../peak.hpp"
#include "peer_common.hpp"

using namespace hookfuse_bench;

namespace {

struct MlpImpl : torch::nn::Module {
  torch::nn::Linear hidden{nullptr}, output{nullptr};
  MlpImpl()
      : hidden(register_module("hidden", torch::nn::Linear(kIn, kHidden))),
        output(register_module("output", torch::nn::Linear(kHidden, kOut))) {}
  /// x [batch, 784] -> logits [batch, 10].
  torch::Tensor forward(const torch::Tensor& x) { return output(torch::relu(hidden(x))); }
};
TORCH_MODULE(Mlp);

/// The model and its SGD optimizer, from InitialWeights.
class TorchMlp {
 public:
  explicit TorchMlp(float learning_rate)
      : optimizer_(net_->parameters(), torch::optim::SGDOptions(learning_rate)) {
    // torch::nn::Linear holds weight [out, in]; InitialWeights' kernels are [in, out]
    // row-major, so the column-major copy of a kernel is the torch weight's row-major layout.
    const InitialWeights init;
    const Eigen::MatrixXf w1 = init.w1, w2 = init.w2;
    torch::NoGradGuard no_grad;
    net_->hidden->weight.copy_(from_eigen(w1.data(), {kHidden, kIn}));
    net_->hidden->bias.copy_(from_eigen(init.b1.data(), {kHidden}));
    net_->output->weight.copy_(from_eigen(w2.data(), {kOut, kHidden}));
    net_->output->bias.copy_(from_eigen(init.b2.data(), {kOut}));
  }

  /// One SGD step on x [batch, 784] float and labels y [batch] int64; returns the mean loss.
  float step(const torch::Tensor& x, const torch::Tensor& y) {
    // Gradients set to none rather than zeroed: backward then writes them instead of adding
    // to zeros (torch::nn::Module::zero_grad(set_to_none), PyTorch 2's default).
    net_->zero_grad(/*set_to_none=*/true);
    torch::Tensor loss = torch::nn::functional::cross_entropy(net_->forward(x), y);
    loss.backward();
    optimizer_.step();
    return loss.item<float>();
  }

  /// The logits of x [batch, 784], no autograd graph recorded.
  torch::Tensor forward(const torch::Tensor& x) {
    torch::NoGradGuard no_grad;
    return net_->forward(x);
  }

  /// The parameters in InitialWeights' layout.
  MlpParams params() const {
    torch::NoGradGuard no_grad;
    const auto vec = [](const torch::Tensor& t) {
      return Eigen::Map<const Eigen::RowVectorXf>(t.data_ptr<float>(), t.numel());
    };
    // A torch weight [out, in] row-major read as a column-major [in, out] matrix is the kernel.
    const auto kernel = [](const torch::Tensor& t) {
      return RowMatrix(
          Eigen::Map<const Eigen::MatrixXf>(t.data_ptr<float>(), t.size(1), t.size(0)));
    };
    return {kernel(net_->hidden->weight), kernel(net_->output->weight), vec(net_->hidden->bias),
            vec(net_->output->bias)};
  }

 private:
  static torch::Tensor from_eigen(const float* data, torch::IntArrayRef sizes) {
    return torch::from_blob(const_cast<float*>(data), sizes, torch::kFloat32);
  }

  Mlp net_;
  torch::optim::SGD optimizer_;
};

/// x [rows, 784] float over `x` (no copy).
torch::Tensor features(const float* x, std::int64_t rows) {
  return torch::from_blob(const_cast<float*>(x), {rows, kIn}, torch::kFloat32);
}

/// Labels [rows] as the int64 tensor cross_entropy takes (a copy).
torch::Tensor labels(const std::int32_t* y, std::int64_t rows) {
  return torch::from_blob(const_cast<std::int32_t*>(y), {rows}, torch::kInt32).to(torch::kInt64);
}

void BM_libtorch_step(benchmark::State& state) {
  const std::int64_t batch = state.range(0);
  const RandomBatch data(batch);
  TorchMlp net(0.01f);
  const torch::Tensor x = features(data.x.data(), batch), y = labels(data.y.data(), batch);
  const auto start = std::chrono::steady_clock::now();
  for (auto _ : state) benchmark::DoNotOptimize(net.step(x, y));
  report_flops(state, mlp_step_flops(batch), start);
}

void BM_libtorch_forward(benchmark::State& state) {
  const std::int64_t batch = state.range(0);
  const RandomBatch data(batch);
  TorchMlp net(0.01f);
  const torch::Tensor x = features(data.x.data(), batch);
  for (auto _ : state) benchmark::DoNotOptimize(net.forward(x).data_ptr<float>());
  state.SetItemsProcessed(state.iterations() * batch);
}

void BM_libtorch_epoch(benchmark::State& state) {
  const FashionMnist* data = fashion_mnist_or_skip(state);
  if (data == nullptr) return;
  TorchMlp net(kEpochLearningRate);
  auto input = epoch_input(*data);
  const auto start = std::chrono::steady_clock::now();
  for (auto _ : state) {
    while (input.next()) {
      benchmark::DoNotOptimize(net.step(features(input.features_data(), input.rows()),
                                        labels(input.labels_data(), input.rows())));
    }
  }
  report_epoch(state, *data, start);
  state.counters["test_accuracy"] = test_accuracy(*data, net.params());
}

}  // namespace

BENCHMARK(BM_fma_peak)->Iterations(1);
BENCHMARK(BM_libtorch_step)->Arg(1)->Arg(32)->Arg(128)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_libtorch_forward)->Arg(1000)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_libtorch_epoch)->Iterations(1)->Unit(benchmark::kMillisecond);

int main(int argc, char** argv) {
  // --threads=N (default 1): LibTorch's intra-op threads and OpenBLAS's.
  torch::set_num_threads(take_threads_flag("torch_mlp", argc, argv));
  torch::set_num_interop_threads(1);
  double worst = 0;
  for (const Eigen::Index batch : kSelfCheckBatches) {
    TorchMlp net(kSelfCheckLearningRate);
    const RandomBatch data(batch);
    const torch::Tensor x = features(data.x.data(), batch), y = labels(data.y.data(), batch);
    worst = std::max(worst, check_against_handwritten(
                                "torch_mlp", batch, kSelfCheckLearningRate, kSelfCheckSteps,
                                [&] { return net.step(x, y); }, [&] { return net.params(); }));
  }
  report_self_check("torch_mlp", worst);
  benchmark::AddCustomContext("peer", "LibTorch " TORCH_VERSION);
  benchmark::AddCustomContext("torch_threads", std::to_string(torch::get_num_threads()));
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
