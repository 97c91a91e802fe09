// hookfuse/autodiff/linalg_ops.hpp: matmul, addition and subtraction with bias broadcast, and the
// elementwise product; mirrors tf.matmul, tf.add / tf.nn.bias_add, tf.subtract, tf.multiply.
#pragma once

#include "hookfuse/autodiff/elementwise_ops.hpp"
#include "hookfuse/autodiff/expr.hpp"
#include "hookfuse/autodiff/target.hpp"
#include "hookfuse/config.hpp"
#include "hookfuse/detail/compile_error.hpp"

namespace hookfuse {
namespace detail {

/// [r, k] x [k, c] -> [r, c]. Products go through preallocated GEMM workspaces (gemm.hpp).
struct MatMulOp {
  static constexpr bool differentiable = true;
  static constexpr std::size_t scalar_from = 0;
  static constexpr Dims dims(Dims a, Dims b) { return {a.rows, b.cols}; }
  static constexpr bool valid(Dims a, Dims b) {
    return a.cols == Dynamic || b.rows == Dynamic || a.cols == b.rows;
  }
  static Shape shape(Shape a, Shape b) { return {a.rows, b.cols}; }
  static bool valid_shape(Shape a, Shape b) { return a.cols == b.rows; }

  template <class S, Dims Out, Dims A, Dims B>
  struct kernel {
    GemmWorkspace<S, storage_order<Out.rows, Out.cols>> ws_out;
    GemmWorkspace<S, storage_order<A.rows, A.cols>> ws_a;
    GemmWorkspace<S, storage_order<B.rows, B.cols>> ws_b;
    explicit kernel(const MatMulOp&) {}
    void reserve(Shape out, Shape a, Shape b) {
      if constexpr (Out.rows == Dynamic || Out.cols == Dynamic || A.cols == Dynamic) {
        ws_out.reserve(out.rows, out.cols, a.cols);
        ws_a.reserve(a.rows, a.cols, out.cols);
        ws_b.reserve(b.rows, b.cols, out.rows);
      }
    }
    template <class O, class X, class Y>
    void forward(O& out, const X& a, const Y& b) {
      out.setZero();
      gemm_add(out, a, b, S(1), ws_out);
    }
    template <std::size_t K, class T, class D, class O, class X, class Y>
    void backward(T& t, const D& dout, const O&, const X& a, const Y& b) {
      if constexpr (K == 0) t.gemm(dout, b.transpose(), S(1), ws_a);
      else t.gemm(a.transpose(), dout, S(1), ws_b);
    }
  };
};

/// How the two operands of +, - line up: same shape, or one of them a [1, c] row broadcast over
/// the rows of the other (a bias added to a batch), decided from the compile-time dims.
enum class Broadcast { none, rhs_row, lhs_row };
constexpr Broadcast broadcast_of(Dims a, Dims b) {
  if (b.rows == 1 && a.rows != 1) return Broadcast::rhs_row;
  if (a.rows == 1 && b.rows != 1) return Broadcast::lhs_row;
  return Broadcast::none;
}

template <int Sign>  // +1: addition, -1: subtraction
struct AddOp {
  static constexpr bool differentiable = true;
  /// The backward pass passes the output's adjoint on without reading either operand, so two
  /// variables added together can both have their update fused (fusion_policy.hpp).
  static constexpr bool backward_reads_operands = false;
  static constexpr std::size_t scalar_from = 0;
  static constexpr Dims dims(Dims a, Dims b) {
    switch (broadcast_of(a, b)) {
      case Broadcast::rhs_row: return {a.rows, same_dim(a.cols, b.cols)};
      case Broadcast::lhs_row: return {b.rows, same_dim(a.cols, b.cols)};
      default: return {same_dim(a.rows, b.rows), same_dim(a.cols, b.cols)};
    }
  }
  static constexpr bool valid(Dims a, Dims b) {
    return dim_fits(a.cols, b.cols) &&
           (broadcast_of(a, b) != Broadcast::none || dim_fits(a.rows, b.rows));
  }
  /// numpy's broadcast of the rows: a side with 1 row takes the other's count, 0 included (an
  /// empty batch plus a bias is empty, not one row).
  static Shape shape(Shape a, Shape b) { return {a.rows == 1 ? b.rows : a.rows, a.cols}; }

  template <class S, Dims Out, Dims A, Dims B>
  struct kernel {
    static constexpr Broadcast bc = broadcast_of(A, B);
    /// Run-time shapes: equal, or the [1, c] operand (by its compile-time dims) of the other's
    /// width.
    static bool valid_shape(Shape a, Shape b) {
      if constexpr (bc == Broadcast::rhs_row) return b.rows == 1 && a.cols == b.cols;
      else if constexpr (bc == Broadcast::lhs_row) return a.rows == 1 && a.cols == b.cols;
      else return a == b;
    }
    explicit kernel(const AddOp&) {}
    void reserve(Shape, Shape, Shape) {}
    template <class O, class X, class Y>
    void forward(O& out, const X& a, const Y& b) {
      if constexpr (bc == Broadcast::rhs_row) {
        if constexpr (Sign > 0) out.noalias() = a.rowwise() + b.row(0);
        else out.noalias() = a.rowwise() - b.row(0);
      } else if constexpr (bc == Broadcast::lhs_row) {
        if constexpr (Sign > 0) out.noalias() = b.rowwise() + a.row(0);
        else out.noalias() = (-b).rowwise() + a.row(0);
      } else {
        if constexpr (Sign > 0) out.noalias() = a + b;
        else out.noalias() = a - b;
      }
    }
    template <std::size_t K, class T, class D, class O, class X, class Y>
    void backward(T& t, const D& dout, const O&, const X&, const Y&) {
      constexpr bool reduce = (K == 1 && bc == Broadcast::rhs_row) ||
                              (K == 0 && bc == Broadcast::lhs_row);
      constexpr S sign = (K == 1 && Sign < 0) ? S(-1) : S(1);
      if constexpr (reduce) t.put(sign * dout.colwise().sum());
      else if constexpr (sign < 0) t.put(-dout);
      else t.put(dout);
    }
  };
};

/// Elementwise product of two tensors of one shape.
struct CwiseMulOp {
  static constexpr bool differentiable = true;
  static constexpr std::size_t scalar_from = 0;
  static constexpr Dims dims(Dims a, Dims b) {
    return {same_dim(a.rows, b.rows), same_dim(a.cols, b.cols)};
  }
  static constexpr bool valid(Dims a, Dims b) {
    return dim_fits(a.rows, b.rows) && dim_fits(a.cols, b.cols);
  }
  static Shape shape(Shape a, Shape) { return a; }
  static bool valid_shape(Shape a, Shape b) { return a == b; }

  template <class S, Dims Out, Dims A, Dims B>
  struct kernel {
    explicit kernel(const CwiseMulOp&) {}
    void reserve(Shape, Shape, Shape) {}
    template <class O, class X, class Y>
    void forward(O& out, const X& a, const Y& b) {
      out.noalias() = a.cwiseProduct(b);
    }
    template <std::size_t K, class T, class D, class O, class X, class Y>
    void backward(T& t, const D& dout, const O&, const X& a, const Y& b) {
      if constexpr (K == 0) t.put(dout.cwiseProduct(b));
      else t.put(dout.cwiseProduct(a));
    }
  };
};

/// Appends "[rows, cols]", an unknown (Dynamic) dimension as "?" (as TensorFlow prints it).
constexpr void append_dims(message_text& m, Dims d) {
  m << "[";
  if (d.rows == Dynamic) m << "?"; else m << static_cast<std::size_t>(d.rows);
  m << ", ";
  if (d.cols == Dynamic) m << "?"; else m << static_cast<std::size_t>(d.cols);
  m << "]";
}

/// Fails to compile when `Op` does not accept operands of compile-time dims `A` and `B`, with an
/// error that names the operation, both shapes and the rule: the first error, in plain text
/// (compile_error.hpp), instead of the static assertion in Node. Returns whether they fit.
template <class Op, Dims A, Dims B>
constexpr bool check_operand_dims() {
  constexpr bool ok = Op::valid(A, B);
  if constexpr (!ok) {
    constexpr message_text m = [] {
      message_text t;
      if constexpr (std::is_same_v<Op, MatMulOp>) t << "matmul(a, b)";
      else if constexpr (std::is_same_v<Op, AddOp<1>>) t << "add (a + b)";
      else if constexpr (std::is_same_v<Op, AddOp<-1>>) t << "subtract (a - b)";
      else t << "multiply (a * b)";
      t << " of shapes ";
      append_dims(t, A);
      t << " and ";
      append_dims(t, B);
      if constexpr (std::is_same_v<Op, MatMulOp>)
        t << ": a's columns must equal b's rows ([r, k] x [k, c], as tf.matmul)";
      else if constexpr (std::is_same_v<Op, CwiseMulOp>)
        t << ": `*` of two tensors is elementwise and needs one shape (tf.multiply, no "
             "broadcasting); to scale by a number, write `x * s` with s of the tensor's scalar "
             "type";
      else
        t << ": the shapes must be equal, or one of them [1, c] with the other's c columns "
             "(broadcast over the rows, as tf.nn.bias_add)";
      return t;
    }();
    (void)raise_compile_error<message_string<m.size>(m)>::value;
  }
  return ok;
}

}  // namespace detail

/// Matrix product [r, k] x [k, c] -> [r, c], like tf.matmul. Rows of `a` are the batch.
template <Operand A, Operand B>
HOOKFUSE_PER_ENTRY_INLINE constexpr auto matmul(A&& a, B&& b) {
  if constexpr (detail::check_operand_dims<detail::MatMulOp, expr_t<A>::dims,
                                           expr_t<B>::dims>())
    return node_t<detail::MatMulOp, A, B>{{}, {}, {static_cast<A&&>(a), static_cast<B&&>(b)}};
}
/// a + b, like tf.add; a [1, c] operand is broadcast over the rows of the other (tf.nn.bias_add).
template <Operand A, Operand B>
HOOKFUSE_PER_ENTRY_INLINE constexpr auto add(A&& a, B&& b) {
  if constexpr (detail::check_operand_dims<detail::AddOp<1>, expr_t<A>::dims,
                                           expr_t<B>::dims>())
    return node_t<detail::AddOp<1>, A, B>{{}, {}, {static_cast<A&&>(a), static_cast<B&&>(b)}};
}
/// a - b, like tf.subtract, with the same broadcast as `add`.
template <Operand A, Operand B>
HOOKFUSE_PER_ENTRY_INLINE constexpr auto subtract(A&& a, B&& b) {
  if constexpr (detail::check_operand_dims<detail::AddOp<-1>, expr_t<A>::dims,
                                           expr_t<B>::dims>())
    return node_t<detail::AddOp<-1>, A, B>{{}, {}, {static_cast<A&&>(a), static_cast<B&&>(b)}};
}
/// Elementwise a * b of one shape, like tf.multiply.
template <Operand A, Operand B>
HOOKFUSE_PER_ENTRY_INLINE constexpr auto multiply(A&& a, B&& b) {
  if constexpr (detail::check_operand_dims<detail::CwiseMulOp, expr_t<A>::dims,
                                           expr_t<B>::dims>())
    return node_t<detail::CwiseMulOp, A, B>{{}, {}, {static_cast<A&&>(a), static_cast<B&&>(b)}};
}

/// Operators on model operands, as on TensorFlow tensors: `x * 0.5f`, `w + b`, `x - y`, where a
/// side is an expression, a Variable (taken by reference, so pass it by lvalue) or a
/// Placeholder; `*` of two operands is elementwise (tf.multiply), `*` with a number of the
/// operand's scalar type is `scale`. Eigen matrices are not operands, so Eigen's own
/// arithmetic is untouched.
template <Operand A, Operand B>
HOOKFUSE_PER_ENTRY_INLINE constexpr auto operator+(A&& a, B&& b) {
  return add(static_cast<A&&>(a), static_cast<B&&>(b));
}
template <Operand A, Operand B>
HOOKFUSE_PER_ENTRY_INLINE constexpr auto operator-(A&& a, B&& b) {
  return subtract(static_cast<A&&>(a), static_cast<B&&>(b));
}
template <Operand A, Operand B>
HOOKFUSE_PER_ENTRY_INLINE constexpr auto operator*(A&& a, B&& b) {
  return multiply(static_cast<A&&>(a), static_cast<B&&>(b));
}
template <Operand A>
HOOKFUSE_PER_ENTRY_INLINE constexpr auto operator*(A&& a,
                                                   typename std::remove_cvref_t<A>::scalar s) {
  return scale(static_cast<A&&>(a), s);
}
template <Operand A>
HOOKFUSE_PER_ENTRY_INLINE constexpr auto operator*(typename std::remove_cvref_t<A>::scalar s,
                                                   A&& a) {
  return scale(static_cast<A&&>(a), s);
}

}  // namespace hookfuse
