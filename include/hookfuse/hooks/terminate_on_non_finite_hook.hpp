// hookfuse/hooks/terminate_on_non_finite_hook.hpp: TerminateOnNonFiniteHook, stops training on
// a NaN or infinite loss (keras.callbacks.TerminateOnNaN).
#pragma once

#include <cmath>
#include <cstdint>
#include <optional>
#include <string_view>

#include "hookfuse/config.hpp"
#include "hookfuse/detail/format.hpp"
#include "hookfuse/detail/log_line.hpp"
#include "hookfuse/detail/python_float.hpp"
#include "hookfuse/errors.hpp"
#include "hookfuse/fixed_string.hpp"
#include "hookfuse/hooks/session_run_hook.hpp"
#include "hookfuse/logging.hpp"

namespace hookfuse {

/// Fetches the tensor `Tensor` (default "loss") every run; when any element is NaN, +Inf or
/// -Inf, logs "Batch <global step of the run>: Invalid loss, terminating training" at WARNING
/// and requests a stop after this run, as TerminateOnNaN.on_batch_end in Keras 3.13.0
/// (keras/src/callbacks/terminate_on_nan.py; it also checks for infinities, despite its name;
/// Keras numbers the batch within the epoch, hookfuse gives the global step before the run's
/// increment). For a tensor not named "loss" the line says "Invalid <name>". With
/// `raise_error` (Keras' TerminateOnNaN(raise_error=True)) it throws hookfuse::RuntimeError
/// instead, "NaN or Inf loss encountered at batch <s>. Loss value: <value>. Terminating
/// training immediately.", the value as Python's str() of the float Keras' logs hold ("nan"
/// whatever the NaN's sign, "inf", "-inf"), so, as with any exception out of run(), no hook's
/// end() is called. Differs from NanTensorHook, which checks NaN only and by default throws.
template <fixed_string Tensor = "loss", Logger L = StderrLogger>
class TerminateOnNonFiniteHook {
 public:
  struct Options {
    bool raise_error = false;
  };

  explicit TerminateOnNonFiniteHook(Options options = {}, L logger = L{})
      : raise_error_(options.raise_error), logger_(logger) {}

  SessionRunArgs<Tensor> before_run(SessionRunContext& ctx) {
    step_ = ctx.global_step();
    return {};
  }

  void after_run(SessionRunContext& ctx, const SessionRunValues<Tensor>& values) {
    const TensorValue& t = values.template get<Tensor>();
    for (Eigen::Index i = 0; i < t.rows; ++i)
      for (Eigen::Index j = 0; j < t.cols; ++j)
        if (!std::isfinite(t.at(i, j))) return terminate(ctx, t.at(i, j));
  }

  /// The global step of the run whose value was not finite, if any.
  std::optional<std::int64_t> terminated_at() const { return terminated_at_; }
  L& logger() { return logger_; }

 private:
  void terminate(SessionRunContext& ctx, double value) {
    detail::LogLine<> line;
    terminated_at_ = step_;
    if (raise_error_) {
      line.append("NaN or Inf ").append(Tensor.view()).append(" encountered at batch ");
      line.append(step_).append(". Loss value: ");
      // value is NaN or infinite here
      detail::append_python_non_finite(line.cursor(), line.end(), value);
      line.append(". Terminating training immediately.");
      detail::fail<RuntimeError>(line.c_str());
    }
    line.append("Batch ").append(step_).append(": Invalid ").append(Tensor.view());
    line.append(", terminating training");
    logger_.log(Severity::warning, line.view());
    ctx.request_stop();
  }

  bool raise_error_;
  L logger_;
  std::int64_t step_ = 0;
  std::optional<std::int64_t> terminated_at_;
};

}  // namespace hookfuse
