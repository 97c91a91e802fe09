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
#include <type_traits>

#include "hookfuse/hooks/concepts.hpp"

namespace hookfuse {

/// The gradients of one run, as the (gradient, variable name) pairs of TensorFlow's
/// compute_gradients: for_each(f) calls f(gradient, name) for every Variable of the model in tape
/// order, where `gradient` is an Eigen::Map over Variable::grad ([R, C], the variable's shape
/// and scalar type, d loss / d value of this run) and `name` the variable's name ("dense/kernel").
/// Through a non-const context the map is writable (what the hook leaves there is applied);
/// through a const one it is an Eigen::Map<const ...>, and writing through it does not compile.
/// A fold over the variables: no heap, no virtual call. Valid only during the event.
template <class Graph>
class GradientContext {
 public:
  GradientContext(Graph& graph, std::int64_t global_step)
      : graph_(&graph), global_step_(global_step) {}

  /// f(Eigen::Map<matrix>& gradient, std::string_view variable_name) for every variable.
  template <class F>
  void for_each(F&& f) {
    graph_->for_each_variable([&f](auto& v) {
      using V = std::remove_cvref_t<decltype(v)>;
      Eigen::Map<typename V::matrix_type> g(v.grad.data(), v.grad.rows(), v.grad.cols());
      f(g, V::name.view());
    });
  }
  /// f(const Eigen::Map<const matrix>& gradient, std::string_view variable_name): read-only.
  template <class F>
  void for_each(F&& f) const {
    graph_->for_each_variable([&f](auto& v) {
      using V = std::remove_cvref_t<decltype(v)>;
      const Eigen::Map<const typename V::matrix_type> g(v.grad.data(), v.grad.rows(),
                                                        v.grad.cols());
      f(g, V::name.view());
    });
  }
  /// The global step of this run (before the run's increment), as before_run's context has it.
  std::int64_t global_step() const { return global_step_; }

 private:
  Graph* graph_;
  std::int64_t global_step_;
};

namespace detail {
/// Calls every gradient hook of `hooks` (a hana tuple), in hook order, with `gradients`.
template <class... Hs, class Context>
void call_before_apply_gradients(boost::hana::tuple<Hs...>& hooks, Context& gradients) {
  boost::hana::for_each(hooks, [&gradients](auto& stored) {
    auto& h = hook_ref(stored);
    if constexpr (HandlesBeforeApplyGradients<std::remove_cvref_t<decltype(h)>, Context>)
      h.before_apply_gradients(gradients);
  });
}
/// Some hook of the tuple is a gradient hook.
template <class Hooks>
inline constexpr bool has_gradient_hook = false;
template <class... Hs>
inline constexpr bool has_gradient_hook<boost::hana::tuple<Hs...>> =
    (GradientHook<hook_t<Hs>> || ... || false);
}  // namespace detail

}  // namespace hookfuse
