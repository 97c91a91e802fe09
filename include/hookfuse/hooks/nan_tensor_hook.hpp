// hookfuse/hooks/nan_tensor_hook.hpp: NanTensorHook (tf.compat.v1.train.NanTensorHook).
#pragma once

#include <cmath>
#include <stdexcept>

#include "hookfuse/config.hpp"
#include "hookfuse/fixed_string.hpp"
#include "hookfuse/hooks/session_run_hook.hpp"
#include "hookfuse/logging.hpp"

namespace hookfuse {

/// Thrown by NanTensorHook when the loss is NaN and fail_on_nan_loss is true
/// (tf.compat.v1.train.NanLossDuringTrainingError). what(): "NaN loss during training."
struct NanLossDuringTrainingError : std::runtime_error {
  NanLossDuringTrainingError() : std::runtime_error("NaN loss during training.") {}
  explicit NanLossDuringTrainingError(const char*) : NanLossDuringTrainingError() {}
};

/// Watches the loss tensor `Loss` (default "loss") every run. On NaN it logs
/// "Model diverged with loss = NaN." and then either throws NanLossDuringTrainingError
/// (fail_on_nan_loss = true, the default; logged at ERROR) or requests a stop (false; logged at
/// WARNING).
template <fixed_string Loss = "loss", Logger L = StderrLogger>
class NanTensorHook {
 public:
  struct Options {
    bool fail_on_nan_loss = true;
  };
  explicit NanTensorHook(Options options = {}, L logger = L{})
      : fail_on_nan_loss_(options.fail_on_nan_loss), logger_(logger) {}

  SessionRunArgs<Loss> before_run(SessionRunContext&) { return {}; }

  void after_run(SessionRunContext& ctx, const SessionRunValues<Loss>& values) {
    if (!std::isnan(values.template get<Loss>().item())) return;
    constexpr const char* message = "Model diverged with loss = NaN.";
    if (fail_on_nan_loss_) {
      logger_.log(Severity::error, message);
      detail::fail<NanLossDuringTrainingError>("NaN loss during training.");
    }
    logger_.log(Severity::warning, message);
    ctx.request_stop();
  }

  L& logger() { return logger_; }

 private:
  bool fail_on_nan_loss_;
  L logger_;
};

}  // namespace hookfuse
