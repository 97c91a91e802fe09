// bench/hook_session.hpp: the Fashion-MNIST step of bench/mlp.hpp (batch B, the example's four
// hooks) with one more hook that writes files, for the cost of checkpoint, summary and profiler
// hooks
// (bench/checkpoint.cpp, bench/summary.cpp, bench/hook_cost/driver.cpp).
//
// Extra::none is with_hookfuse_session's session exactly; every other variant adds one hook
// after the four. "Never" means a cadence of 2^40 steps: the hook is there but does not fire in
// a benchmark (the first run of a session is run before timing starts, see warm_up()).
#pragma once

#include <boost/hana/tuple.hpp>
#include <boost/hana/unpack.hpp>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <hookfuse/hookfuse.hpp>
#include <hookfuse/hooks/profiler_hook.hpp>
#include <hookfuse/hooks/summary_saver_hook.hpp>
#include <hookfuse/io/saver.hpp>
#include <hookfuse/io/summary_writer_cache.hpp>
#include <limits>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>

#include "mlp.hpp"

namespace hookfuse_bench {

/// The hook added to the example's four.
enum class Extra {
  none,                      // the four hooks only
  checkpoint_saver,          // CheckpointSaverHook(save_steps = never), io::Saver
  summary_saver,             // SummarySaverHook(save_steps = never): loss and accuracy scalars
  summary_saver_every_step,  // the same with save_steps = 1: fires every step
  step_counter_output_dir,   // StepCounterHook(every_n_steps = never, output_dir)
  profiler,                  // ProfilerHook(save_steps = never): phase timings compiled in
  profiler_every_step,       // ProfilerHook(save_steps = 1): traces every step after the first
};

inline constexpr std::int64_t kNever = std::int64_t{1} << 40;

inline const char* extra_name(Extra e) {
  switch (e) {
    case Extra::none:
      return "none";
    case Extra::checkpoint_saver:
      return "checkpoint_saver";
    case Extra::summary_saver:
      return "summary_saver";
    case Extra::summary_saver_every_step:
      return "summary_saver_every_step";
    case Extra::step_counter_output_dir:
      return "step_counter_output_dir";
    case Extra::profiler:
      return "profiler";
    case Extra::profiler_every_step:
      return "profiler_every_step";
  }
  return "?";
}

/// A fresh directory under `root` (mkdtemp), removed with everything in it on destruction.
class ScratchDir {
 public:
  explicit ScratchDir(const std::filesystem::path& root) {
    std::string pattern = (root / "hookfuse-bench-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr)
      throw std::runtime_error("bench: cannot create a directory under " + root.string());
    path_ = pattern;
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

/// Builds the model of with_hookfuse_session (same layers, weights, four hooks, extra
/// "accuracy"), adds the hook `E` writing into `dir`, and calls body(session).
template <Extra E, class Input, class Body>
void with_extra_hook_session(Input input, const std::string& dir, Body&& body) {
  namespace hf = hookfuse;
  namespace hana = boost::hana;
  hf::Placeholder<"x", float, kIn> x;
  hf::Placeholder<"labels", std::int32_t, 1> labels;
  hf::nn::Dense<"dense", float> hidden(kIn, kHidden, hf::nn::glorot_uniform{1});
  hf::nn::Dense<"logits", float> output(kHidden, kOut, hf::nn::glorot_uniform{2});
  auto logits = hf::named<"logits">(output(hf::relu(hidden(x))));
  auto loss = hf::named<"loss">(hf::sparse_softmax_cross_entropy(labels, logits));
  auto accuracy = hf::named<"accuracy">(hf::accuracy(labels, logits));
  hf::GlobalStep global_step;
  auto train_op = hf::GradientDescentOptimizer(0.01).minimize(loss, global_step);

  auto extra = [&] {
    if constexpr (E == Extra::none) {
      return hana::make_tuple();
    } else if constexpr (E == Extra::checkpoint_saver) {
      using Hook =
          hf::CheckpointSaverHook<hf::io::Saver, hana::tuple<>, hf::SteadyClock, hf::NullLogger>;
      return hana::make_tuple(Hook(dir, {.save_steps = kNever}, hf::io::Saver()));
    } else if constexpr (E == Extra::summary_saver || E == Extra::summary_saver_every_step) {
      const std::int64_t steps = E == Extra::summary_saver ? kNever : 1;
      return hana::make_tuple(
          hf::SummarySaverHook({.save_steps = steps, .output_dir = dir},
                               hf::summary::merge(hf::summary::scalar<"loss">(loss),
                                                  hf::summary::scalar<"accuracy">(accuracy))));
    } else if constexpr (E == Extra::profiler || E == Extra::profiler_every_step) {
      const std::int64_t steps = E == Extra::profiler ? kNever : 1;
      return hana::make_tuple(hf::ProfilerHook<hf::SteadyClock, hf::NullLogger>(
          {.save_steps = steps, .output_dir = dir}));
    } else {
      static_assert(E == Extra::step_counter_output_dir);
      return hana::make_tuple(hf::StepCounterHook<hf::SteadyClock, hf::NullLogger>(
          {.every_n_steps = kNever, .output_dir = dir}));
    }
  }();

  hana::unpack(std::move(extra), [&](auto&&... more) {
    hf::MonitoredTrainingSession session(
        train_op, std::move(input),
        hf::hooks(hf::StopAtStepHook({.last_step = std::numeric_limits<std::int64_t>::max()}),
                  hf::StepCounterHook<hf::SteadyClock, hf::NullLogger>({.every_n_steps = 100}),
                  hf::NanTensorHook<"loss", hf::NullLogger>(),
                  hf::BasicLoggingTensorHook<hf::LoggingPolicies<hf::SteadyClock, hf::NullLogger>,
                                             "loss", "accuracy">({.every_n_iter = 100}),
                  std::move(more)...),
        accuracy);
    body(session);
  });
  hf::io::SummaryWriterCache::clear();  // closes the event files of `dir`
}

}  // namespace hookfuse_bench
