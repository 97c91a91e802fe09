// hookfuse/autodiff/summary.hpp: summaries declared in the model (tf.compat.v1.summary.scalar,
// tf.compat.v1.summary.histogram, tf.compat.v1.summary.merge), for SummarySaverHook.
//
//     auto loss = named<"loss">(sparse_softmax_cross_entropy(labels, logits));
//     auto acc  = summary::scalar<"accuracy">(accuracy(labels, logits));  // a named tensor too
//     auto summaries = summary::merge(summary::scalar<"loss">(loss), acc,
//                                     summary::histogram<"dense/kernel">(dense.kernel));
//     MonitoredTrainingSession session(train_op, input,
//         hooks(SummarySaverHook({.save_steps = 100, .output_dir = "runs/mlp"}, summaries)), acc);
//
// A summary declaration is the tensor it summarizes: passed to the session as an extra, it puts
// that tensor in the graph (an unnamed expression under the tag's name), computed only in runs
// where a hook fetches it, so a summary costs nothing on steps where no SummarySaverHook fires.
// A declaration on a tensor that already has a name (a named tensor, a Variable, a Placeholder)
// fetches it by that name and writes it under the tag: summary::scalar<"train_loss">(loss)
// fetches "loss". The list a hook writes is the compile-time list summary::merge makes.
#pragma once

#include <type_traits>
#include <utility>

#include "hookfuse/autodiff/expr.hpp"
#include "hookfuse/fixed_string.hpp"

namespace hookfuse::summary {

/// What a summary writes: a scalar (TF's `tf.summary.scalar`: a [1, 1] tensor) or a histogram
/// of every element (TF's `tf.summary.histogram`, TensorFlow's default buckets).
enum class Kind { scalar, histogram };

/// One entry of a hook's compile-time summary list: its kind, the TensorBoard tag it is written
/// under and the name of the tensor the hook fetches.
template <Kind K, fixed_string Tag, fixed_string Name>
struct Spec {
  static constexpr Kind kind = K;
  static constexpr auto tag = Tag;
  static constexpr auto name = Name;
};

/// A summary declaration (made by summary::scalar and summary::histogram): an expression that
/// stands for its tensor `T` (a Named, Variable or Placeholder expression) wherever it is used.
template <Kind K, fixed_string Tag, class T>
struct Summary {
  using is_hookfuse_expression = void;
  using summarized_type = T;  // what autodiff/tape.hpp flattens in its place
  using scalar = typename T::scalar;
  static constexpr Dims dims = T::dims;
  static constexpr bool requires_grad = T::requires_grad;
  using spec = Spec<K, Tag, T::name>;
  T tensor;
};

/// The compile-time list of summaries a SummarySaverHook writes (TF's merged summary op).
template <class... Specs>
struct Merged {};

namespace detail {
template <class X>
concept NamedExpression = requires { X::name; };

template <fixed_string Tag, Operand E>
constexpr auto tensor_for(E&& e) {
  using X = expr_t<E>;
  if constexpr (NamedExpression<X>)
    return as_expr(std::forward<E>(e));
  else
    return Named<Tag, X>{as_expr(std::forward<E>(e))};
}
}  // namespace detail

/// A scalar summary of `e` under `tag` (TF's `tf.compat.v1.summary.scalar(tag, e)`): `e` must be
/// [1, 1] (a loss, a metric; a compile error when its dims say otherwise). Fetched by e's name
/// when it has one, otherwise `e` becomes the named tensor `Tag`.
template <fixed_string Tag, Operand E>
constexpr auto scalar(E&& e) {
  using X = expr_t<E>;
  static_assert((X::dims.rows == 1 || X::dims.rows == Dynamic) &&
                    (X::dims.cols == 1 || X::dims.cols == Dynamic),
                "hookfuse: summary::scalar takes a [1, 1] tensor (a loss or a metric); use "
                "summary::histogram for a tensor of several values");
  auto t = detail::tensor_for<Tag>(std::forward<E>(e));
  return Summary<Kind::scalar, Tag, decltype(t)>{std::move(t)};
}

/// A histogram summary of every element of `e` under `tag` (TF's
/// `tf.compat.v1.summary.histogram(tag, e)`), e.g. a layer's kernel. Fetched by e's name when it
/// has one, otherwise `e` becomes the named tensor `Tag`.
template <fixed_string Tag, Operand E>
constexpr auto histogram(E&& e) {
  auto t = detail::tensor_for<Tag>(std::forward<E>(e));
  return Summary<Kind::histogram, Tag, decltype(t)>{std::move(t)};
}

/// The list of `summaries`, in this order, for SummarySaverHook (TF's
/// `tf.compat.v1.summary.merge`): every firing writes one event holding all of them.
template <Kind... Ks, fixed_string... Tags, class... Ts>
constexpr auto merge(const Summary<Ks, Tags, Ts>&...) {
  return Merged<typename Summary<Ks, Tags, Ts>::spec...>{};
}

namespace detail {
/// The specs collected so far, each once, in the order first met.
template <class... Ss>
struct SpecList {};
template <class List, class S>
struct add_spec;
template <class... Ss, class S>
struct add_spec<SpecList<Ss...>, S> {
  using type =
      std::conditional_t<(std::is_same_v<S, Ss> || ...), SpecList<Ss...>, SpecList<Ss..., S>>;
};

/// Walks the expression type `E` (children first, as TensorFlow creates a summary op after its
/// input): `List` plus every summary declaration in E. Leaves (variables, placeholders,
/// constants) hold none.
template <class List, class E>
struct collect {
  using type = List;
};
template <class List, class... Es>
struct collect_all {
  using type = List;
};
template <class List, class E, class... Es>
struct collect_all<List, E, Es...> {
  using type = typename collect_all<typename collect<List, E>::type, Es...>::type;
};
template <class List, Kind K, fixed_string Tag, class T>
struct collect<List, Summary<K, Tag, T>> {
  using type = typename add_spec<typename collect<List, T>::type, Spec<K, Tag, T::name>>::type;
};
template <class List, class N, class X>
struct collect<List, BasicNamed<N, X>> : collect<List, X> {};
template <class List, class Op, class... Cs>
struct collect<List, Node<Op, Cs...>> : collect_all<List, Cs...> {};

template <class List>
struct merged_of;
template <class... Ss>
struct merged_of<SpecList<Ss...>> {
  using type = Merged<Ss...>;
};
}  // namespace detail

/// Every summary declared in the expressions `Es` (a model's loss and the session's extras),
/// each once, inner ones before the ones above them, expression by expression: TensorFlow's
/// `tf.compat.v1.summary.merge_all()`, the summaries the session's default SummarySaverHook
/// writes (session/session_options.hpp). `summary::Merged<>` when there are none.
template <class... Es>
using merge_all_t =
    typename detail::merged_of<typename detail::collect_all<detail::SpecList<>, Es...>::type>::type;

}  // namespace hookfuse::summary
