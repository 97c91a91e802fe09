// hookfuse/estimator/estimator_input.hpp: what an Estimator's input_fn returns: an input object
// and the placeholders its tensors feed (TF: input_fn returning (features, labels)), and
// numpy_input_fn, the input_fn over in-memory arrays
// (tf.compat.v1.estimator.inputs.numpy_input_fn).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>

#include "hookfuse/autodiff/expr.hpp"
#include "hookfuse/autodiff/feeds.hpp"
#include "hookfuse/data/input_fn.hpp"
#include "hookfuse/estimator/estimator_spec.hpp"

namespace hookfuse {

/// An input_fn's result: `input` (an object with next(), rows(), num_tensors() and tensor<K>(),
/// as data::NumpyInputFn) whose tensors feed, in order, the feature placeholder(s) `Features`
/// (one Placeholder type, or a std::tuple of them) and then the labels placeholder `Labels`
/// (NoField: none, as for predict). The model_fn receives a `Features` and a `Labels` value.
template <class Features, class Labels, class In>
struct EstimatorInput {
  using features_type = Features;
  using labels_type = Labels;
  using input_type = In;
  In input;
};

/// `estimator_input<X, Y>(std::move(numpy_input))`: what an input_fn returns.
template <class Features, class Labels = NoField, class In>
EstimatorInput<Features, Labels, std::remove_cvref_t<In>> estimator_input(In&& input) {
  return {std::forward<In>(input)};
}

namespace detail {
template <class T>
inline constexpr bool is_estimator_input_v = false;
template <class F, class L, class In>
inline constexpr bool is_estimator_input_v<EstimatorInput<F, L, In>> = true;

/// The placeholder types an input feeds, features first.
template <class F>
struct feature_placeholders {
  using type = std::tuple<F>;
};
template <class... Ps>
struct feature_placeholders<std::tuple<Ps...>> {
  using type = std::tuple<Ps...>;
};
template <class F, class L>
struct fed_placeholders {
  using type = decltype(std::tuple_cat(std::declval<typename feature_placeholders<F>::type>(),
                                       std::declval<std::tuple<L>>()));
};
template <class F>
struct fed_placeholders<F, NoField> {
  using type = typename feature_placeholders<F>::type;
};

/// feeds<names of the placeholders...>(input) for an EstimatorInput (its features only when
/// FeaturesOnly: predict feeds no labels, as TensorFlow's predict ignores them).
template <class EI, bool FeaturesOnly = false,
          class Ps = typename fed_placeholders<
              typename EI::features_type,
              std::conditional_t<FeaturesOnly, NoField, typename EI::labels_type>>::type>
struct estimator_feeds;
template <class EI, bool FeaturesOnly, class... Ps>
struct estimator_feeds<EI, FeaturesOnly, std::tuple<Ps...>> {
  static auto make(typename EI::input_type& in) { return feeds<Ps::name...>(in); }
};
}  // namespace detail

/// The input_fn of tf.compat.v1.estimator.inputs.numpy_input_fn(x, y, batch_size, num_epochs,
/// shuffle): every call returns a fresh input over the arrays (the first batch of the first
/// epoch again, as TensorFlow's input_fn builds a new pipeline per train or evaluate call).
/// `x` holds num_examples x X::cols values of X::scalar, example-major; `y` num_examples
/// values of Y::scalar, or nullptr for features only (predict: then Y is NoField). The arrays
/// must outlive the input_fn and what it returns. Options and errors as data::NumpyInputFn's
/// (thrown by the call, naming NumpyInputFn and the option).
template <class X, class Y = NoField>
struct NumpyEstimatorInputFn {
  struct NoLabels {
    using scalar = float;  // the buffer type of an input without targets (never filled)
  };
  using label_scalar = typename std::conditional_t<std::is_same_v<Y, NoField>, NoLabels, Y>::scalar;
  using input_type = data::NumpyInputFn<typename X::scalar, label_scalar>;
  const typename X::scalar* x;
  std::int64_t num_examples;
  std::int64_t num_features;
  const label_scalar* y;
  typename input_type::Options options;

  EstimatorInput<X, Y, input_type> operator()() const {
    return {input_type(x, num_examples, num_features, y, options)};
  }
};

/// numpy_input_fn<X, Y>(x, num_examples, y, options): features of placeholder X (its columns
/// per example, which must be fixed), labels of placeholder Y (one value per example).
template <class X, class Y>
NumpyEstimatorInputFn<X, Y> numpy_input_fn(
    const typename X::scalar* x, std::int64_t num_examples, const typename Y::scalar* y,
    const data::NumpyInputFnOptions<typename X::scalar>& options) {
  static_assert(X::cols_at_compile_time != Dynamic,
                "hookfuse: numpy_input_fn<X, Y>: X needs a fixed column count");
  return {x, num_examples, X::cols_at_compile_time, y, options};
}
/// numpy_input_fn<X, Y>(x, y, options) over spans, sizes checked: num_examples is y.size() and
/// x must hold num_examples x X's columns values (std::invalid_argument naming both sizes
/// otherwise, before anything reads them). An empty `y` with a non-empty `x` is features only
/// (y=None). The spans' memory must outlive the input_fn and what it returns.
template <class X, class Y>
NumpyEstimatorInputFn<X, Y> numpy_input_fn(
    std::span<const typename X::scalar> x, std::span<const typename Y::scalar> y,
    const data::NumpyInputFnOptions<typename X::scalar>& options) {
  static_assert(X::cols_at_compile_time != Dynamic,
                "hookfuse: numpy_input_fn<X, Y>: X needs a fixed column count");
  constexpr auto cols = static_cast<std::size_t>(X::cols_at_compile_time);
  const std::size_t n = y.empty() ? x.size() / cols : y.size();
  if (x.size() != n * cols)
    detail::fail<std::invalid_argument>(
        "numpy_input_fn: x holds " + std::to_string(x.size()) + " values, expected " +
        std::to_string(n) + " examples x " + std::to_string(cols) + " features of '" +
        std::string(X::name.view()) + "' = " + std::to_string(n * cols) +
        (y.empty() ? std::string(" (no y)") : " (y holds " + std::to_string(y.size()) + ")"));
  return {x.data(), static_cast<std::int64_t>(n), X::cols_at_compile_time,
          y.empty() ? nullptr : y.data(), options};
}

/// numpy_input_fn<X>(x, num_examples, options): features only (y=None), for predict.
template <class X>
NumpyEstimatorInputFn<X> numpy_input_fn(
    const typename X::scalar* x, std::int64_t num_examples,
    const data::NumpyInputFnOptions<typename X::scalar>& options) {
  static_assert(X::cols_at_compile_time != Dynamic,
                "hookfuse: numpy_input_fn<X>: X needs a fixed column count");
  return {x, num_examples, X::cols_at_compile_time, nullptr, options};
}

namespace detail {

/// An Estimator's input_fn() result, checked to be an EstimatorInput at compile time.
template <class InputFn>
auto call_input_fn(InputFn& input_fn) {
  static_assert(std::is_invocable_v<InputFn&>,
                "hookfuse: an Estimator's input_fn is called with no arguments and returns an "
                "EstimatorInput (numpy_input_fn<X, Y>(...), or estimator_input<X, Y>(input))");
  using R = std::remove_cvref_t<std::invoke_result_t<InputFn&>>;
  static_assert(is_estimator_input_v<R>,
                "hookfuse: an Estimator's input_fn returns an EstimatorInput: "
                "estimator_input<FeaturePlaceholder, LabelPlaceholder>(input)");
  return input_fn();
}

}  // namespace detail

}  // namespace hookfuse
