// hookfuse/estimator/estimator_args.hpp: the arguments of Estimator::train and evaluate, and
// what evaluate returns (TF's keyword arguments and its metrics dict).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>

#include "hookfuse/config.hpp"
#include "hookfuse/errors.hpp"

namespace hookfuse {

/// train()'s step limits (TF: train(steps=, max_steps=)): `steps` more steps from where the
/// model_dir's checkpoint is, or up to the absolute global step `max_steps`; neither: until the
/// input ends. Both given, or a value <= 0: ValueError.
struct TrainArgs {
  std::optional<std::int64_t> steps = std::nullopt;
  std::optional<std::int64_t> max_steps = std::nullopt;

  /// TensorFlow's ValueErrors: "Estimator.train: Can not provide both steps and max_steps.",
  /// "Estimator.train: Must specify steps > 0, given: 0" (likewise max_steps).
  void validate() const {
    if (steps && max_steps)
      detail::fail<ValueError>("Estimator.train: Can not provide both steps and max_steps.");
    if (steps && *steps <= 0)
      detail::fail<ValueError>("Estimator.train: Must specify steps > 0, given: " +
                               std::to_string(*steps));
    if (max_steps && *max_steps <= 0)
      detail::fail<ValueError>("Estimator.train: Must specify max_steps > 0, given: " +
                               std::to_string(*max_steps));
  }
};

/// evaluate()'s arguments (TF: evaluate(steps=, checkpoint_path=, name=)): at most `steps`
/// batches (none: until the input ends; <= 0: ValueError); the checkpoint to evaluate (empty:
/// model_dir's latest); `name` evaluates into model_dir/eval_<name> instead of model_dir/eval.
struct EvalArgs {
  std::optional<std::int64_t> steps = std::nullopt;
  std::string checkpoint_path{};
  std::string name{};
};

/// What evaluate() returns (TF: a dict): each metric's value by name, "loss" among them, and
/// the global step of the checkpoint evaluated.
struct EvalResult {
  std::int64_t global_step = 0;
  std::map<std::string, float> metrics;

  /// The value of metric `name` ("loss" included); std::out_of_range naming it when absent.
  float at(const std::string& name) const {
    const auto it = metrics.find(name);
    if (it == metrics.end())
      detail::fail<std::out_of_range>("EvalResult: no metric named '" + name + "'");
    return it->second;
  }
  float loss() const { return at("loss"); }
};

}  // namespace hookfuse
