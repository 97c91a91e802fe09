// hookfuse/estimator/train_spec.hpp: TrainSpec and EvalSpec, what train_and_evaluate trains and
// evaluates (tf.estimator.TrainSpec, tf.estimator.EvalSpec, training.py), and eval_specs(...),
// several evaluation sets at once.
//
// Hooks, saving listeners and exporters stay compile-time tuples (class-template argument
// deduction): `TrainSpec(input_fn, 1000, hooks(StepCounterHook<>(...)))` keeps the hook's type.
#pragma once

#include <boost/hana/for_each.hpp>
#include <boost/hana/tuple.hpp>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "hookfuse/detail/format.hpp"
#include "hookfuse/errors.hpp"
#include "hookfuse/hooks/concepts.hpp"

namespace hookfuse {

namespace detail {
/// "-1" for an integral value, else the shortest "%g" text ("0.5"), as Python's str() of the
/// number a TensorFlow user passed.
inline std::string number_str(double v) {
  if (v == static_cast<double>(static_cast<std::int64_t>(v)))
    return std::to_string(static_cast<std::int64_t>(v));
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}
}  // namespace detail

/// tf.estimator.TrainSpec(input_fn, max_steps=None, hooks=None, saving_listeners=None): the
/// training half of train_and_evaluate. `input_fn` is an Estimator input_fn (numpy_input_fn<X,
/// Y>(...)); `max_steps` the absolute global step to train to (nullopt: until the input ends);
/// `hooks` (hooks(...)) run on every training step; `saving_listeners` (listeners(...)) are
/// attached to the training's CheckpointSaverHook before the evaluation's own listener.
/// Throws ValueError "TrainSpec: Must specify max_steps > 0, given: N" for max_steps <= 0.
template <class InputFn, class Hooks = boost::hana::tuple<>, class Listeners = boost::hana::tuple<>>
struct TrainSpec {
  InputFn input_fn;
  std::optional<std::int64_t> max_steps;
  Hooks hooks;
  Listeners saving_listeners;

  TrainSpec(InputFn input_fn_, std::optional<std::int64_t> max_steps_ = std::nullopt,
            Hooks hooks_ = {}, Listeners saving_listeners_ = {})
      : input_fn(std::move(input_fn_)),
        max_steps(max_steps_),
        hooks(std::move(hooks_)),
        saving_listeners(std::move(saving_listeners_)) {
    if (max_steps && *max_steps <= 0)
      detail::fail<ValueError>("TrainSpec: Must specify max_steps > 0, given: " +
                               std::to_string(*max_steps));
  }
};

/// EvalSpec's scalar arguments, by name, with TensorFlow's defaults: `steps` batches per
/// evaluation (nullopt: until the input ends), `name` (evaluates into model_dir/eval_<name>,
/// empty: model_dir/eval), `start_delay_secs` (used by TensorFlow's distributed evaluator
/// only; the local executor, the only one here, ignores it, as TensorFlow's does) and
/// `throttle_secs` (no new evaluation until that many seconds after the last one started).
struct EvalSpecArgs {
  std::optional<std::int64_t> steps = 100;
  std::string name{};
  double start_delay_secs = 120;
  double throttle_secs = 600;
};

/// tf.estimator.EvalSpec(input_fn, steps=100, name=None, hooks=None, exporters=None,
/// start_delay_secs=120, throttle_secs=600): the evaluation half of train_and_evaluate, as
/// EvalSpec(input_fn, {.steps = 10, .throttle_secs = 0}, hooks(...), exporters(...)). Fields
/// carry TensorFlow's names. Each evaluation receives a copy of `hooks` (std::ref(h) shares
/// one hook across them). `exporters` run after each evaluation (estimator/exporter.hpp).
/// Throws ValueError (messages prefixed "EvalSpec: ") for steps <= 0 ("Must specify steps > 0,
/// given: 0"), start_delay_secs < 0, throttle_secs < 0 ("Must specify throttle_secs >= 0,
/// given: -1"), an exporter with an empty name and two exporters of one name (TensorFlow's
/// _validate_exporters wording).
template <class InputFn, class Hooks = boost::hana::tuple<>, class Exporters = boost::hana::tuple<>>
struct EvalSpec {
  InputFn input_fn;
  std::optional<std::int64_t> steps;
  std::string name;
  Hooks hooks;
  Exporters exporters;
  double start_delay_secs;
  double throttle_secs;

  EvalSpec(InputFn input_fn_, EvalSpecArgs args = {}, Hooks hooks_ = {}, Exporters exporters_ = {})
      : input_fn(std::move(input_fn_)),
        steps(args.steps),
        name(std::move(args.name)),
        hooks(std::move(hooks_)),
        exporters(std::move(exporters_)),
        start_delay_secs(args.start_delay_secs),
        throttle_secs(args.throttle_secs) {
    if (steps && *steps <= 0)
      detail::fail<ValueError>("EvalSpec: Must specify steps > 0, given: " +
                               std::to_string(*steps));
    if (!(start_delay_secs >= 0))
      detail::fail<ValueError>("EvalSpec: Must specify start_delay_secs >= 0, given: " +
                               detail::number_str(start_delay_secs));
    if (!(throttle_secs >= 0))
      detail::fail<ValueError>("EvalSpec: Must specify throttle_secs >= 0, given: " +
                               detail::number_str(throttle_secs));
    check_exporter_names();
  }

 private:
  void check_exporter_names() const {
    std::vector<std::string> names;
    boost::hana::for_each(exporters, [&](const auto& e) { names.push_back(hook_ref(e).name()); });
    std::string all = "[";
    for (std::size_t i = 0; i < names.size(); ++i) all += (i ? ", '" : "'") + names[i] + "'";
    all += "]";
    for (std::size_t i = 0; i < names.size(); ++i) {
      if (names[i].empty())
        detail::fail<ValueError>(
            "EvalSpec: An Exporter cannot have a name that is `None` or empty. All exporter "
            "names: " +
            all);
      for (std::size_t j = 0; j < i; ++j)
        if (names[j] == names[i])
          detail::fail<ValueError>(
              "EvalSpec: `exporters` must have unique names. Such a name cannot be `None`. All "
              "exporter names: " +
              all);
    }
  }
};

/// The exporters of an EvalSpec, in call order (TF: a list of Exporters); std::ref(e) keeps
/// an exporter with the caller.
template <class... Es>
constexpr auto exporters(Es&&... es) {
  return boost::hana::make_tuple(std::forward<Es>(es)...);
}

/// Several evaluation sets for train_and_evaluate, each an EvalSpec with its own name,
/// evaluated at every trigger into model_dir/eval_<name> (beyond TensorFlow, whose
/// train_and_evaluate takes one EvalSpec). Specs of different input_fn types: this tuple;
/// specs of one type may also be passed as a std::vector<EvalSpec<...>>.
template <class... Specs>
constexpr auto eval_specs(Specs&&... specs) {
  return boost::hana::make_tuple(std::forward<Specs>(specs)...);
}

}  // namespace hookfuse
