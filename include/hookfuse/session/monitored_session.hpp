// hookfuse/session/monitored_session.hpp: MonitoredTrainingSession, the fused training loop
// (tf.compat.v1.train.MonitoredTrainingSession).
//
// Hooks live in a boost::hana::tuple. Every event is a compile-time fold over that tuple, and
// run() is one function: every hook's before_run, the next batch, forward, backward, the fetches
// some hook asked for, the update, every hook's after_run, the stop check. No virtual calls, no
// std::function, no heap allocation.
//
// The fused update: when the optimizer's update is linear in the gradient (SGD), the update of
// every variable whose gradient no hook can see is folded into the backward pass (the weight-
// gradient product accumulates straight into the weights). A variable stays unfused, its
// gradient stored in Variable::grad and applied after the fetches as before, when a hook
// requests "gradients/<variable>", when any hook declares `reads_gradients`, or when the
// variable is used more than once in the model. (A hook that requests a variable itself gets a
// view of it, which shows this run's update in after_run on both paths.) Decided at
// compile time; see update_fused below.
#pragma once

#include <boost/hana/at.hpp>
#include <boost/hana/for_each.hpp>
#include <boost/hana/length.hpp>
#include <boost/hana/range.hpp>
#include <boost/hana/tuple.hpp>
#include <boost/hana/unpack.hpp>
#include <array>
#include <cstdint>
#include <type_traits>
#include <utility>

#include "hookfuse/autodiff/graph.hpp"
#include "hookfuse/hooks/concepts.hpp"
#include "hookfuse/optim/gradient_descent.hpp"
#include "hookfuse/session/feeds.hpp"

namespace hookfuse {

/// The hooks of a session, in the order their events are called.
template <class... Hooks>
constexpr auto hooks(Hooks&&... hs) {
  return boost::hana::make_tuple(std::forward<Hooks>(hs)...);
}

namespace detail {
template <class Hook, fixed_string Name, bool Known>
constexpr bool check_fetch() {
  static_assert(Known,
                "hookfuse: a hook fetches a tensor name that the model does not have, or "
                "'gradients/<name>' of a tensor the loss has no gradient for "
                "(the hook is 'Hook' and the name is 'Name' in the instantiation above)");
  return Known;
}
inline constexpr fixed_string global_step_name{"global_step"};

/// The session's fusion policy: a variable is pinned (its gradient stored) when a hook could see
/// its gradient: it requests "gradients/<variable>" or declares reads_gradients.
template <class Hooks>
struct HookPins;
template <class... Hs>
struct HookPins<boost::hana::tuple<Hs...>> {
  template <fixed_string... Ns>
  static constexpr bool requested(SessionRunArgs<Ns...>, std::string_view var) {
    (void)var;  // unused when the hook requests nothing
    return ((gradient_target(Ns.view()) == var) || ...);
  }
  static constexpr bool pinned(std::string_view var) {
    (void)var;  // unused in a session without hooks
    return ((ReadsGradients<Hs> || requested(run_args_t<Hs>{}, var)) || ...);
  }
};
}  // namespace detail

/// Runs a train op with hooks, like tf.compat.v1.train.MonitoredTrainingSession:
///
///     MonitoredTrainingSession session(train_op, feeds<"x", "labels">(input_fn),
///                                      hooks(StopAtStepHook({.num_steps = 1000})), accuracy);
///     while (!session.should_stop()) session.run();
///
/// `input` is an input object (feeds<"x", "labels">(input_fn), or any type with next(),
/// batch_size() and feed(graph): see InputFor and docs/inputs.md), checked against the graph
/// here (a tensor the input lacks, a wrong column count: std::invalid_argument / ShapeError), or
/// caller_feeds(max_batch_size): the caller then feeds every run,
///
///     MonitoredTrainingSession session(train_op, caller_feeds(32), hooks());
///     session.run(feed<"x">(xs, rows), feed<"labels">(ys, rows));
///
/// `extras` are further named tensors that hooks may fetch (metrics); they are computed only in
/// runs where a hook asks for them. The graph is bound for input batches of up to
/// input.batch_size() rows. Construction calls every hook's begin(), binds the graph, then calls
/// after_create_session(*this). Closing (close() or the destructor) calls every hook's end(*this)
/// once. If run() exits with an exception, end() is not called, as in TensorFlow. (An exception
/// from a fetched metric comes after the backward pass: the variables whose update is fused are
/// then already updated, the others and global_step not.)
template <class TrainOpT, class Input, class Hooks, class... Extras>
class MonitoredTrainingSession {
  using loss_type = decltype(std::declval<TrainOpT&>().loss);

 public:
  using graph_type = decltype(bind(Index{}, std::declval<loss_type&>(), std::declval<Extras&>()...));
  using optimizer_type = decltype(std::declval<TrainOpT&>().optimizer);
  /// Which variables keep a stored gradient (detail::HookPins): what update_fused consults.
  using pins = detail::HookPins<Hooks>;
  static constexpr std::size_t num_hooks = decltype(boost::hana::length(std::declval<Hooks>()))::value;

  MonitoredTrainingSession(TrainOpT train_op, Input input, Hooks hooks, Extras... extras)
      : train_op_(std::move(train_op)),
        input_(std::move(input)),
        hooks_(std::move(hooks)),
        graph_((call_begin(hooks_), bind(input_.batch_size(), train_op_.loss, extras...))) {
    static_assert(caller_fed || InputFor<Input, graph_type>,
                  "hookfuse: the input must provide next(), batch_size() and feed(graph), or be "
                  "caller_feeds(max_batch_size)");
    if constexpr (requires { input_.check(graph_); }) input_.check(graph_);
    check_hooks();
    boost::hana::for_each(hooks_, [this](auto& h) {
      if constexpr (HandlesAfterCreateSession<std::remove_cvref_t<decltype(h)>,
                                              MonitoredTrainingSession>)
        h.after_create_session(*this);
    });
  }
  MonitoredTrainingSession(const MonitoredTrainingSession&) = delete;
  MonitoredTrainingSession& operator=(const MonitoredTrainingSession&) = delete;

  ~MonitoredTrainingSession() { close(); }

  /// True when run() folds the optimizer's update of the Variable `Name` into the backward pass
  /// (its gradient is never stored; Variable::grad keeps its old contents). See the file comment
  /// for when a variable stays unfused.
  template <fixed_string Name>
  static constexpr bool update_fused = detail::LinearUpdate<optimizer_type> &&
                                       graph_type::template update_fused<pins, Name>();

  /// True once a hook requested a stop, the input ran out, or the session was closed.
  bool should_stop() const { return should_stop_ || closed_; }

  /// One training step with every hook. At the end of the input data it runs no step and makes
  /// should_stop() true (before_run was called, after_run is not, as in TensorFlow). Not for a
  /// session built with caller_feeds: use run(feed<"x">(...), ...).
  void run() {
    static_assert(!caller_fed, "hookfuse: this session is fed by the caller (caller_feeds): "
                               "run(feed<\"x\">(xs, rows), ...)");
    if constexpr (!caller_fed) {
      run_step([this] {
        if (!input_.next()) return false;
        graph_.clear_feeds();
        input_.feed(graph_);
        return true;
      });
    }
  }

  /// One training step of a session built with caller_feeds(max_batch_size), fed with `feeds`
  /// (TensorFlow's `sess.run(train_op, feed_dict={x: xs, y: ys})`):
  /// `session.run(feed<"x">(xs, rows), feed<"y">(ys, rows))`. Checked like any feed before the
  /// forward pass: the data's scalar types at compile time; columns, rows (at most
  /// max_batch_size, the same for every batched placeholder) and that every placeholder the
  /// step reads is fed (ShapeError naming the placeholders and shapes). Feeds of an earlier run
  /// do not carry over.
  template <class... Fs>
    requires(sizeof...(Fs) > 0 && (detail::is_feed<Fs>::value && ...))
  void run(const Fs&... feeds) {
    static_assert(caller_fed, "hookfuse: run(feed<...>(...)) needs a session built with "
                              "caller_feeds(max_batch_size) where the input goes");
    if constexpr (caller_fed) {
      run_step([&] {
        graph_.clear_feeds();
        (feeds.apply(graph_), ...);
        return true;
      });
    }
  }

  /// Calls every hook's end(*this) once and stops the session. Skipped (hooks' end() not called)
  /// when the last run() left through an exception.
  void close() {
    if (closed_) return;
    closed_ = true;
    if (in_run_) return;
    boost::hana::for_each(hooks_, [this](auto& h) {
      if constexpr (HandlesEnd<std::remove_cvref_t<decltype(h)>, MonitoredTrainingSession>)
        h.end(*this);
    });
  }

  /// The current global step.
  std::int64_t global_step() const { return train_op_.global_step->value; }

  /// The value of a named tensor for the last batch fed (computing it if no run did), or the
  /// current global step for "global_step", or the last stored gradient for "gradients/<name>".
  /// Like session.run(tensor) inside end(). Before any step (or after an empty input) a tensor
  /// is computed when it reads no placeholder; one that reads a placeholder not fed throws
  /// ShapeError naming the tensor and the placeholder (no unfed input is read).
  template <fixed_string Name>
  TensorValue fetch() {
    if constexpr (Name == detail::global_step_name) {
      return {&train_op_.global_step->value, 1, 1, 1, 1, DType::int64};
    } else if constexpr (is_gradient_fetch<Name>()) {
      static_assert(!update_fused<detail::gradient_target_name<Name>()>,
                    "hookfuse: this variable's gradient is never stored (its update is fused "
                    "into the backward pass): request \"gradients/<name>\" in a hook's "
                    "before_run, or declare reads_gradients in a hook, to keep it");
      return detail::tensor_value(
          graph_.template adjoint<detail::gradient_target_name<Name>()>());
    } else {
      static_assert(graph_type::template has<Name>,
                    "hookfuse: the model has no tensor with this name");
      // Guarded so that an unknown name gives the message above and nothing else.
      if constexpr (graph_type::template has<Name>)
        return detail::tensor_value(graph_.template compute<Name>());
      else
        return TensorValue{};
    }
  }

  graph_type& graph() { return graph_; }
  Hooks& hooks() { return hooks_; }
  Input& input() { return input_; }

 private:
  static constexpr bool caller_fed = std::is_same_v<Input, CallerFeeds>;

  /// The step body shared by both run() overloads; `feed_inputs()` feeds the graph and returns
  /// false at the end of the input.
  template <class FeedInputs>
  void run_step(FeedInputs&& feed_inputs) {
    namespace hana = boost::hana;
    in_run_ = true;
    SessionRunContext ctx(&train_op_.global_step->value);
    // A braced list is evaluated left to right, so before_run is called in hook order
    // (hana::transform leaves the order of its calls unspecified: GCC goes right to left).
    auto args = hana::unpack(hooks_, [&ctx](auto&... hs) {
      return hana::tuple<decltype(call_before_run(hs, ctx))...>{call_before_run(hs, ctx)...};
    });
    if (!feed_inputs()) {
      should_stop_ = true;
      in_run_ = false;
      return;
    }
    graph_.forward();
    graph_.template backward<pins>(train_op_.optimizer);  // fused updates happen here
    stale_global_step_ = train_op_.global_step->value;
    hana::for_each(hana::make_range(hana::size_c<0>, hana::size_c<num_hooks>), [&](auto i) {
      fill_values(hana::at(values_, i), hana::at(args, i), fetched_[i]);
    });
    graph_.template apply_unfused<pins>(train_op_.optimizer);
    ++train_op_.global_step->value;
    hana::for_each(hana::make_range(hana::size_c<0>, hana::size_c<num_hooks>),
                   [&](auto i) {
                     auto& h = hana::at(hooks_, i);
                     using H = std::remove_cvref_t<decltype(h)>;
                     if constexpr (HandlesAfterRun<H, run_values_t<H>>)
                       h.after_run(ctx, hana::at(values_, i));
                   });
    should_stop_ = should_stop_ || ctx.stop_requested();
    in_run_ = false;
  }

  template <class H>
  static auto call_before_run(H& h, SessionRunContext& ctx) {
    if constexpr (HandlesBeforeRun<H>) return h.before_run(ctx);
    else return SessionRunArgs<>{false};
  }

  static void call_begin(Hooks& hs) {
    boost::hana::for_each(hs, [](auto& h) {
      if constexpr (HandlesBegin<std::remove_cvref_t<decltype(h)>>) h.begin();
    });
  }

  static constexpr void check_hooks() { check_each(std::type_identity<Hooks>{}); }
  template <class... Hs>
  static constexpr void check_each(std::type_identity<boost::hana::tuple<Hs...>>) {
    ((check_hook<Hs, MonitoredTrainingSession>(), check_names<Hs>(run_args_t<Hs>{})), ...);
  }
  template <class H, fixed_string... Names>
  static constexpr void check_names(SessionRunArgs<Names...>) {
    (detail::check_fetch<H, Names,
                         Names == detail::global_step_name ||
                             graph_type::template has<Names> || is_gradient_fetch<Names>()>(),
     ...);
  }
  /// "gradients/<name>" where the loss depends on <name> and <name> on a variable.
  template <fixed_string Name>
  static constexpr bool is_gradient_fetch() {
    if constexpr (detail::gradient_target(Name.view()).empty()) return false;
    else return graph_type::template has_adjoint<detail::gradient_target_name<Name>()>;
  }

  /// The values a hook receives, kept from run to run so that a run in which a hook asks for
  /// nothing costs nothing: filled when the hook's args are active, cleared (once) when not.
  template <fixed_string... Names>
  void fill_values(SessionRunValues<Names...>& v, const SessionRunArgs<Names...>& a,
                   bool& fetched) {
    if constexpr (sizeof...(Names) > 0) {
      if (a.active) {
        std::size_t i = 0;
        ((v.results[i++] = fetch_stale<Names>()), ...);
        fetched = true;
      } else if (fetched) {
        v = SessionRunValues<Names...>{};
        fetched = false;
      }
    }
  }
  template <fixed_string Name>
  TensorValue fetch_stale() {
    if constexpr (Name == detail::global_step_name)
      return {&stale_global_step_, 1, 1, 1, 1, DType::int64};
    else if constexpr (is_gradient_fetch<Name>() || graph_type::template has<Name>)
      return fetch<Name>();  // a requested gradient is pinned, so always stored
    else
      return TensorValue{};  // unknown name: reported by check_fetch in the constructor
  }

  template <class T>
  struct values_of_hooks;
  template <class... Hs>
  struct values_of_hooks<boost::hana::tuple<Hs...>> {
    using type = boost::hana::tuple<run_values_t<Hs>...>;
  };

  TrainOpT train_op_;
  Input input_;
  Hooks hooks_;
  graph_type graph_;
  typename values_of_hooks<Hooks>::type values_{};  // what each hook's after_run receives
  std::array<bool, num_hooks == 0 ? 1 : num_hooks> fetched_{};  // values_[i] holds fetches
  std::int64_t stale_global_step_ = 0;
  bool should_stop_ = false;
  bool closed_ = false;
  bool in_run_ = false;
};

template <class T, class I, class H, class... E>
MonitoredTrainingSession(T, I, H, E...) -> MonitoredTrainingSession<T, I, H, E...>;

/// The value of a named tensor from a session, `fetch<"loss">(session)` (no `template` keyword
/// needed in generic hook code).
template <fixed_string Name, class Session>
TensorValue fetch(Session& session) {
  return session.template fetch<Name>();
}

}  // namespace hookfuse
