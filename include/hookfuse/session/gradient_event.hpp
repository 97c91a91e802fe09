// hookfuse/session/gradient_event.hpp: the gradient event, between the backward pass and the
// update (what TensorFlow does by hand with tf.compat.v1.train.Optimizer: compute_gradients,
// change the (gradient, variable) pairs, apply_gradients; TensorFlow has no hook event for it).
//
// A hook that declares before_apply_gradients(gradients) is a gradient hook. Every run, after the
// backward pass and before the fetches and the update, the session calls each gradient hook in
// hook order with a GradientContext over the model's (gradient, variable name) pairs:
//
//     struct Halve {
//       void before_apply_gradients(auto& gradients) {            // may change them
//         gradients.for_each([](auto& g, std::string_view) { g *= 0.5f; });
//       }
//     };
//     struct Watch {
//       void before_apply_gradients(const auto& gradients) {      // read-only views
//         gradients.for_each([&](const auto& g, std::string_view name) { ... });
//       }
//     };
//
// A later hook sees what an earlier one left; the update and every "gradients/<name>" fetch use
// the final gradients. A session with a gradient hook stores the gradient of every variable (no
// fused update, detail::HookPins); a session without one is unchanged. This is also the place
// for a data-parallel gradient allreduce.
//
// The update event, right after the update: a hook that declares after_apply_gradients(updated)
// is an update hook. Every run, after every variable's update (fused or not) and before the
// global step's increment and the hooks' after_run, the session calls each update hook in hook
// order with an UpdateContext over what the update wrote: each variable's value and its
// optimizer slots. An update hook pins no gradient: the fused update stays on. Data-parallel
// ranks that average the updated values (distributed/average_variables_hook.hpp) use it.
#pragma once

#include <Eigen/Core>
#include <boost/hana/for_each.hpp>
#include <boost/hana/tuple.hpp>
#include <cstdint>
#include <string_view>
#include <tuple>
#include <type_traits>

#include "hookfuse/hooks/concepts.hpp"

namespace hookfuse {

/// The gradients of one run, as the (gradient, variable name) pairs of TensorFlow's
/// compute_gradients: for_each(f) calls f(gradient, name) for every Variable of the model in tape
/// order, where `gradient` is an Eigen::Map over Variable::grad ([R, C], the variable's shape
/// and scalar type, d loss / d value of this run) and `name` the variable's name ("dense/kernel").
/// Through a non-const context the map is writable (what the hook leaves there is applied);
/// through a const one it is an Eigen::Map<const ...>, and writing through it does not compile.
/// A fold over the variables: no heap, no virtual call. Valid only during the event. `Vars`
/// restricts the pairs to the variables a hook declares (GradientVariables<...>, see
/// GradientHook in hooks/concepts.hpp); only their gradients are stored.
template <class Graph, class Vars = detail::AllGradientVariables>
class GradientContext {
 public:
  GradientContext(Graph& graph, std::int64_t global_step)
      : graph_(&graph), global_step_(global_step) {}

  /// f(Eigen::Map<matrix>& gradient, std::string_view variable_name) for every variable.
  template <class F>
  void for_each(F&& f) {
    graph_->for_each_variable([&f](auto& v) {
      using V = std::remove_cvref_t<decltype(v)>;
      if constexpr (Vars::contains(V::name.view())) {
        Eigen::Map<typename V::matrix_type> g(v.grad.data(), v.grad.rows(), v.grad.cols());
        f(g, V::name.view());
      }
    });
  }
  /// f(const Eigen::Map<const matrix>& gradient, std::string_view variable_name): read-only.
  template <class F>
  void for_each(F&& f) const {
    graph_->for_each_variable([&f](auto& v) {
      using V = std::remove_cvref_t<decltype(v)>;
      if constexpr (Vars::contains(V::name.view())) {
        const Eigen::Map<const typename V::matrix_type> g(v.grad.data(), v.grad.rows(),
                                                          v.grad.cols());
        f(g, V::name.view());
      }
    });
  }
  /// The global step of this run (before the run's increment), as before_run's context has it.
  std::int64_t global_step() const { return global_step_; }
  /// The rows (examples) of this run's batch: the row count fed to the batched placeholders the
  /// loss reads (Graph::batch_rows: a fixed-rows placeholder's R when none is batched, 1 when the
  /// loss reads no placeholder). 0 for an empty batch, such as a data-parallel rank's share of a
  /// short last batch; AverageGradientsHook weighs each rank's gradient by it.
  std::int64_t batch_rows() const { return static_cast<std::int64_t>(graph_->batch_rows()); }

 private:
  Graph* graph_;
  std::int64_t global_step_;
};

/// What the update of one run wrote, for the update event: for_each(f) calls f(value, name) for
/// every Variable of the model in tape order (an Eigen::Map over Variable::value, [R, C], the
/// variable's shape and scalar type; `name` its name, "dense/kernel"), each followed by its
/// optimizer slots (f(slot, key) with the slot's checkpoint key, "dense/kernel/Momentum"; none
/// for GradientDescentOptimizer). Through a non-const context the maps are writable: the
/// following runs, the hooks' after_run and checkpoints see what the hook leaves. The
/// optimizer's non-slot variables (Adam's beta powers) are not included. optimizer_type names
/// the train op's optimizer and linear_in_gradient says whether its update of a variable is
/// linear in the gradient (SGD, Momentum with or without Nesterov: the optimizers the backward
/// pass can fold in; the session's update_linear_in_gradient, the same flag its update_fused
/// uses), so a hook can refuse at compile time an optimizer it does not suit. A fold over the
/// variables: no heap, no virtual call. Valid only during the event.
template <class Graph, class Slots, class Optimizer, bool LinearInGradient>
class UpdateContext {
 public:
  using optimizer_type = Optimizer;
  static constexpr bool linear_in_gradient = LinearInGradient;

  UpdateContext(Graph& graph, Slots& slots, const Optimizer& optimizer, std::int64_t global_step)
      : graph_(&graph), slots_(&slots), optimizer_(&optimizer), global_step_(global_step) {}

  /// f(Eigen::Map<matrix>& tensor, std::string_view name) for every variable, then its slots.
  template <class F>
  void for_each(F&& f) {
    graph_->for_each_variable([this, &f](auto& v) {
      using V = std::remove_cvref_t<decltype(v)>;
      Eigen::Map<typename V::matrix_type> value(v.value.data(), v.value.rows(), v.value.cols());
      f(value, V::name.view());
      slots_->template for_each_slot_of<V>(f);
    });
  }
  /// f(const Eigen::Map<const matrix>& tensor, std::string_view name): read-only.
  template <class F>
  void for_each(F&& f) const {
    graph_->for_each_variable([this, &f](auto& v) {
      using V = std::remove_cvref_t<decltype(v)>;
      const Eigen::Map<const typename V::matrix_type> value(v.value.data(), v.value.rows(),
                                                            v.value.cols());
      f(value, V::name.view());
      slots_->template for_each_slot_of<V>([&f](const auto& slot, std::string_view key) {
        using M = typename std::remove_cvref_t<decltype(slot)>::PlainObject;
        const Eigen::Map<const M> view(slot.data(), slot.rows(), slot.cols());
        f(view, key);
      });
    });
  }
  /// The train op's optimizer (its current learning rate, ...).
  const Optimizer& optimizer() const { return *optimizer_; }
  /// The global step of this run (before the run's increment), as before_run's context has it.
  std::int64_t global_step() const { return global_step_; }
  /// The rows (examples) of this run's batch, as GradientContext::batch_rows counts them.
  std::int64_t batch_rows() const { return static_cast<std::int64_t>(graph_->batch_rows()); }

 private:
  Graph* graph_;
  Slots* slots_;
  const Optimizer* optimizer_;
  std::int64_t global_step_;
};

namespace detail {
/// Calls every update hook of `hooks` (a hana tuple), in hook order, with `updated`.
template <class Context, class... Hs>
void call_after_apply_gradients(boost::hana::tuple<Hs...>& hooks, Context& updated) {
  boost::hana::for_each(hooks, [&updated](auto& stored) {
    auto& h = hook_ref(stored);
    using H = std::remove_cvref_t<decltype(h)>;
    if constexpr (HandlesAfterApplyGradients<H, Context>) h.after_apply_gradients(updated);
  });
}
/// Some hook of the tuple is an update hook.
template <class Hooks>
inline constexpr bool has_update_hook = false;
template <class... Hs>
inline constexpr bool has_update_hook<boost::hana::tuple<Hs...>> =
    (DeclaresAfterApplyGradients<hook_t<Hs>> || ... || false);

/// Calls every gradient hook of `hooks` (a hana tuple), in hook order, each with a context
/// over the variables it touches.
template <class Graph, class... Hs>
void call_before_apply_gradients(boost::hana::tuple<Hs...>& hooks, Graph& graph,
                                 std::int64_t global_step) {
  boost::hana::for_each(hooks, [&graph, global_step](auto& stored) {
    auto& h = hook_ref(stored);
    using H = std::remove_cvref_t<decltype(h)>;
    using Context = GradientContext<Graph, gradient_variables_t<H>>;
    if constexpr (HandlesBeforeApplyGradients<H, Context>) {
      Context gradients(graph, global_step);
      h.before_apply_gradients(gradients);
    }
  });
}

/// Fails to compile, naming the hook and the name, when a gradient hook's gradient_variables
/// names something that is not a Variable of the model under its own name.
template <class Hook, class Graph, fixed_string Name>
constexpr bool check_gradient_variable() {
  constexpr bool ok = [] {
    if constexpr (Graph::template has<Name>) {
      using E = std::tuple_element_t<Graph::template index_of<Name>, typename Graph::entries_type>;
      if constexpr (requires { typename E::variable_type; })
        return E::variable_type::name == Name;
      else
        return false;
    } else {
      return false;
    }
  }();
  static_assert(ok,
                "hookfuse: a gradient hook's gradient_variables names a tensor that is not a "
                "Variable of the model (the hook is 'Hook' and the name 'Name' in the "
                "instantiation above; give the Variable's own name, not a named alias)");
  return ok;
}
template <class Hook, class Graph, class Vars>
struct gradient_variables_check {
  static constexpr bool check() { return true; }
};
template <class Hook, class Graph, fixed_string... Ns>
struct gradient_variables_check<Hook, Graph, GradientVariables<Ns...>> {
  static constexpr bool check() {
    return (check_gradient_variable<Hook, Graph, Ns>() && ... && true);
  }
};
template <class Hook, class Graph>
constexpr bool check_gradient_hook() {
  if constexpr (GradientHook<Hook>)
    return gradient_variables_check<Hook, Graph, gradient_variables_t<Hook>>::check();
  else
    return true;
}
/// Some hook of the tuple is a gradient hook.
template <class Hooks>
inline constexpr bool has_gradient_hook = false;
template <class... Hs>
inline constexpr bool has_gradient_hook<boost::hana::tuple<Hs...>> = (GradientHook<hook_t<Hs>> ||
                                                                      ... || false);
}  // namespace detail

}  // namespace hookfuse
