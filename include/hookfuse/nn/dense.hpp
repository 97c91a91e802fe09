// hookfuse/nn/dense.hpp: the fully connected layer (tf.compat.v1.layers.Dense).
#pragma once

#include "hookfuse/autodiff/linalg_ops.hpp"
#include "hookfuse/autodiff/variable.hpp"
#include "hookfuse/config.hpp"
#include "hookfuse/fixed_string.hpp"
#include "hookfuse/nn/initializers.hpp"

namespace hookfuse::nn {

/// y = x kernel + bias, for x [batch, In], kernel [In, Out], bias [Out] (stored [1, Out]),
/// y [batch, Out]. Variables are named "<Name>/kernel" and "<Name>/bias" as in TensorFlow.
/// In and Out may be Eigen::Dynamic; then the constructor takes the sizes.
/// Apply an activation around the call: relu(dense(x)).
/// `Grad` false holds ForwardVariables (no gradient matrices): the layer of a forward-only
/// model, which nn::ForwardVariableStore::layer makes from Dense<...> (with_gradients).
template <fixed_string Name, class Scalar, int In = Dynamic, int Out = Dynamic, bool Grad = true>
class Dense {
  template <fixed_string N, int R, int C, int Rank>
  using var_t = BasicVariable<hookfuse::detail::packed_name_t<N>, Scalar, R, C, Rank, Grad>;

 public:
  /// This layer with (true) or without (false) gradient matrices.
  template <bool G>
  using with_gradients = Dense<Name, Scalar, In, Out, G>;

  var_t<concat(Name, fixed_string{"/kernel"}), In, Out, 2> kernel;
  var_t<concat(Name, fixed_string{"/bias"}), 1, Out, 1> bias;  // TF shape [Out]

  /// Fixed sizes: initializes the kernel and bias with the given initializers (by default, as in
  /// TensorFlow, glorot_uniform and zeros). A random initializer without a seed derives it from
  /// the variable's name (nn::seed_from_name("<Name>/kernel")), so two layers of one shape start
  /// different and every run starts the same.
  template <class KernelInit = glorot_uniform, class BiasInit = zeros>
    requires(In != Dynamic && Out != Dynamic)
  explicit Dense(KernelInit kernel_init = {}, BiasInit bias_init = {}) {
    init(kernel_init, bias_init);
  }
  /// Dynamic sizes: `in` inputs, `out` units; initializers as above.
  template <class KernelInit = glorot_uniform, class BiasInit = zeros>
  Dense(Index in, Index out, KernelInit kernel_init = {}, BiasInit bias_init = {})
      : kernel(in, out), bias(1, out) {
    init(kernel_init, bias_init);
  }
  Dense(const Dense&) = delete;  // expressions refer to the variables by address
  Dense& operator=(const Dense&) = delete;

  /// The layer applied to an input expression [batch, In].
  template <Operand X>
  HOOKFUSE_PER_ENTRY_INLINE auto operator()(X&& x) {
    return add(matmul(static_cast<X&&>(x), kernel), bias);
  }

 private:
  template <class KernelInit, class BiasInit>
  void init(const KernelInit& kernel_init, const BiasInit& bias_init) {
    detail::initialize(kernel_init, kernel.value, decltype(kernel)::name.view());
    detail::initialize(bias_init, bias.value, decltype(bias)::name.view());
  }
};

}  // namespace hookfuse::nn
