// hookfuse/session/step_context.hpp: StepContext, what a session's run_step_fn(step_fn) hands
// to the user's step function (tf.compat.v1.train.MonitoredSession.StepContext).
#pragma once

#include <utility>

#include "hookfuse/fixed_string.hpp"

namespace hookfuse {

/// Passed to the step function of session.run_step_fn(step_fn), as TensorFlow's StepContext:
///
///     session.run_step_fn([](auto& step) {
///       auto v = step.template run_with_hooks<"loss">();   // one training step, every hook
///       auto e = step.session().template evaluate<"accuracy">(feed<"x">(xv), feed<"y">(yv));
///       if (e.template get<"accuracy">().item() > 0.99) step.request_stop();
///     });
///
/// - run_with_hooks(...): session.run(...) with the same arguments (fetch names, caller feeds):
///   one hook iteration, counted and seen by every hook. run_with_hooks(no_train, ...) is a hook
///   iteration that does not train (TF: `run_with_hooks(fetches)` without the train op):
///   session.run(no_train, ...).
/// - session(): the session for auxiliary evaluations that are not hook iterations, TF's raw
///   `step_context.session`: session().evaluate<names...>(feeds...) computes tensors (no hook
///   event, no backward pass, no update, no global-step increment) and fetch<"name">() reads
///   one for the last batch fed. Fetched values are views into the session: read them before
///   the next run_with_hooks or evaluate, which overwrite them.
/// - request_stop(): should_stop() becomes true once the step function returns. TensorFlow's
///   request_stop() raises an exception that leaves step_fn at once; here the step function
///   returns by itself (also in builds without exceptions), and run_step_fn still returns its
///   value.
template <class Session>
class StepContext {
 public:
  explicit StepContext(Session& session) : session_(&session) {}

  /// One training step with hooks: forwards to session.run(args...).
  template <class... Args>
  decltype(auto) run_with_hooks(Args&&... args) {
    return session_->run(std::forward<Args>(args)...);
  }
  /// One training step with hooks that returns the named tensors: session.run<Names...>(feeds...).
  template <fixed_string First, fixed_string... Rest, class... Args>
  decltype(auto) run_with_hooks(Args&&... args) {
    return session_->template run<First, Rest...>(std::forward<Args>(args)...);
  }
  /// The session, for evaluations that are not hook iterations (evaluate, fetch).
  Session& session() { return *session_; }
  /// Ends training once the step function returns.
  void request_stop() { stop_requested_ = true; }
  bool stop_requested() const { return stop_requested_; }

 private:
  Session* session_;
  bool stop_requested_ = false;
};

}  // namespace hookfuse
