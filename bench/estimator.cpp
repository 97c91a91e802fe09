// bench/estimator.cpp: what the Estimator costs over the session it runs, on the benchmark MLP
// (784 -> 256 ReLU -> 10, sparse softmax cross-entropy, SGD 0.1, float32; bench/mlp.hpp's shape
// and initial weights, built by a model_fn in a VariableStore).
//
// BM_estimator_train_step/N: Estimator::train(input_fn, {.steps = N}) at batch 32, the manual
// time of the whole call divided by N (setup, restore, the first and last checkpoint included:
// N = 1 is about that fixed cost; the difference between N = 200 and N = 2000 is the per-step
// cost without it).
// BM_session_step_estimator_hooks: the MonitoredTrainingSession that train() builds, built here
// by hand from the same model_fn, options and hooks, one session.run<"loss">() per iteration.
// BM_estimator_evaluate/N: Estimator::evaluate(input_fn, {.steps = N}) at batch 1000 (loss and
// accuracy), examples per second. BM_forward_logits/1000: the model's forward pass to the logits
// alone (bind_forward), what LibTorch's NoGradGuard forward in peers/torch_mlp.cpp computes.
// BM_train_step/1000: the training step of bench/step.cpp (four hooks) at batch 1000.
// BM_graph_buffer_bytes: Graph::buffer_bytes() of evaluate's tensors bound with bind and with
// bind_forward at batch 1000. BM_rss_*: one call each, for bench/estimator_memory.sh, which runs
// each in its own process under /usr/bin/time -v.
//
// Model directories go under $HOOKFUSE_BENCH_DIR (default /tmp/hookfuse_bench_estimator).
#include <benchmark/benchmark.h>

#include <hookfuse/estimator/estimator.hpp>
#include <hookfuse/hookfuse.hpp>
#include <hookfuse/metrics.hpp>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <string>
#include <type_traits>

#include "mlp.hpp"
#include "peak.hpp"

namespace hf = hookfuse;
namespace fs = std::filesystem;
using namespace hookfuse_bench;

namespace {

using X = hf::Placeholder<"x", float, kIn>;
using Y = hf::Placeholder<"labels", std::int32_t, 1>;
constexpr double kLearningRate = 0.1;

/// RandomBatch as an input function's view (data::NumpyInputFn's next/rows/tensor<K>): the same
/// batch every step, fed without a copy, so neither path pays for input.
struct RepeatedBatch {
  const RandomBatch* data;
  bool next() { return true; }
  std::int64_t rows() const { return data->x.rows(); }
  std::int64_t batch_size() const { return rows(); }
  std::int64_t num_tensors() const { return 2; }
  template <std::size_t K>
  auto tensor() const {
    if constexpr (K == 0) return hf::data::BatchTensor<float>{data->x.data(), kIn};
    else return hf::data::BatchTensor<std::int32_t>{data->y.data(), 1};
  }
};

/// The benchmark MLP as a model_fn: dense/kernel glorot_uniform{1}, logits/kernel
/// glorot_uniform{2}, zero biases (InitialWeights), loss "loss", accuracy in evaluation.
auto mlp_model_fn = [](X x, Y labels, auto mode, auto& vars) {
  auto& hidden = hf::nn::get_layer<hf::nn::Dense<"dense", float>>(vars, "dense", kIn, kHidden,
                                                                   hf::nn::glorot_uniform{1});
  auto& output = hf::nn::get_layer<hf::nn::Dense<"logits", float>>(vars, "logits", kHidden, kOut,
                                                                    hf::nn::glorot_uniform{2});
  auto logits = hf::named<"logits">(output(hf::relu(hidden(x))));
  auto loss = hf::named<"loss">(hf::sparse_softmax_cross_entropy(labels, logits));
  return hf::EstimatorSpec{
      .mode = mode,
      .predictions = logits,
      .loss = loss,
      .train_op = hf::GradientDescentOptimizer(kLearningRate).minimize(loss, vars.global_step()),
      .eval_metric_ops =
          hf::eval_metric_ops(hf::metric<"accuracy">(hf::metrics::Accuracy{}, labels, logits))};
};

using Config = hf::RunConfig<hf::SteadyClock, hf::NullLogger>;

fs::path bench_dir(const std::string& leaf) {
  const char* env = std::getenv("HOOKFUSE_BENCH_DIR");
  return fs::path(env != nullptr ? env : "/tmp/hookfuse_bench_estimator") / leaf;
}

/// A fresh (emptied) model directory.
std::string fresh_dir(const std::string& leaf) {
  const fs::path dir = bench_dir(leaf);
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir.string();
}

auto make_estimator(const std::string& model_dir) {
  return hf::Estimator(mlp_model_fn, Config{.model_dir = model_dir});
}

/// Trains `steps` steps at batch 32 into `model_dir`, so that evaluate has a checkpoint.
void train_for_eval(const std::string& model_dir, std::int64_t steps) {
  const RandomBatch data(32);
  make_estimator(model_dir).train(
      [&] { return hf::estimator_input<X, Y>(RepeatedBatch{&data}); }, {.steps = steps});
}

void BM_estimator_train_step(benchmark::State& state) {
  const std::int64_t steps = state.range(0);
  const RandomBatch data(32);
  auto estimator = make_estimator(fresh_dir("train"));
  const auto input_fn = [&] { return hf::estimator_input<X, Y>(RepeatedBatch{&data}); };
  for (auto _ : state) {
    const auto t0 = std::chrono::steady_clock::now();
    estimator.train(input_fn, {.steps = steps});
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    state.SetIterationTime(s / static_cast<double>(steps));
  }
  state.counters["steps_per_call"] = static_cast<double>(steps);
}

/// Estimator::train's session (estimator.hpp): the same model_fn's train op with the loss as a
/// "loss" scalar summary, SessionOptions(checkpoint_dir, no saving of its own, summaries every
/// 100 steps, StepCounterHook every 100), the user hooks StopAtStepHook, NanTensorHook on the
/// loss, LoggingTensorHook of loss and global_step every 100 runs, and the chief-only
/// CheckpointSaverHook every 600 s (RunConfig's default: it saves at creation and not during
/// the timing); the loss fetched every run, as train() does.
void BM_session_step_estimator_hooks(benchmark::State& state) {
  const RandomBatch data(32);
  RepeatedBatch batch{&data};
  const std::string model_dir = fresh_dir("session");
  hf::nn::VariableStore vars;
  auto spec = mlp_model_fn(X{}, Y{}, hf::ModeKeys::TRAIN, vars);
  using Loss = decltype(spec.train_op.loss);
  using Opt = decltype(spec.train_op.optimizer);
  using Wrapped = hf::summary::Summary<hf::summary::Kind::scalar, "loss", Loss>;
  hf::TrainOp<Wrapped, Opt> train_op{Wrapped{spec.train_op.loss}, spec.train_op.optimizer,
                                     spec.train_op.global_step,
                                     spec.train_op.global_step_increment};
  hf::io::Saver saver;
  using SaverRef = hf::detail::SaverRef;
  using CkptHook = hf::CheckpointSaverHook<SaverRef, boost::hana::tuple<>, hf::SteadyClock,
                                           hf::NullLogger>;
  using LogHook = hf::BasicLoggingTensorHook<
      hf::LoggingPolicies<hf::SteadyClock, hf::NullLogger, hf::TensorTags<"loss", "step">>, "loss",
      "global_step">;
  hf::MonitoredTrainingSession session(
      std::move(train_op), hf::feeds<"x", "labels">(batch),
      hf::SessionOptions<SaverRef, hf::SteadyClock, hf::NullLogger>{
          .checkpoint_dir = model_dir,
          .save_checkpoint_secs = 0.0,
          .save_summaries_steps = 100,
          .log_step_count_steps = 100,
          .saver = SaverRef{&saver}},
      hf::hooks(hf::StopAtStepHook({.num_steps = std::numeric_limits<std::int64_t>::max() / 2}),
                hf::NanTensorHook<"loss", hf::NullLogger>(),
                LogHook({.every_n_iter = 100}, hf::TensorTags<"loss", "step">{})),
      hf::chief_only_hooks(CkptHook(model_dir, {.save_secs = 600.0}, SaverRef{&saver})));
  for (auto _ : state) {
    auto values = session.template run<"loss">();
    benchmark::DoNotOptimize((*values).template get<"loss">().item());
  }
  session.close();
}

void BM_estimator_evaluate(benchmark::State& state) {
  constexpr hf::Index batch = 1000;
  const std::int64_t steps = state.range(0);
  const std::string model_dir = fresh_dir("evaluate");
  train_for_eval(model_dir, 10);
  const RandomBatch data(batch);
  auto estimator = make_estimator(model_dir);
  const auto input_fn = [&] { return hf::estimator_input<X, Y>(RepeatedBatch{&data}); };
  float accuracy = 0;
  for (auto _ : state) {
    const auto t0 = std::chrono::steady_clock::now();
    accuracy = estimator.evaluate(input_fn, {.steps = steps}).at("accuracy");
    state.SetIterationTime(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  state.SetItemsProcessed(state.iterations() * steps * batch);
  state.counters["accuracy"] = accuracy;
}

/// x [1000, 784] -> logits, forward only: the work LibTorch's NoGradGuard forward does.
void BM_forward_logits(benchmark::State& state) {
  const auto batch = static_cast<hf::Index>(state.range(0));
  const RandomBatch data(batch);
  hf::nn::ForwardVariableStore vars;
  auto spec = mlp_model_fn(X{}, Y{}, hf::ModeKeys::EVAL, vars);
  auto g = hf::bind_forward(batch, spec.predictions);
  for (auto _ : state) {
    g.template feed<"x">(data.x);
    benchmark::DoNotOptimize(g.forward());
  }
  state.SetItemsProcessed(state.iterations() * batch);
}

/// bench/step.cpp's BM_hookfuse_step (four hooks, fused SGD update), here at SGD 0.1.
void BM_train_step(benchmark::State& state) {
  const auto batch = static_cast<hf::Index>(state.range(0));
  with_hookfuse_session(RandomBatch(batch), kLearningRate, [&](auto& session) {
    const auto start = std::chrono::steady_clock::now();
    for (auto _ : state) session.run();
    report_flops(state, mlp_step_flops(batch), start);
  });
  state.SetItemsProcessed(state.iterations() * batch);
}

/// The tensors evaluate's session binds (loss, the accuracy metric's labels and logits) at
/// batch 1000, with bind and with bind_forward: Graph::buffer_bytes() of each.
void BM_graph_buffer_bytes(benchmark::State& state) {
  constexpr hf::Index batch = 1000;
  hf::nn::VariableStore vars;
  auto spec = mlp_model_fn(X{}, Y{}, hf::ModeKeys::EVAL, vars);
  const auto& inputs = boost::hana::at_c<0>(spec.eval_metric_ops).inputs;
  const auto bytes = [&](auto&& binder) {
    auto g = binder(batch, spec.loss, boost::hana::at_c<0>(inputs), boost::hana::at_c<1>(inputs));
    return static_cast<double>(g.buffer_bytes());
  };
  double with_adjoints = 0, forward_only = 0;
  for (auto _ : state) {
    with_adjoints = bytes([](auto&&... a) { return hf::bind(a...); });
    forward_only = bytes([](auto&&... a) { return hf::bind_forward(a...); });
  }
  state.counters["bind_bytes"] = with_adjoints;
  state.counters["bind_forward_bytes"] = forward_only;
}

// --- peak RSS, one process each (bench/estimator_memory.sh) -------------------------------------

/// Writes the checkpoint the rss_evaluate process restores (10 steps at batch 32).
void BM_rss_prepare(benchmark::State& state) {
  for (auto _ : state) train_for_eval(fresh_dir("rss"), 10);
}

/// The process without the model: the batch of 1000 and the Estimator object only.
void BM_rss_baseline(benchmark::State& state) {
  const RandomBatch data(1000);
  auto estimator = make_estimator(bench_dir("rss").string());
  for (auto _ : state) benchmark::DoNotOptimize(data.x.data());
}

/// One evaluate() of 10 batches of 1000 from the prepared checkpoint.
void BM_rss_evaluate(benchmark::State& state) {
  const RandomBatch data(1000);
  auto estimator = make_estimator(bench_dir("rss").string());
  const auto input_fn = [&] { return hf::estimator_input<X, Y>(RepeatedBatch{&data}); };
  for (auto _ : state) benchmark::DoNotOptimize(estimator.evaluate(input_fn, {.steps = 10}));
}

/// evaluate's tensors bound at 1000 rows with bind_forward over ForwardVariables (Forward =
/// true: what evaluate builds) or with bind over Variables, then one forward pass (and, with
/// bind, one backward pass).
template <bool Forward>
void BM_rss_graph(benchmark::State& state) {
  constexpr hf::Index batch = 1000;
  const RandomBatch data(batch);
  std::conditional_t<Forward, hf::nn::ForwardVariableStore, hf::nn::VariableStore> vars;
  auto spec = mlp_model_fn(X{}, Y{}, hf::ModeKeys::EVAL, vars);
  const auto& inputs = boost::hana::at_c<0>(spec.eval_metric_ops).inputs;
  for (auto _ : state) {
    auto g = [&] {
      if constexpr (Forward)
        return hf::bind_forward(batch, spec.loss, boost::hana::at_c<0>(inputs),
                                boost::hana::at_c<1>(inputs));
      else
        return hf::bind(batch, spec.loss, boost::hana::at_c<0>(inputs),
                        boost::hana::at_c<1>(inputs));
    }();
    g.template feed<"x">(data.x);
    g.template feed<"labels">(data.y);
    benchmark::DoNotOptimize(g.forward());
    if constexpr (!Forward) g.backward();
    state.counters["buffer_bytes"] = static_cast<double>(g.buffer_bytes());
  }
}

}  // namespace

BENCHMARK(BM_fma_peak)->Iterations(1);
BENCHMARK(BM_session_step_estimator_hooks)->UseRealTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_estimator_train_step)
    ->Arg(1)->Iterations(10)->UseManualTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_estimator_train_step)
    ->Arg(200)->Iterations(10)->UseManualTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_estimator_train_step)
    ->Arg(2000)->Iterations(2)->UseManualTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_estimator_train_step)
    ->Arg(20000)->Iterations(1)->UseManualTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_train_step)->Arg(1000)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_estimator_evaluate)
    ->Arg(10)->Iterations(10)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_estimator_evaluate)
    ->Arg(100)->Iterations(2)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_forward_logits)->Arg(1000)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_graph_buffer_bytes)->Iterations(1);
BENCHMARK(BM_rss_prepare)->Iterations(1);
BENCHMARK(BM_rss_baseline)->Iterations(1);
BENCHMARK(BM_rss_evaluate)->Iterations(1);
BENCHMARK_TEMPLATE(BM_rss_graph, true)->Name("BM_rss_bind_forward")->Iterations(1);
BENCHMARK_TEMPLATE(BM_rss_graph, false)->Name("BM_rss_bind")->Iterations(1);

BENCHMARK_MAIN();
