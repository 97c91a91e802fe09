// hookfuse/autodiff/elementwise_ops.hpp: activations and elementwise maths (relu, sigmoid, tanh,
// exp, log, square, scaling), mirroring tf.nn.relu, tf.sigmoid, tf.tanh, tf.exp, tf.math.log,
// tf.square and multiplication by a constant.
#pragma once

#include <cmath>

#include "hookfuse/autodiff/expr.hpp"
#include "hookfuse/autodiff/target.hpp"
#include "hookfuse/config.hpp"

namespace hookfuse {
namespace detail {

/// Shared shape rules and kernel of the one-operand elementwise ops. `F` provides
/// `value(a)` (an Eigen array expression of the operand) and `grad(dout, out, a)`.
template <class F>
struct UnaryOp {
  static constexpr bool differentiable = true;
  static constexpr std::size_t scalar_from = 0;
  static constexpr Dims dims(Dims a) { return a; }
  static constexpr bool valid(Dims) { return true; }
  static Shape shape(Shape a) { return a; }
  F f{};

  template <class S, Dims Out, Dims A>
  struct kernel {
    F f;
    explicit kernel(const UnaryOp& op) : f(op.f) {}
    void reserve(Shape, Shape) {}
    template <class O, class X>
    void forward(O& out, const X& a) {
      out.array() = f.value(a.array());
    }
    template <std::size_t K, class T, class D, class O, class X>
    void backward(T& t, const D& dout, const O& out, const X& a) {
      t.put(f.grad(dout.array(), out.array(), a.array()).matrix());
    }
  };
};

/// ReLU's gradient for one element: dout where out > 0, else 0 (a NaN out gives 0, as
/// `out > 0` is false). An Eigen functor with a packet path: Eigen 3.4's comparisons and
/// select() have none, so `(out > 0).select(dout, 0)` is a scalar loop that GCC vectorises or
/// not depending on what it has inlined around it (a difference of 62,000 instructions per step
/// of the Fashion-MNIST model at batch 32).
template <class S>
struct relu_grad_op {
  EIGEN_STRONG_INLINE S operator()(const S& dout, const S& out) const {
    return out > S(0) ? dout : S(0);
  }
  template <class Packet>
  EIGEN_STRONG_INLINE Packet packetOp(const Packet& dout, const Packet& out) const {
    namespace ei = Eigen::internal;
    return ei::pand(dout, ei::pcmp_lt(ei::pzero(out), out));
  }
};

struct ReluF {
  template <class A>
  auto value(const A& a) const { return a.max(typename A::Scalar(0)); }
  template <class D, class O, class A>
  auto grad(const D& dout, const O& out, const A&) const {
    return dout.binaryExpr(out, relu_grad_op<typename D::Scalar>{});
  }
};
struct SigmoidF {
  template <class A>
  auto value(const A& a) const {
    using S = typename A::Scalar;
    return S(1) / (S(1) + (-a).exp());
  }
  template <class D, class O, class A>
  auto grad(const D& dout, const O& out, const A&) const {
    return dout * out * (typename O::Scalar(1) - out);
  }
};
struct TanhF {
  template <class A>
  auto value(const A& a) const { return a.tanh(); }
  template <class D, class O, class A>
  auto grad(const D& dout, const O& out, const A&) const {
    return dout * (typename O::Scalar(1) - out.square());
  }
};
struct ExpF {
  template <class A>
  auto value(const A& a) const { return a.exp(); }
  template <class D, class O, class A>
  auto grad(const D& dout, const O& out, const A&) const { return dout * out; }
};
struct LogF {
  template <class A>
  auto value(const A& a) const { return a.log(); }
  template <class D, class O, class A>
  auto grad(const D& dout, const O&, const A& a) const { return dout / a; }
};
struct SquareF {
  template <class A>
  auto value(const A& a) const { return a.square(); }
  template <class D, class O, class A>
  auto grad(const D& dout, const O&, const A& a) const {
    return typename A::Scalar(2) * a * dout;
  }
};
template <class S>
struct ScaleF {
  S factor;
  template <class A>
  auto value(const A& a) const { return factor * a; }
  template <class D, class O, class A>
  auto grad(const D& dout, const O&, const A&) const { return factor * dout; }
};

}  // namespace detail

/// max(x, 0) elementwise, like tf.nn.relu. Shape of x.
template <Operand X>
HOOKFUSE_PER_ENTRY_INLINE constexpr auto relu(X&& x) {
  return node_t<detail::UnaryOp<detail::ReluF>, X>{{}, {}, {static_cast<X&&>(x)}};
}
/// 1 / (1 + exp(-x)) elementwise, like tf.sigmoid. Shape of x.
template <Operand X>
HOOKFUSE_PER_ENTRY_INLINE constexpr auto sigmoid(X&& x) {
  return node_t<detail::UnaryOp<detail::SigmoidF>, X>{{}, {}, {static_cast<X&&>(x)}};
}
/// tanh(x) elementwise, like tf.tanh. Shape of x.
template <Operand X>
HOOKFUSE_PER_ENTRY_INLINE constexpr auto tanh(X&& x) {
  return node_t<detail::UnaryOp<detail::TanhF>, X>{{}, {}, {static_cast<X&&>(x)}};
}
/// exp(x) elementwise, like tf.exp. Shape of x.
template <Operand X>
HOOKFUSE_PER_ENTRY_INLINE constexpr auto exp(X&& x) {
  return node_t<detail::UnaryOp<detail::ExpF>, X>{{}, {}, {static_cast<X&&>(x)}};
}
/// Natural logarithm elementwise, like tf.math.log (x > 0 expected; log(0) = -inf). Shape of x.
template <Operand X>
HOOKFUSE_PER_ENTRY_INLINE constexpr auto log(X&& x) {
  return node_t<detail::UnaryOp<detail::LogF>, X>{{}, {}, {static_cast<X&&>(x)}};
}
/// x * x elementwise, like tf.square. Shape of x.
template <Operand X>
HOOKFUSE_PER_ENTRY_INLINE constexpr auto square(X&& x) {
  return node_t<detail::UnaryOp<detail::SquareF>, X>{{}, {}, {static_cast<X&&>(x)}};
}
/// factor * x, the factor a constant (not trained). Shape of x.
template <Operand X>
HOOKFUSE_PER_ENTRY_INLINE constexpr auto scale(X&& x, typename expr_t<X>::scalar factor) {
  using S = typename expr_t<X>::scalar;
  return node_t<detail::UnaryOp<detail::ScaleF<S>>, X>{{}, {{factor}}, {static_cast<X&&>(x)}};
}

}  // namespace hookfuse

/// relu_grad_op has a packet path where the packet type has comparisons (SSE, AVX, NEON).
namespace Eigen::internal {
template <class S>
struct functor_traits<hookfuse::detail::relu_grad_op<S>> {
  enum { Cost = NumTraits<S>::AddCost, PacketAccess = packet_traits<S>::HasCmp };
};
}  // namespace Eigen::internal
