// hookfuse/autodiff/reduce_ops.hpp: reductions to a scalar and losses; mirrors tf.reduce_sum,
// tf.reduce_mean, tf.nn.softmax, tf.compat.v1.losses.mean_squared_error and
// tf.compat.v1.losses.sparse_softmax_cross_entropy.
#pragma once

#include <cmath>
#include <cstdint>
#include <stdexcept>

#include "hookfuse/autodiff/expr.hpp"
#include "hookfuse/autodiff/target.hpp"
#include "hookfuse/config.hpp"
#include "hookfuse/detail/format.hpp"

namespace hookfuse {

/// Thrown when a label is outside [0, num_classes) (TensorFlow: InvalidArgumentError).
struct InvalidArgumentError : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

namespace detail {

/// Sum (Mean = false) or mean (Mean = true) of every element, a [1, 1] result.
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
      out(0, 0) = Mean ? a.mean() : a.sum();
    }
    template <std::size_t K, class T, class D, class O, class X>
    void backward(T& t, const D& dout, const O&, const X& a) {
      t.put_constant(Mean ? dout(0, 0) / static_cast<S>(a.size()) : dout(0, 0));
    }
  };
};

/// mean((prediction - target)^2) over every element, [1, 1].
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
      out(0, 0) = (a - b).squaredNorm() / static_cast<S>(a.size());
    }
    template <std::size_t K, class T, class D, class O, class X, class Y>
    void backward(T& t, const D& dout, const O&, const X& a, const Y& b) {
      const S k = S(2) * dout(0, 0) / static_cast<S>(a.size()) * (K == 0 ? S(1) : S(-1));
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
/// [batch, classes]; a [1, 1] result. Uses a stable log-sum-exp and keeps the softmax for the
/// backward pass.
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
        const S lse = m + std::log(sum);
        p.row(i) /= sum;
        total += lse - z(i, static_cast<Index>(y));
      }
      out(0, 0) = total / static_cast<S>(z.rows());
    }
    template <std::size_t K, class T, class D, class O, class Y, class X>
    void backward(T& t, const D& dout, const O&, const Y& labels, const X& z) {
      static_assert(K == 1, "labels have no gradient");
      const S k = dout(0, 0) / static_cast<S>(z.rows());
      auto p = probs.view();
      t.put(k * p);
      for (Index i = 0; i < z.rows(); ++i) t.add_at(i, static_cast<Index>(labels(i)), -k);
    }
  };
};

/// Fraction of rows whose largest logit is at the label, [1, 1]. Not differentiable.
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
      out(0, 0) = z.rows() ? static_cast<S>(hits) / static_cast<S>(z.rows()) : S(0);
    }
  };
};

}  // namespace detail

/// Sum of every element, [1, 1], like tf.reduce_sum without an axis.
template <Operand X>
constexpr auto reduce_sum(X&& x) {
  return make_node(detail::ReduceOp<false>{}, std::forward<X>(x));
}
/// Mean of every element, [1, 1], like tf.reduce_mean without an axis.
template <Operand X>
constexpr auto reduce_mean(X&& x) {
  return make_node(detail::ReduceOp<true>{}, std::forward<X>(x));
}
/// Softmax of each row ([batch, classes]), like tf.nn.softmax(axis=-1).
template <Operand X>
constexpr auto softmax(X&& x) {
  return make_node(detail::SoftmaxOp{}, std::forward<X>(x));
}
/// mean((predictions - labels)^2) over every element, [1, 1], like
/// tf.compat.v1.losses.mean_squared_error(labels, predictions).
template <Operand L, Operand P>
constexpr auto mean_squared_error(L&& labels, P&& predictions) {
  return make_node(detail::MeanSquaredErrorOp{}, std::forward<P>(predictions),
                   std::forward<L>(labels));
}
/// Mean cross-entropy between integer labels [batch] (int32, in [0, classes)) and unscaled logits
/// [batch, classes], [1, 1]; like tf.compat.v1.losses.sparse_softmax_cross_entropy(labels,
/// logits). Throws InvalidArgumentError (naming the row and the value) for a label out of range.
template <Operand L, Operand Z>
constexpr auto sparse_softmax_cross_entropy(L&& labels, Z&& logits) {
  static_assert(std::is_integral_v<typename expr_t<L>::scalar>,
                "hookfuse: sparse_softmax_cross_entropy takes integer labels first");
  return make_node(detail::SparseSoftmaxCrossEntropyOp{}, std::forward<L>(labels),
                   std::forward<Z>(logits));
}
/// Fraction of the batch whose arg-max logit equals the label, [1, 1] (the per-batch value of
/// tf.reduce_mean(tf.cast(tf.equal(tf.argmax(logits, 1), labels), tf.float32))).
template <Operand L, Operand Z>
constexpr auto accuracy(L&& labels, Z&& logits) {
  return make_node(detail::AccuracyOp{}, std::forward<L>(labels), std::forward<Z>(logits));
}

}  // namespace hookfuse
