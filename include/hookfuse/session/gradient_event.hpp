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

namespace detail {
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
