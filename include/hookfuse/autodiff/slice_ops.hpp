// hookfuse/autodiff/slice_ops.hpp: columns of a tensor, TensorFlow's x[:, begin:begin + count]
// (tf.slice(x, [0, begin], [-1, count])), e.g. the probability of class 1, probabilities[:, 1],
// for a binary AUC.
#pragma once

#include "hookfuse/autodiff/expr.hpp"
#include "hookfuse/config.hpp"

namespace hookfuse {
namespace detail {

/// Columns [Begin, Begin + Count) of every row. Its gradient is the incoming one in those
/// columns and 0 elsewhere.
template <int Begin, int Count>
struct SliceColsOp {
  static_assert(Begin >= 0 && Count > 0,
                "hookfuse: slice_cols<begin, count>: begin >= 0, count > 0");
  static constexpr bool differentiable = true;
  static constexpr std::size_t scalar_from = 0;
  static constexpr Dims dims(Dims a) { return {a.rows, Count}; }
  static constexpr bool valid(Dims a) { return a.cols == Dynamic || Begin + Count <= a.cols; }
  static Shape shape(Shape a) { return {a.rows, Count}; }
  static bool valid_shape(Shape a) { return Begin + Count <= a.cols; }

  template <class S, Dims Out, Dims A>
  struct kernel {
    explicit kernel(const SliceColsOp&) {}
    void reserve(Shape, Shape) {}
    template <class O, class X>
    void forward(O& out, const X& a) {
      out = a.middleCols(Begin, Count);
    }
    template <std::size_t K, class T, class D, class O, class X>
    void backward(T& t, const D& dout, const O&, const X& a) {
      t.put_constant(S(0));
      for (Index i = 0; i < a.rows(); ++i)
        for (Index j = 0; j < Count; ++j) t.add_at(i, Begin + j, dout(i, j));
    }
  };
};

}  // namespace detail

/// Columns [Begin, Begin + Count) of x [batch, cols], [batch, Count]: TensorFlow's
/// x[:, Begin:Begin + Count]. Columns past x's are a compile error for fixed columns and a
/// ShapeError at bind for dynamic ones.
template <int Begin, int Count = 1, Operand X>
HOOKFUSE_PER_ENTRY_INLINE constexpr auto slice_cols(X&& x) {
  return node_t<detail::SliceColsOp<Begin, Count>, X>{{}, {}, {static_cast<X&&>(x)}};
}

}  // namespace hookfuse
