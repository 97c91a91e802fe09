// hookfuse/autodiff/reduce_ops.hpp: reductions to a scalar and losses; mirrors tf.reduce_sum,
// tf.reduce_mean, tf.nn.softmax, tf.compat.v1.losses.mean_squared_error and
// tf.compat.v1.losses.sparse_softmax_cross_entropy.
//
// Empty batches (0 rows) get TensorFlow's values: the losses reduce with SUM_BY_NONZERO_WEIGHTS
// (sum of the losses / number of nonzero weights, a safe division that gives 0 when there are
// none), so they are 0 with zero gradients; reduce_mean and accuracy are means of an empty
// tensor, NaN as in numpy and TensorFlow; reduce_sum is 0. No kernel reads an element of an empty
// operand (Eigen's mean() and redux() would read element 0).
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>

#include "hookfuse/autodiff/errors.hpp"
#include "hookfuse/autodiff/expr.hpp"
#include "hookfuse/autodiff/target.hpp"
#include "hookfuse/config.hpp"
#include "hookfuse/detail/format.hpp"

namespace hookfuse {

namespace detail {

/// Sum (Mean = false) or mean (Mean = true) of every element, a [1, 1] result. Of an empty tensor:
/// sum 0, mean NaN (tf.reduce_mean and numpy.mean of an empty array).
template <bool Mean>
struct ReduceOp {
  static constexpr bool differentiable = true;
  static constexpr std::size_t scalar_from = 0;
  static constexpr Dims dims(Dims) { return {1, 1}; }
  static constexpr bool valid(Dims) { return true; }
  static Shape shape(Shape) { return {1, 1}; }

  template <class S, Dims Out, Dims A>
  struct kernel {
    explicit kernel(const ReduceOp&) {}
    void reserve(Shape, Shape) {}
    template <class O, class X>
    void forward(O& out, const X& a) {
      // sum() is 0 for an empty tensor; mean() would read element 0 of it.
      if constexpr (Mean)
        out(0, 0) = a.size() ? a.sum() / static_cast<S>(a.size())
                             : std::numeric_limits<S>::quiet_NaN();
      else
        out(0, 0) = a.sum();
    }
    template <std::size_t K, class T, class D, class O, class X>
    void backward(T& t, const D& dout, const O&, const X& a) {
      // An empty operand has no element to receive a gradient (put_constant writes none).
      const S n = a.size() ? static_cast<S>(a.size()) : S(1);
      t.put_constant(Mean ? dout(0, 0) / n : dout(0, 0));
    }
  };
};

/// mean((prediction - target)^2) over every element, [1, 1]; 0 for empty operands (the
/// SUM_BY_NONZERO_WEIGHTS reduction of tf.compat.v1.losses: no weights, safe division).
struct MeanSquaredErrorOp {
  static constexpr bool differentiable = true;
  static constexpr std::size_t scalar_from = 0;
  static constexpr Dims dims(Dims, Dims) { return {1, 1}; }
  static constexpr bool valid(Dims a, Dims b) {
    return dim_fits(a.rows, b.rows) && dim_fits(a.cols, b.cols);
  }
  static Shape shape(Shape, Shape) { return {1, 1}; }
  static bool valid_shape(Shape a, Shape b) { return a == b; }

  template <class S, Dims Out, Dims A, Dims B>
  struct kernel {
    explicit kernel(const MeanSquaredErrorOp&) {}
    void reserve(Shape, Shape, Shape) {}
    template <class O, class X, class Y>
    void forward(O& out, const X& a, const Y& b) {
      out(0, 0) = a.size() ? (a - b).squaredNorm() / static_cast<S>(a.size()) : S(0);
    }
    template <std::size_t K, class T, class D, class O, class X, class Y>
    void backward(T& t, const D& dout, const O&, const X& a, const Y& b) {
      const S n = a.size() ? static_cast<S>(a.size()) : S(1);
      const S k = S(2) * dout(0, 0) / n * (K == 0 ? S(1) : S(-1));
      t.put(k * (a - b));
    }
  };
};

/// Softmax over each row (the classes of one example), [r, c] -> [r, c].
struct SoftmaxOp {
  static constexpr bool differentiable = true;
  static constexpr std::size_t scalar_from = 0;
  static constexpr Dims dims(Dims a) { return a; }
  static constexpr bool valid(Dims) { return true; }
  static Shape shape(Shape a) { return a; }

  template <class S, Dims Out, Dims A>
  struct kernel {
    explicit kernel(const SoftmaxOp&) {}
    void reserve(Shape, Shape) {}
    template <class O, class X>
    void forward(O& out, const X& a) {
      for (Index i = 0; i < a.rows(); ++i) {
        const S m = a.row(i).maxCoeff();
        out.row(i) = (a.row(i).array() - m).exp().matrix();
        out.row(i) /= out.row(i).sum();
      }
    }
    template <std::size_t K, class T, class D, class O, class X>
    void backward(T& t, const D& dout, const O& out, const X&) {
      for (Index i = 0; i < out.rows(); ++i) {
        const S s = dout.row(i).dot(out.row(i));
        t.put_row(i, out.row(i).cwiseProduct((dout.row(i).array() - s).matrix()));
      }
    }
  };
};

template <class S>
[[noreturn]] inline void bad_label(std::int64_t label, Index classes, Index row) {
  fail<InvalidArgumentError>((ErrorMessage() << "sparse_softmax_cross_entropy: labels[" << row
                              << "] = " << static_cast<long long>(label)
                              << ", outside the valid range [0, " << classes << ")")
                                 .str());
}

/// Mean over the batch of -log softmax(logits)[label], from integer labels [batch] and logits
/// [batch, classes]; a [1, 1] result, 0 for an empty batch (SUM_BY_NONZERO_WEIGHTS, as the loss
/// in tf.compat.v1.losses). Each row's loss is log(sum(exp(z - m))) - (z[label] - m), m the row's
/// largest logit: both terms are formed from differences to m, so the result keeps float's
/// relative precision whatever the size of the logits (m + log(sum) - z[label] would round to the
/// spacing of m: 0.0625 for logits near 1e6 in float). Keeps the softmax for the backward pass.
struct SparseSoftmaxCrossEntropyOp {
  static constexpr bool differentiable = true;
  static constexpr std::size_t scalar_from = 1;
  static constexpr Dims dims(Dims, Dims) { return {1, 1}; }
  static constexpr bool valid(Dims labels, Dims logits) {
    return (labels.cols == 1 || labels.cols == Dynamic) && dim_fits(labels.rows, logits.rows);
  }
  static Shape shape(Shape, Shape) { return {1, 1}; }
  static bool valid_shape(Shape labels, Shape logits) {
    return labels.cols == 1 && labels.rows == logits.rows;
  }

  template <class S, Dims Out, Dims L, Dims Z>
  struct kernel {
    Buffer<S, Z.rows, Z.cols> probs;
    explicit kernel(const SparseSoftmaxCrossEntropyOp&) {}
    void reserve(Shape, Shape, Shape logits) { probs.reserve(logits); }
    template <class O, class Y, class X>
    void forward(O& out, const Y& labels, const X& z) {
      probs.set_shape({z.rows(), z.cols()});
      auto p = probs.view();
      S total = 0;
      for (Index i = 0; i < z.rows(); ++i) {
        const auto y = static_cast<std::int64_t>(labels(i));
        if (y < 0 || y >= z.cols()) bad_label<S>(y, z.cols(), i);
        const S m = z.row(i).maxCoeff();
        p.row(i) = (z.row(i).array() - m).exp().matrix();
        const S sum = p.row(i).sum();
        p.row(i) /= sum;
        total += std::log(sum) - (z(i, static_cast<Index>(y)) - m);
      }
      out(0, 0) = z.rows() ? total / static_cast<S>(z.rows()) : S(0);
    }
    template <std::size_t K, class T, class D, class O, class Y, class X>
    void backward(T& t, const D& dout, const O&, const Y& labels, const X& z) {
      static_assert(K == 1, "labels have no gradient");
      // (softmax - onehot) / batch; an empty batch has no logit to receive a gradient.
      const S k = z.rows() ? dout(0, 0) / static_cast<S>(z.rows()) : S(0);
      auto p = probs.view();
      t.put(k * p);
      for (Index i = 0; i < z.rows(); ++i) t.add_at(i, static_cast<Index>(labels(i)), -k);
    }
  };
};

/// Fraction of rows whose largest logit is at the label, [1, 1]; NaN for an empty batch (the mean
/// of an empty tensor). Not differentiable.
struct AccuracyOp {
  static constexpr bool differentiable = false;
  static constexpr std::size_t scalar_from = 1;
  static constexpr Dims dims(Dims, Dims) { return {1, 1}; }
  static constexpr bool valid(Dims labels, Dims logits) {
    return (labels.cols == 1 || labels.cols == Dynamic) && dim_fits(labels.rows, logits.rows);
  }
  static Shape shape(Shape, Shape) { return {1, 1}; }
  static bool valid_shape(Shape labels, Shape logits) {
    return labels.cols == 1 && labels.rows == logits.rows;
  }

  template <class S, Dims Out, Dims L, Dims Z>
  struct kernel {
    explicit kernel(const AccuracyOp&) {}
    void reserve(Shape, Shape, Shape) {}
    template <class O, class Y, class X>
    void forward(O& out, const Y& labels, const X& z) {
      Index hits = 0;
      for (Index i = 0; i < z.rows(); ++i) {
        Index arg = 0;
        z.row(i).maxCoeff(&arg);
        hits += (arg == static_cast<Index>(labels(i)));
      }
      out(0, 0) = z.rows() ? static_cast<S>(hits) / static_cast<S>(z.rows())
                           : std::numeric_limits<S>::quiet_NaN();
    }
  };
};

/// Index of each row's largest value, [r, c] -> [r, 1], as the input's scalar type (float class
/// ids, exact up to 2^24); ties go to the first, as tf.argmax. Not differentiable.
struct ArgmaxOp {
  static constexpr bool differentiable = false;
  static constexpr std::size_t scalar_from = 0;
  static constexpr Dims dims(Dims a) { return {a.rows, 1}; }
  static constexpr bool valid(Dims) { return true; }
  static Shape shape(Shape a) { return {a.rows, 1}; }

  template <class S, Dims Out, Dims A>
  struct kernel {
    explicit kernel(const ArgmaxOp&) {}
    void reserve(Shape, Shape) {}
    template <class O, class X>
    void forward(O& out, const X& a) {
      for (Index i = 0; i < a.rows(); ++i) {
        Index arg = 0;
        if (a.cols() > 0) a.row(i).maxCoeff(&arg);
        out(i, 0) = static_cast<S>(arg);
      }
    }
  };
};

}  // namespace detail

/// Sum of every element, [1, 1], like tf.reduce_sum without an axis.
template <Operand X>
HOOKFUSE_PER_ENTRY_INLINE constexpr auto reduce_sum(X&& x) {
  return node_t<detail::ReduceOp<false>, X>{{}, {}, {static_cast<X&&>(x)}};
}
/// Mean of every element, [1, 1], like tf.reduce_mean without an axis; NaN for an empty tensor.
template <Operand X>
HOOKFUSE_PER_ENTRY_INLINE constexpr auto reduce_mean(X&& x) {
  return node_t<detail::ReduceOp<true>, X>{{}, {}, {static_cast<X&&>(x)}};
}
/// Softmax of each row ([batch, classes]), like tf.nn.softmax(axis=-1).
template <Operand X>
HOOKFUSE_PER_ENTRY_INLINE constexpr auto softmax(X&& x) {
  return node_t<detail::SoftmaxOp, X>{{}, {}, {static_cast<X&&>(x)}};
}
/// mean((predictions - labels)^2) over every element, [1, 1], like
/// tf.compat.v1.losses.mean_squared_error(labels, predictions); 0 with zero gradients for an
/// empty batch.
template <Operand L, Operand P>
HOOKFUSE_PER_ENTRY_INLINE constexpr auto mean_squared_error(L&& labels, P&& predictions) {
  return node_t<detail::MeanSquaredErrorOp, P, L>{
      {}, {}, {static_cast<P&&>(predictions), static_cast<L&&>(labels)}};
}
/// Mean cross-entropy between integer labels [batch] (int32, in [0, classes)) and unscaled logits
/// [batch, classes], [1, 1]; like tf.compat.v1.losses.sparse_softmax_cross_entropy(labels,
/// logits). Throws InvalidArgumentError (naming the row and the value) for a label out of range.
/// 0 with zero gradients for an empty batch. Stable for logits of any size (see the op).
template <Operand L, Operand Z>
HOOKFUSE_PER_ENTRY_INLINE constexpr auto sparse_softmax_cross_entropy(L&& labels, Z&& logits) {
  static_assert(std::is_integral_v<typename expr_t<L>::scalar>,
                "hookfuse: sparse_softmax_cross_entropy takes integer labels first");
  return node_t<detail::SparseSoftmaxCrossEntropyOp, L, Z>{
      {}, {}, {static_cast<L&&>(labels), static_cast<Z&&>(logits)}};
}
/// Fraction of the batch whose arg-max logit equals the label, [1, 1] (the per-batch value of
/// tf.reduce_mean(tf.cast(tf.equal(tf.argmax(logits, 1), labels), tf.float32))); NaN for an empty
/// batch.
template <Operand L, Operand Z>
HOOKFUSE_PER_ENTRY_INLINE constexpr auto accuracy(L&& labels, Z&& logits) {
  return node_t<detail::AccuracyOp, L, Z>{
      {}, {}, {static_cast<L&&>(labels), static_cast<Z&&>(logits)}};
}

/// The column of each row's largest value, [batch, classes] -> [batch, 1], in the input's scalar
/// type (tf.argmax(x, axis=1), which returns int64; here float ids, exact up to 2^24). Ties go to
/// the first largest value, as tf.argmax. Not differentiable (no gradient flows through it): for
/// predictions and metrics.
template <Operand X>
HOOKFUSE_PER_ENTRY_INLINE constexpr auto argmax(X&& x) {
  return node_t<detail::ArgmaxOp, X>{{}, {}, {static_cast<X&&>(x)}};
}

}  // namespace hookfuse
