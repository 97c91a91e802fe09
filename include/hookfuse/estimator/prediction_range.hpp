// hookfuse/estimator/prediction_range.hpp: what Estimator::predict returns: the predictions of
// an input, batch by batch as the range is walked (TF: the generator predict() returns).
#pragma once

#include <boost/hana/concat.hpp>
#include <boost/hana/tuple.hpp>
#include <boost/hana/unpack.hpp>
#include <cstddef>
#include <iterator>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>

#include "hookfuse/estimator/detail/model_variables.hpp"
#include "hookfuse/estimator/estimator_input.hpp"
#include "hookfuse/estimator/estimator_spec.hpp"
#include "hookfuse/estimator/mode_keys.hpp"
#include "hookfuse/hooks/session_run_hook.hpp"
#include "hookfuse/nn/variable_store.hpp"
#include "hookfuse/session/evaluation_session.hpp"

namespace hookfuse {

/// predict()'s arguments (TF: predict(checkpoint_path=, yield_single_examples=)): the
/// checkpoint (empty: model_dir's latest); one element per example (true) or per batch.
struct PredictArgs {
  std::string checkpoint_path{};
  bool yield_single_examples = true;
};

namespace detail {

/// The spec's predictions as a hana tuple of named tensors.
template <class P>
auto prediction_tuple(const P& p) {
  if constexpr (is_hana_tuple_v<P>)
    return p;
  else
    return boost::hana::make_tuple(p);
}

/// True when Key is one of Names (the spec's prediction names).
template <fixed_string Key, fixed_string... Names>
inline constexpr bool is_prediction_name = ((Names.view() == Key.view()) || ...);

/// One static_assert per key of predict<Keys...>, so the compiler's note after the error names
/// the key and the spec's prediction names: "is_prediction_name<fixed_string<12>{"nonexistnt"},
/// fixed_string<12>{"predictions"}> evaluates to false".
template <class PredictionTuple, fixed_string... Keys>
struct predict_keys;
template <class... Ps, fixed_string... Keys>
struct predict_keys<boost::hana::tuple<Ps...>, Keys...> {
  template <fixed_string Key>
  static constexpr bool check() {
    static_assert(is_prediction_name<Key, Ps::name...>,
                  "hookfuse: predict<\"key\">: the EstimatorSpec has no prediction of this name "
                  "(the note below names the key, then the spec's prediction names; TF: "
                  "ValueError 'Expected to run at least one output from ...')");
    return is_prediction_name<Key, Ps::name...>;
  }
  static constexpr bool value = (check<Keys>() && ...);
};

/// The prediction named Key among ps.
template <fixed_string Key, class P, class... Ps>
auto find_prediction(const P& p, const Ps&... ps) {
  if constexpr (P::name.view() == Key.view())
    return p;
  else
    return find_prediction<Key>(ps...);
}

/// The predictions predict<Keys...> returns: all when Keys is empty, else those, in order.
template <fixed_string... Keys, class... Ps>
auto select_predictions(const boost::hana::tuple<Ps...>& all) {
  if constexpr (sizeof...(Keys) == 0) {
    return all;
  } else {
    return boost::hana::unpack(all, [](const auto&... ps) {
      return boost::hana::make_tuple(find_prediction<Keys>(ps...)...);
    });
  }
}

/// What predict() returns when a key is not a prediction name (after the compile error): an
/// empty range whose element answers any get<>, so that the error is the only one.
struct NoPredictions {
  struct element {
    template <fixed_string>
    TensorValue get() const {
      return {};
    }
  };
  struct iterator {
    element operator*() const { return {}; }
    iterator& operator++() { return *this; }
    bool operator==(std::default_sentinel_t) const { return true; }
  };
  iterator begin() const { return {}; }
  std::default_sentinel_t end() const { return {}; }
};

}  // namespace detail

/// One element of a PredictionRange: the named predictions of one example ([1, k] each) or of
/// one batch ([rows, k]), as read-only views valid until the range moves on. `get<"name">()`
/// returns the TensorValue (hooks/session_run_hook.hpp: at(i, j), item(), dtype).
template <fixed_string... Names>
class Prediction {
 public:
  Prediction(const SessionRunValues<Names...>* values, Eigen::Index row, bool single)
      : values_(values), row_(row), single_(single) {}

  template <fixed_string Name>
  TensorValue get() const {
    TensorValue t = values_->template get<Name>();
    if (!single_) return t;
    std::size_t element = 4;
    if (t.dtype == DType::float64 || t.dtype == DType::int64) element = 8;
    t.data = static_cast<const char*>(t.data) + static_cast<std::ptrdiff_t>(row_ * t.row_stride) *
                                                    static_cast<std::ptrdiff_t>(element);
    t.rows = 1;
    return t;
  }

 private:
  const SessionRunValues<Names...>* values_;
  Eigen::Index row_;
  bool single_;
};

/// The range predict() returns (an input range: walk it once). Owns the model (its
/// VariableStore), the input and a forward-only MonitoredSession over the selected predictions,
/// restored when it is made; each step of the walk runs the next batch when the current one is
/// used up (prediction_hooks and the caller's hooks see one run per batch), until the input
/// ends. Writes no file. Movable; the walk's elements refer into it.
template <class Est, class EI, class Hooks, fixed_string... Keys>
class PredictionRange {
  using Store = typename Est::template store_for<EI, ModeKey<Mode::predict>>;
  using Spec = decltype(std::declval<Est&>().call_model_fn(
      std::declval<const EI&>(), ModeKeys::PREDICT, std::declval<Store&>()));
  using Selected = decltype(detail::select_predictions<Keys...>(
      detail::prediction_tuple(std::declval<Spec&>().predictions)));
  using FeedsT =
      decltype(detail::estimator_feeds<EI, true>::make(std::declval<typename EI::input_type&>()));
  /// The caller's hooks, then the spec's prediction_hooks.
  using AllHooks = decltype(boost::hana::concat(
      std::declval<Hooks>(), detail::as_hook_tuple(std::declval<Spec&>().prediction_hooks)));

  template <class T>
  struct session_of;
  template <class... Ps>
  struct session_of<boost::hana::tuple<Ps...>> {
    using type = MonitoredSession<FeedsT, AllHooks, Ps...>;
    using values = SessionRunValues<Ps::name...>;
    template <class S>
    static auto run(S& s) {
      return s.template run<Ps::name...>();
    }
    using prediction = Prediction<Ps::name...>;
  };
  using SessionT = typename session_of<Selected>::type;
  using Values = typename session_of<Selected>::values;

  struct State {
    Store vars;
    EI in;
    Spec spec;
    std::optional<SessionT> session;
    std::optional<Values> batch;
    Eigen::Index row = 0;
    Eigen::Index rows = 0;
    bool single = true;
    bool done = false;

    State(Est& est, EI&& input, std::optional<std::uint64_t> seed)
        : vars(),
          in(std::move(input)),
          spec((vars.seed = seed, est.call_model_fn(in, ModeKeys::PREDICT, vars))) {}

    void next_batch() {
      row = 0;
      rows = 0;
      while (!done) {
        if (session->should_stop()) {
          done = true;
          break;
        }
        auto v = session_of<Selected>::run(*session);
        if (!v) {
          done = true;
          break;
        }
        batch = *v;
        rows = batch->results[0].rows;
        if (rows > 0) break;
      }
      if (done) session->close();
    }
    void advance() {
      if (single && row + 1 < rows) {
        ++row;
        return;
      }
      next_batch();
    }
  };

 public:
  using value_type = typename session_of<Selected>::prediction;

  PredictionRange(Est& est, EI&& input, Hooks hooks, const PredictArgs& args)
      : state_(std::make_unique<State>(est, std::move(input), seed_of(est))) {
    State& s = *state_;
    const std::string checkpoint = est.checkpoint_to_restore(args.checkpoint_path, "predict");
    auto selected =
        detail::select_predictions<Keys...>(detail::prediction_tuple(s.spec.predictions));
    detail::ModelVariables owned(s.vars);
    owned.add_tuple(selected);
    est.restore_or_warm_start(owned, s.vars, checkpoint);
    s.single = args.yield_single_examples;
    boost::hana::unpack(std::move(selected), [&](auto&&... ps) {
      s.session.emplace(
          s.vars.global_step(), detail::estimator_feeds<EI, true>::make(s.in.input),
          boost::hana::concat(std::move(hooks),
                              detail::as_hook_tuple(std::move(s.spec.prediction_hooks))),
          std::move(ps)...);
    });
    s.next_batch();
  }

  class iterator {
   public:
    using iterator_category = std::input_iterator_tag;
    using value_type = typename PredictionRange::value_type;
    using difference_type = std::ptrdiff_t;
    iterator() = default;
    explicit iterator(State* s) : s_(s) {}
    value_type operator*() const { return value_type(&*s_->batch, s_->row, s_->single); }
    iterator& operator++() {
      s_->advance();
      return *this;
    }
    void operator++(int) { ++*this; }
    bool operator==(std::default_sentinel_t) const { return s_ == nullptr || s_->done; }

   private:
    State* s_ = nullptr;
  };

  iterator begin() { return iterator(state_.get()); }
  std::default_sentinel_t end() { return {}; }

 private:
  static std::optional<std::uint64_t> seed_of(Est& est) {
    if (est.config().tf_random_seed)
      return static_cast<std::uint64_t>(*est.config().tf_random_seed);
    return std::nullopt;
  }
  std::unique_ptr<State> state_;
};

}  // namespace hookfuse
