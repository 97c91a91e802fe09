// bench/hooks_model.hpp: the model and the hooks of bench/hooks.cpp, shared with the
// instruction-count driver bench/hooks_cost/driver.cpp (bench/hooks_cost.sh), so that both
// measure the same session. See bench/hooks.cpp for what each piece is.
#pragma once

#include <cstddef>
#include <cstdint>
#include <hookfuse/hookfuse.hpp>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

namespace hookfuse_bench {

namespace hf = hookfuse;

constexpr std::int64_t kEveryRun = 1;
constexpr std::int64_t kNever = std::int64_t{1} << 40;  // after the first, untimed run

// --- the model ---------------------------------------------------------------------------------

constexpr int kBatch = 4, kFeatures = 2, kTargets = 2;

/// y = x W + b, all sizes fixed at compile time, so the bound graph holds no heap buffers.
/// Four points with two targets cannot be fitted exactly by six parameters: the loss settles at
/// a positive residual (counter mean_loss) instead of decaying towards zero and denormals.
struct TinyRegression {
  hf::Placeholder<"x", float, kFeatures, kBatch> x;
  hf::Placeholder<"y", float, kTargets, kBatch> y;
  hf::Variable<"W", float, kFeatures, kTargets> W;
  hf::Variable<"b", float, 1, kTargets> b;
  hf::GlobalStep global_step;

  auto train_op() {
    auto loss = hf::named<"loss">(hf::mean_squared_error(y, hf::matmul(x, W) + b));
    return hf::GradientDescentOptimizer(0.05).minimize(loss, global_step);
  }
};

/// The same batch every step: no input cost.
struct FixedBatch {
  float xs[kBatch * kFeatures] = {0.0f, 1.0f, 1.0f, 0.5f, 2.0f, -1.0f, -1.5f, 0.25f};
  float ys[kBatch * kTargets] = {1.0f, -0.5f, 2.5f, 0.0f, 0.5f, 3.0f, -2.0f, 1.0f};
  bool next() { return true; }
  hf::Index batch_size() const { return kBatch; }
  template <class Graph>
  void feed(Graph& graph) {
    graph.template feed<"x">(xs, kBatch, kFeatures);
    graph.template feed<"y">(ys, kBatch, kTargets);
  }
};

// --- what every hook does ----------------------------------------------------------------------

/// The body shared by both families: a LoggingTensorHook-style cadence on "loss" (counting runs,
/// as LoggingTensorHook's every_n_iter does) whose action is to accumulate the loss.
class LossWatcher {
 public:
  explicit LossWatcher(std::int64_t every_n_iter) : timer_(std::nullopt, every_n_iter) {}

  void begin() {
    timer_.reset();
    iter_ = 0;
  }
  /// before_run: does this run trigger (and so need "loss")?
  bool wants_loss() {
    trigger_ = timer_.should_trigger_for_step(iter_);
    return trigger_;
  }
  /// after_run: `loss` is the fetched loss when this run triggered.
  void observe(const hf::TensorValue& loss) {
    if (trigger_) {
      timer_.update_last_triggered_step(iter_);
      loss_sum_ += loss.item();
      ++fired_;
    }
    ++iter_;
  }

  /// Runs until the next trigger (SkipsIdleRuns, as LoggingTensorHook's).
  std::int64_t idle_runs() const { return timer_.steps_before_trigger(iter_); }
  void skip_runs(std::int64_t n) {
    iter_ += n;
    trigger_ = false;
  }

  double loss_sum() const { return loss_sum_; }
  std::int64_t fired() const { return fired_; }

 private:
  hf::SecondOrStepTimer<hf::FakeClock> timer_;
  std::int64_t iter_ = 0;
  std::int64_t fired_ = 0;
  double loss_sum_ = 0.0;
  bool trigger_ = false;
};

// --- fused: hooks in a compile-time tuple ------------------------------------------------------

/// A hookfuse hook; I only makes FusedLossHook<0>, <1>, ... distinct types. With Idle it says
/// when it is idle (SkipsIdleRuns: the session then calls no hook in a run where all are idle);
/// without, the session calls it every run.
template <std::size_t I, bool Idle = true>
class FusedLossHook {
 public:
  explicit FusedLossHook(std::int64_t every_n_iter) : watcher_(every_n_iter) {}
  void begin() { watcher_.begin(); }
  hf::SessionRunArgs<"loss"> before_run(hf::SessionRunContext&) { return {watcher_.wants_loss()}; }
  void after_run(hf::SessionRunContext&, const hf::SessionRunValues<"loss">& values) {
    watcher_.observe(values.get<"loss">());
  }
  /// The session's idle fast path (SkipsIdleRuns): a run between triggers calls no hook.
  std::int64_t idle_runs() const
    requires Idle
  {
    return watcher_.idle_runs();
  }
  void skip_runs(std::int64_t n)
    requires Idle
  {
    watcher_.skip_runs(n);
  }
  const LossWatcher& watcher() const { return watcher_; }

 private:
  LossWatcher watcher_;
};

template <bool Idle = true, std::size_t... I>
auto make_fused_hooks([[maybe_unused]] std::int64_t every_n_iter, std::index_sequence<I...>) {
  return hf::hooks(FusedLossHook<I, Idle>(every_n_iter)...);
}

// --- virtual: TensorFlow's dynamic hook list behind one adapter --------------------------------

/// What before_run returns in the dynamic interface (TensorFlow's SessionRunArgs or None).
struct DynamicRunArgs {
  bool wants_loss = false;
};
/// What after_run receives: the loss if this hook asked for it in this run, else nullptr.
struct DynamicRunValues {
  const hf::TensorValue* loss = nullptr;
};

/// A tf.compat.v1.train.SessionRunHook-like abstract interface.
struct VirtualHook {
  virtual ~VirtualHook() = default;
  virtual void begin() {}
  virtual DynamicRunArgs before_run(hf::SessionRunContext& ctx) = 0;
  virtual void after_run(hf::SessionRunContext& ctx, const DynamicRunValues& values) = 0;
};

template <std::size_t I>
class VirtualLossHook : public VirtualHook {
 public:
  explicit VirtualLossHook(std::int64_t every_n_iter) : watcher_(every_n_iter) {}
  void begin() override { watcher_.begin(); }
  DynamicRunArgs before_run(hf::SessionRunContext&) override { return {watcher_.wants_loss()}; }
  void after_run(hf::SessionRunContext&, const DynamicRunValues& values) override {
    static const hf::TensorValue none{};
    watcher_.observe(values.loss != nullptr ? *values.loss : none);
  }
  const LossWatcher& watcher() const { return watcher_; }

 private:
  LossWatcher watcher_;
};

/// One hookfuse hook driving a run-time list of virtual hooks. It fetches "loss" in a run only
/// when some hook asked for it, and hands it only to the hooks that asked.
class VirtualHookAdapter {
 public:
  explicit VirtualHookAdapter(std::vector<std::unique_ptr<VirtualHook>> hooks)
      : hooks_(std::move(hooks)), wants_(hooks_.size(), 0) {}

  void begin() {
    for (auto& h : hooks_) h->begin();
  }
  hf::SessionRunArgs<"loss"> before_run(hf::SessionRunContext& ctx) {
    bool any = false;
    for (std::size_t i = 0; i < hooks_.size(); ++i) {
      const bool wants = hooks_[i]->before_run(ctx).wants_loss;
      wants_[i] = wants ? 1 : 0;
      any = any || wants;
    }
    return {any};
  }
  void after_run(hf::SessionRunContext& ctx, const hf::SessionRunValues<"loss">& values) {
    const DynamicRunValues with_loss{&values.get<"loss">()}, without_loss{};
    for (std::size_t i = 0; i < hooks_.size(); ++i)
      hooks_[i]->after_run(ctx, wants_[i] != 0 ? with_loss : without_loss);
  }

  const std::vector<std::unique_ptr<VirtualHook>>& hooks() const { return hooks_; }

 private:
  std::vector<std::unique_ptr<VirtualHook>> hooks_;
  std::vector<unsigned char> wants_;
};

template <std::size_t... I>
std::vector<std::unique_ptr<VirtualHook>> make_virtual_hooks(
    [[maybe_unused]] std::int64_t every_n_iter, std::index_sequence<I...>) {
  std::vector<std::unique_ptr<VirtualHook>> hooks;
  hooks.reserve(sizeof...(I));
  (hooks.push_back(std::make_unique<VirtualLossHook<I>>(every_n_iter)), ...);
  return hooks;
}

}  // namespace hookfuse_bench
