// hookfuse/autodiff/variable.hpp: trainable variables and input placeholders (the graph's leaves).
#pragma once

#include <cstdint>
#include <string_view>
#include <type_traits>

#include "hookfuse/autodiff/storage.hpp"
#include "hookfuse/fixed_string.hpp"

namespace hookfuse {

namespace detail {
/// The `grad` of a variable without a gradient (ForwardVariable): holds nothing.
struct NoGradient {};
}  // namespace detail

/// A trainable variable, like tf.Variable: a named [R, C] matrix of `Scalar` (float or double)
/// and the gradient of the loss with respect to it, written by every training step.
/// R and C may be Eigen::Dynamic (then the shape is given to the constructor).
/// The name is the checkpoint key ("dense/kernel") and the fetch name.
/// `Rank` is the variable's TensorFlow rank, the shape a checkpoint stores it under:
///   2 (the default): [R, C], a kernel [In, Out];
///   1: [C], for a one-dimensional TensorFlow variable (a bias), kept as a [1, C] row here (R = 1);
///   0: [], a scalar, kept as [1, 1] (R = C = 1).
/// Variable<Name, ...> is BasicVariable<detail::packed_name_t<Name>, ...> (see packed_name: the
/// name spelled in words, which keeps the symbols of a large model short); `name` is the
/// fixed_string.
/// `Grad` false gives a ForwardVariable (below): the value alone, for graphs that never run a
/// backward pass.
template <class NameType, class Scalar, int R, int C, int Rank = 2, bool Grad = true>
class BasicVariable {
 public:
  static_assert(std::is_floating_point_v<Scalar>, "hookfuse: a Variable holds float or double");
  static_assert(Rank >= 0 && Rank <= 2, "hookfuse: a Variable's TensorFlow rank is 0, 1 or 2");
  static_assert(Rank == 2 || R == 1,
                "hookfuse: a Variable of TensorFlow rank 1 ([C]) or 0 ([]) is stored as one row: "
                "R must be 1");
  static_assert(Rank != 0 || C == 1, "hookfuse: a Variable of TensorFlow rank 0 is [1, 1]");
  using scalar = Scalar;
  using matrix_type = detail::matrix_t<Scalar, R, C>;
  static constexpr auto name = NameType::value;
  static constexpr int rows_at_compile_time = R;
  static constexpr int cols_at_compile_time = C;
  /// The TensorFlow rank (see above): what a checkpoint records as the variable's shape.
  static constexpr int tf_rank = Rank;
  /// False for a ForwardVariable: no gradient matrix.
  static constexpr bool has_grad = Grad;
  using grad_type = std::conditional_t<Grad, matrix_type, detail::NoGradient>;

  BasicVariable() requires(R != Dynamic && C != Dynamic) : value(), grad() {
    value.setZero();
    if constexpr (Grad) grad.setZero();
  }
  BasicVariable(Index rows, Index cols) : value(rows, cols), grad(make_grad(rows, cols)) {
    value.setZero();
  }

  /// Current value, [R, C].
  matrix_type value;
  /// d loss / d value from the last training step, [R, C]; written (not accumulated) by
  /// Graph::backward(). A MonitoredTrainingSession writes it only when the variable's update is
  /// not fused (a hook requests "gradients/<name>", declares reads_gradients, or is a gradient
  /// hook touching it, see docs/hooks.md); otherwise it keeps its old contents.
  /// An empty detail::NoGradient in a ForwardVariable.
  [[no_unique_address]] grad_type grad;

 private:
  static grad_type make_grad(Index rows, Index cols) {
    if constexpr (Grad)
      return matrix_type::Zero(rows, cols);
    else
      return {};
  }
};

template <fixed_string Name, class Scalar, int R, int C, int Rank = 2>
using Variable = BasicVariable<detail::packed_name_t<Name>, Scalar, R, C, Rank>;

/// A Variable without a gradient matrix: what a forward-only model holds (an Estimator's EVAL
/// and PREDICT models, bound with bind_forward), so that evaluation pays for the values alone.
/// The same name, shape, rank and checkpoint key as Variable<Name, Scalar, R, C, Rank>; a
/// training step (Graph::backward, an optimizer) does not compile on it.
template <fixed_string Name, class Scalar, int R, int C, int Rank = 2>
using ForwardVariable = BasicVariable<detail::packed_name_t<Name>, Scalar, R, C, Rank, false>;

/// An input fed from outside for each step, like tf.compat.v1.placeholder: a [batch, C] matrix of
/// `Scalar`; rows are the batch (R = Dynamic: any batch up to the bound capacity).
/// Integer placeholders (labels) use Scalar = std::int32_t and C = 1: a [batch] vector.
/// Placeholder<Name, ...> is BasicPlaceholder<detail::packed_name_t<Name>, ...>, as for Variable.
template <class NameType, class Scalar, int C, int R = Dynamic>
struct BasicPlaceholder {
  using scalar = Scalar;
  static constexpr auto name = NameType::value;
  static constexpr int rows_at_compile_time = R;
  static constexpr int cols_at_compile_time = C;
  /// Number of columns when C is Dynamic.
  Index cols = C == Dynamic ? 0 : C;
};

template <fixed_string Name, class Scalar, int C, int R = Dynamic>
using Placeholder = BasicPlaceholder<detail::packed_name_t<Name>, Scalar, C, R>;

}  // namespace hookfuse
