// hookfuse/hooks/gradient_clip_hooks.hpp: gradient clipping as gradient hooks
// (tf.clip_by_global_norm, tf.clip_by_value between compute_gradients and apply_gradients).
//
// Both act in before_apply_gradients (session/gradient_event.hpp): every run, after the backward
// pass, before the fetches and the update. Their presence makes the session store every
// variable's gradient (no fused update). Neither fetches a tensor, allocates, or logs.
#pragma once

#include <cmath>
#include <limits>
#include <stdexcept>
#include <string_view>
#include <type_traits>

#include "hookfuse/config.hpp"

namespace hookfuse {

/// Clips the gradients of all variables together by their global norm, as
/// tf.clip_by_global_norm(t_list, clip_norm) applied to the compute_gradients output:
///   global_norm = sqrt(sum over every variable of sum(gradient^2)),
///   when global_norm > clip_norm every gradient becomes gradient * clip_norm / global_norm
///   (TensorFlow's t * clip_norm * min(1 / global_norm, 1 / clip_norm)); otherwise they are left
///   exactly as they are (TensorFlow multiplies them by clip_norm * (1 / clip_norm), 1 up to one
///   rounding).
/// A global norm that is NaN or infinite makes every gradient NaN, as in TensorFlow (the update
/// then makes the variables NaN; NanTensorHook / TerminateOnNonFiniteHook stop on the loss).
/// Differences: the sum of squares is accumulated in double whatever the variables' scalar type
/// (TensorFlow uses the gradients' dtype), and the scale is cast to that type.
/// global_norm() is the norm of the last run, before clipping (what tf.clip_by_global_norm
/// returns second); 0 before the first run.
/// Cost per run: two passes over every gradient (sum of squares, then the scale when clipped).
/// Throws std::invalid_argument unless clip_norm is finite and > 0.
class GradientClipByNormHook {
 public:
  explicit GradientClipByNormHook(double clip_norm) : clip_norm_(clip_norm) {
    if (!(clip_norm > 0.0) || !std::isfinite(clip_norm))
      detail::fail<std::invalid_argument>(
          "GradientClipByNormHook: clip_norm must be finite and > 0");
  }

  template <class Gradients>
  void before_apply_gradients(Gradients& gradients) {
    double sum = 0.0;
    gradients.for_each([&sum](const auto& g, std::string_view) {
      sum += g.template cast<double>().squaredNorm();
    });
    global_norm_ = std::sqrt(sum);
    if (!std::isfinite(global_norm_)) {
      gradients.for_each([](auto& g, std::string_view) {
        using S = typename std::remove_cvref_t<decltype(g)>::Scalar;
        g.setConstant(std::numeric_limits<S>::quiet_NaN());
      });
      return;
    }
    if (!(global_norm_ > clip_norm_)) return;
    const double scale = clip_norm_ * (1.0 / global_norm_);
    gradients.for_each([scale](auto& g, std::string_view) {
      using S = typename std::remove_cvref_t<decltype(g)>::Scalar;
      g *= static_cast<S>(scale);
    });
  }

  /// The global norm of the last run's gradients, before clipping (0 before the first run).
  double global_norm() const { return global_norm_; }
  double clip_norm() const { return clip_norm_; }

 private:
  double clip_norm_;
  double global_norm_ = 0.0;
};

/// Clips every gradient element-wise to [clip_value_min, clip_value_max], as
/// tf.clip_by_value(gradient, clip_value_min, clip_value_max) on each compute_gradients output:
/// x < min becomes min, x > max becomes max, NaN stays NaN. The bounds are cast to the
/// variables' scalar type. Cost per run: one pass over every gradient.
/// Throws std::invalid_argument when a bound is NaN or clip_value_min > clip_value_max
/// (TensorFlow: InvalidArgumentError when the op runs).
class GradientClipByValueHook {
 public:
  GradientClipByValueHook(double clip_value_min, double clip_value_max)
      : min_(clip_value_min), max_(clip_value_max) {
    if (std::isnan(clip_value_min) || std::isnan(clip_value_max))
      detail::fail<std::invalid_argument>(
          "GradientClipByValueHook: clip_value_min and clip_value_max must not be NaN");
    if (clip_value_min > clip_value_max)
      detail::fail<std::invalid_argument>(
          "GradientClipByValueHook: clip_value_min must be <= clip_value_max");
  }

  template <class Gradients>
  void before_apply_gradients(Gradients& gradients) {
    gradients.for_each([this](auto& g, std::string_view) {
      using S = typename std::remove_cvref_t<decltype(g)>::Scalar;
      const S lo = static_cast<S>(min_);
      const S hi = static_cast<S>(max_);
      g = g.unaryExpr([lo, hi](S x) { return x < lo ? lo : (hi < x ? hi : x); });
    });
  }

  double clip_value_min() const { return min_; }
  double clip_value_max() const { return max_; }

 private:
  double min_;
  double max_;
};

}  // namespace hookfuse
