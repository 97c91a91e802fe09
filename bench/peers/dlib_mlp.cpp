// bench/peers/dlib_mlp.cpp: the benchmark MLP (784 -> 256 ReLU -> 10, softmax cross-entropy,
// plain SGD, float32) in dlib's DNN API:
// loss_multiclass_log<fc<10, relu<fc<256, input<matrix<float>>>>>>, trained a step at a time
// with compute_parameter_gradients + update_parameters and dlib::sgd(0, 0) solvers, one thread.
//
// dlib::sgd(weight_decay 0, momentum 0) computes v = -lr * gradient, then parameters += v: plain
// SGD, the same float result as w - lr * g. loss_multiclass_log averages over the batch like
// the other implementations. What dlib does beyond the others: its first fc layer also computes
// the gradient with respect to the input (dx = dh * w1^T, 2*B*784*256 more FLOPs, a third of
// the first layer's work, not counted in GFLOP/s) and zeroes that buffer every step; dlib has no
// switch to skip it.
//
// BM_dlib_step/B: one step on RandomBatch(B), SGD 0.01. BM_dlib_epoch: the Fashion-MNIST epoch
// of bench/fashion_mnist.hpp. Both from hookfuse_bench::InitialWeights, batches copied into a
// dlib tensor (dlib's to_tensor copies too): the step's once, the epoch's every batch. Before
// benchmarking, 20 steps at batch 1 and 32 are checked against the hand-written Eigen step
// (peer_common.hpp); the binary exits if they differ.
// Run with OPENBLAS_NUM_THREADS=1 (bench/compare.sh does); --threads=N gives OpenBLAS, the only
// threaded part of the step (dlib's fc layers multiply through its BLAS bindings), N threads.
#include <benchmark/benchmark.h>
#include <dlib/dnn.h>
#include <dlib/revision.h>

#include <Eigen/Core>
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "../fashion_mnist.hpp"
#include "../mlp.hpp"
#include "../peak.hpp"
#include "peer_common.hpp"

using namespace hookfuse_bench;

namespace {

using Net = dlib::loss_multiclass_log<
    dlib::fc<kOut, dlib::relu<dlib::fc<kHidden, dlib::input<dlib::matrix<float>>>>>>;

/// Copies x [rows, 784] (row-major) into `t`, shaped as dlib's input<matrix<float>> makes a batch
/// of 28 x 28 images: [rows, 1, 28, 28].
void to_dlib_tensor(const float* x, long rows, dlib::resizable_tensor& t) {
  t.set_size(rows, 1, 28, 28);
  std::copy(x, x + rows * kIn, t.host());
}

/// Labels as loss_multiclass_log takes them (unsigned long).
void to_dlib_labels(const std::int32_t* y, long rows, std::vector<unsigned long>& out) {
  out.resize(static_cast<std::size_t>(rows));
  for (long i = 0; i < rows; ++i)
    out[static_cast<std::size_t>(i)] = static_cast<unsigned long>(y[i]);
}

/// The network and its solvers, from InitialWeights.
class DlibMlp {
 public:
  explicit DlibMlp(float learning_rate)
      : solvers_(Net::num_computational_layers, dlib::sgd(0, 0)), lr_(learning_rate) {
    // dlib allocates (and randomizes) a layer's parameters in its first forward pass: run one
    // through to_tensor, which also records the input layer's sample layout, then overwrite
    // the parameters. fc_'s parameters are [inputs + 1, outputs] row-major: the kernel
    // [in, out] (InitialWeights' layout), then the bias row.
    const std::vector<dlib::matrix<float>> sample(1, dlib::zeros_matrix<float>(28, 28));
    dlib::resizable_tensor x;
    net_.to_tensor(sample.begin(), sample.end(), x);
    net_.forward(x);
    const InitialWeights init;
    set(hidden().get_weights(), init.w1.data(), init.w1.size());
    set(hidden().get_biases(), init.b1.data(), init.b1.size());
    set(output().get_weights(), init.w2.data(), init.w2.size());
    set(output().get_biases(), init.b2.data(), init.b2.size());
  }

  /// One SGD step on x [rows, 1, 28, 28] and `rows` labels; returns the mean loss.
  float step(const dlib::tensor& x, const std::vector<unsigned long>& y) {
    const double loss = net_.compute_parameter_gradients(x, y.begin());
    net_.update_parameters(solvers_, lr_);
    return static_cast<float>(loss);
  }

  /// The parameters in InitialWeights' layout.
  MlpParams params() {
    const auto get = [](const dlib::tensor& t, Eigen::Index rows, Eigen::Index cols) {
      return RowMatrix(Eigen::Map<const RowMatrix>(t.host(), rows, cols));
    };
    return {get(hidden().get_weights(), kIn, kHidden), get(output().get_weights(), kHidden, kOut),
            get(hidden().get_biases(), 1, kHidden), get(output().get_biases(), 1, kOut)};
  }

 private:
  static void set(dlib::tensor&& t, const float* values, Eigen::Index n) {
    if (static_cast<Eigen::Index>(t.size()) != n) {
      std::fprintf(stderr, "dlib_mlp: parameter tensor of %zu values, expected %lld\n", t.size(),
                   static_cast<long long>(n));
      std::exit(1);
    }
    std::copy(values, values + n, t.host());
  }
  dlib::fc_<kHidden, dlib::FC_HAS_BIAS>& hidden() { return dlib::layer<3>(net_).layer_details(); }
  dlib::fc_<kOut, dlib::FC_HAS_BIAS>& output() { return dlib::layer<1>(net_).layer_details(); }

  Net net_;
  std::vector<dlib::sgd> solvers_;
  double lr_;
};

void BM_dlib_step(benchmark::State& state) {
  const long batch = static_cast<long>(state.range(0));
  const RandomBatch data(batch);
  DlibMlp net(0.01f);
  dlib::resizable_tensor x;
  std::vector<unsigned long> y;
  to_dlib_tensor(data.x.data(), batch, x);
  to_dlib_labels(data.y.data(), batch, y);
  const auto start = std::chrono::steady_clock::now();
  for (auto _ : state) benchmark::DoNotOptimize(net.step(x, y));
  report_flops(state, mlp_step_flops(batch), start);
}

void BM_dlib_epoch(benchmark::State& state) {
  const FashionMnist* data = fashion_mnist_or_skip(state);
  if (data == nullptr) return;
  DlibMlp net(kEpochLearningRate);
  auto input = epoch_input(*data);
  dlib::resizable_tensor x;
  std::vector<unsigned long> y;
  const auto start = std::chrono::steady_clock::now();
  for (auto _ : state) {
    while (input.next()) {
      const long rows = static_cast<long>(input.rows());
      to_dlib_tensor(input.features_data(), rows, x);
      to_dlib_labels(input.labels_data(), rows, y);
      benchmark::DoNotOptimize(net.step(x, y));
    }
  }
  report_epoch(state, *data, start);
  state.counters["test_accuracy"] = test_accuracy(*data, net.params());
}

}  // namespace

BENCHMARK(BM_fma_peak)->Iterations(1);
BENCHMARK(BM_dlib_step)->Arg(1)->Arg(32)->Arg(128)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_dlib_epoch)->Iterations(1)->Unit(benchmark::kMillisecond);

int main(int argc, char** argv) {
  // --threads=N (default 1): OpenBLAS's threads; dlib's own code in a step is single-threaded.
  take_threads_flag("dlib_mlp", argc, argv);
  double worst = 0;
  for (const Eigen::Index batch : kSelfCheckBatches) {
    DlibMlp net(kSelfCheckLearningRate);
    const RandomBatch data(batch);
    dlib::resizable_tensor x;
    std::vector<unsigned long> y;
    to_dlib_tensor(data.x.data(), batch, x);
    to_dlib_labels(data.y.data(), batch, y);
    worst = std::max(worst, check_against_handwritten(
                                "dlib_mlp", batch, kSelfCheckLearningRate, kSelfCheckSteps,
                                [&] { return net.step(x, y); }, [&] { return net.params(); }));
  }
  report_self_check("dlib_mlp", worst);
  benchmark::AddCustomContext("peer", "dlib " + std::to_string(DLIB_MAJOR_VERSION) + "." +
                                          std::to_string(DLIB_MINOR_VERSION) + "." +
                                          std::to_string(DLIB_PATCH_VERSION));
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
