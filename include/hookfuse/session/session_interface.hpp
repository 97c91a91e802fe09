// hookfuse/session/session_interface.hpp: the public members every session has
// (MonitoredTrainingSession, session/monitored_session.hpp; MonitoredSession,
// session/evaluation_session.hpp), written once over the session's own step and state: the
// run() overloads, should_stop(), close(), hook<...>(), graph(), hooks() and input().
#pragma once

#include <cstddef>
#include <exception>
#include <optional>
#include <type_traits>

#include "hookfuse/autodiff/feeds.hpp"
#include "hookfuse/config.hpp"
#include "hookfuse/detail/format.hpp"
#include "hookfuse/errors.hpp"
#include "hookfuse/fixed_string.hpp"
#include "hookfuse/hooks/session_run_hook.hpp"
#include "hookfuse/logging.hpp"
#include "hookfuse/session/hook_calls.hpp"

namespace hookfuse::detail {

/// Base class of a session type `Session` (which declares it a friend) giving it TensorFlow's
/// `sess.run(...)` forms, should_stop(), close(), hook<...>() and the accessors. `Session`
/// provides, privately: `caller_fed` (built with caller_feeds), `hook_feed_checks`
/// (session/hook_feeds.hpp), `check_run_fetches<names...>()` (a compile error for a name the
/// session cannot fetch), `input_`, `graph_`, `hooks_`, the flags `should_stop_`, `closed_`,
/// `in_run_`, `uncaught_at_construction_` (std::uncaught_exceptions() at construction; only with
/// exceptions), and `step(values, feed_inputs)`, one step with every hook that fills `values` with
/// the caller's fetches and returns whether a step ran (feed_inputs() feeds the graph, false at
/// the end of the input). A training session's step trains; an evaluation session's only computes.
/// A training session also provides `step_no_train(values, feed_inputs)` (a hooked run that does
/// not train, behind run(no_train, ...)) and `check_no_train_fetches<names...>()`.
template <class Session>
class SessionInterface {
 public:
  /// True once a hook requested a stop, the input ran out, or the session was closed.
  bool should_stop() const { return self().should_stop_ || self().closed_; }

  /// Calls every hook's end(session) once, in hook order, and stops the session (TF:
  /// MonitoredSession.close()). Every hook's end() runs even when an earlier one throws (so a
  /// CheckpointSaverHook after a failing hook still writes the final checkpoint); then the first
  /// exception propagates, and each later one is logged at ERROR through StderrLogger
  /// (close(logger): through `logger`). TensorFlow stops at the first end() that raises.
  /// Skipped (hooks' end() not called) when the last run() left through an exception. Later
  /// calls do nothing.
  void close() { close(StderrLogger{}); }
  template <Logger L>
  void close(L&& logger) {
    if (self().closed_) return;
#ifdef HOOKFUSE_NO_EXCEPTIONS
    (void)logger;
    ErrorCollector errors([](const char*) {});
#else
    ErrorCollector errors([&logger](const char* what) {
      logger.log(Severity::error,
                 (ErrorMessage() << "hookfuse: a hook's end() threw after an earlier one did "
                                    "(close() raises the first): "
                                 << what)
                     .str());
    });
#endif
    end_hooks(errors);
    errors.rethrow_first();
  }

  /// The I-th hook, as given to hooks(...) (for std::ref(h): h itself).
  template <std::size_t I>
  auto& hook() {
    sync_hooks();
    return hook_at<I>(self().hooks_);
  }
  /// The hook of type H (or the object a std::ref(h) of type H refers to); H must occur once.
  template <class H>
  auto& hook() {
    sync_hooks();
    return hook_of<H>(self().hooks_);
  }

  /// What run<Names...>() returns: the caller's fetches of a step, none when no step ran.
  template <fixed_string... Names>
  using run_result = std::optional<SessionRunValues<Names...>>;

  /// One step with every hook, as TensorFlow's `sess.run(train_op)`. Returns whether a step
  /// ran: at the end of the input data it runs no step, returns false and makes should_stop()
  /// true (before_run was called, after_run is not, as in TensorFlow). Throws
  /// RuntimeError("Run called even after should_stop requested.") when should_stop() is
  /// already true (a hook requested a stop, the input ran out, or close() was called). Not for a
  /// session built with caller_feeds: use run(feed<"x">(...), ...).
  bool run() {
    static_assert(!Session::caller_fed,
                  "hookfuse: this session is fed by the caller (caller_feeds): "
                  "run(feed<\"x\">(xs, rows), ...)");
    SessionRunValues<> none;
    return self().step(none, from_input());
  }

  /// One step of a session built with caller_feeds(max_batch_size), fed with `feeds`
  /// (TensorFlow's `sess.run(train_op, feed_dict={x: xs, y: ys})`):
  /// `session.run(feed<"x">(xs, rows), feed<"y">(ys, rows))`. Checked like any feed before the
  /// step computes anything: the data's scalar types at compile time; columns, rows (at most
  /// max_batch_size, the same for every batched placeholder) and that every placeholder the
  /// step reads is fed (ShapeError naming the placeholders and shapes). Feeds of an earlier run
  /// do not carry over. Returns true (a step ran); throws RuntimeError as run() does.
  template <class... Fs>
    requires(sizeof...(Fs) > 0 && (is_feed<Fs>::value && ...))
  bool run(const Fs&... feeds) {
    static_assert(Session::caller_fed,
                  "hookfuse: run(feed<...>(...)) needs a session built with "
                  "caller_feeds(max_batch_size) where the input goes");
    static_assert(Session::hook_feed_checks::template check_caller<Fs...>());
    SessionRunValues<> none;
    return self().step(none, from_caller(feeds...));
  }

  /// One step that also returns the named tensors, as `sess.run([train_op, loss, accuracy])`:
  /// `session.run<"loss", "accuracy">()`. The names are checked at compile time like a hook's
  /// fetches (see each session for what it can fetch). The values are those hooks see in this
  /// step, and stay valid until the next run. Hooks see the names as
  /// run_context.original_args().fetches. Returns no value when the input ran out (no step, as
  /// run() returning false); throws RuntimeError as run() does, and ShapeError (before anything
  /// is computed) when a placeholder that the step or a fetch reads was not fed.
  ///
  /// A session built with caller_feeds takes its feeds here too:
  /// `session.run<"loss">(feed<"x">(xs, rows), feed<"y">(ys, rows))`.
  template <fixed_string First, fixed_string... Rest, class... Fs>
    requires((is_feed<Fs>::value && ...))
  run_result<First, Rest...> run(const Fs&... feeds) {
    static_assert(Session::caller_fed == (sizeof...(Fs) > 0),
                  "hookfuse: feed<...>(...) arguments go with a session built with "
                  "caller_feeds(max_batch_size), and such a session needs them on every run");
    Session::template check_run_fetches<First, Rest...>();
    static_assert(Session::hook_feed_checks::template check_caller<Fs...>());
    SessionRunValues<First, Rest...> values;
    bool ran = false;
    if constexpr (sizeof...(Fs) > 0) ran = self().step(values, from_caller(feeds...));
    else ran = self().step(values, from_input());
    if (!ran) return std::nullopt;
    return values;
  }

  /// A hooked run that does not train (a training session only), as TensorFlow's
  /// `sess.run(fetches)` of tensors other than the train op inside a MonitoredTrainingSession
  /// (an evaluation of the loss between training steps; `run_with_hooks` from run_step_fn):
  /// `session.run(no_train)`, `session.run<"loss", "accuracy">(no_train)`, and with a session
  /// built with caller_feeds `session.run<"loss">(no_train, feed<"x">(xs, rows), ...)`. Every
  /// hook's before_run and after_run is called (run_context.trains() false) and receives what it
  /// requested, computed from the current variables; no backward pass, no gradient hook, no
  /// update, no global-step change. A session with an input object takes the input's next batch
  /// for the run, as a TF input pipeline does (the end of the input: false / no value, and
  /// should_stop()). Fetch names as in run<...>() except "gradients/<name>" (a compile error,
  /// also for a hook that may request one). Throws as run<...>() does.
  template <class... Fs>
    requires((is_feed<Fs>::value && ...))
  bool run(NoTrain, const Fs&... feeds) {
    if constexpr (check_no_train<Fs...>()) {
      SessionRunValues<> none;
      if constexpr (sizeof...(Fs) > 0) return self().step_no_train(none, from_caller(feeds...));
      else return self().step_no_train(none, from_input());
    } else {
      return false;
    }
  }
  template <fixed_string First, fixed_string... Rest, class... Fs>
    requires((is_feed<Fs>::value && ...))
  run_result<First, Rest...> run(NoTrain, const Fs&... feeds) {
    Session::template check_run_fetches<First, Rest...>();
    if constexpr (check_no_train<Fs...>() &&
                  Session::template check_no_train_fetches<First, Rest...>()) {
      SessionRunValues<First, Rest...> values;
      bool ran = false;
      if constexpr (sizeof...(Fs) > 0) ran = self().step_no_train(values, from_caller(feeds...));
      else ran = self().step_no_train(values, from_input());
      if (!ran) return std::nullopt;
      return values;
    } else {
      return std::nullopt;
    }
  }

  /// The bound graph, the stored hooks (a hana tuple), the input object.
  auto& graph() { return self().graph_; }
  auto& hooks() {
    sync_hooks();
    return self().hooks_;
  }
  auto& input() { return self().input_; }

 protected:
  /// The start of every step: RuntimeError when should_stop() is already true, then the run is
  /// marked in progress (close() during it, or after it threw, calls no end()). Returns the
  /// guard that releases the feeds when the step ends (normally or by an exception) if the
  /// caller or a hook feeds: those feeds last for this run only, as TF's feed_dict, so that
  /// afterwards (a later fetch, a hook's end()) a tensor not computed in the run is refused with
  /// ShapeError rather than computed from memory that may be gone; the values this run computed
  /// stay readable.
  auto start_step() {
    using Graph = std::remove_reference_t<decltype(self().graph_)>;
    if (should_stop()) fail<RuntimeError>(run_after_stop_message);
    self().in_run_ = true;
    constexpr bool release =
        Session::caller_fed || Session::hook_feed_checks::names.size() > 0;
    return ReleaseFeeds<Graph>{release ? &self().graph_ : nullptr};
  }
  /// The end of a step: no step ran when `ran` is false (the input ran out: should_stop()
  /// becomes true); a stop a hook requested in `ctx` takes effect. Returns `ran`.
  bool finish_step(bool ran, const SessionRunContext& ctx) {
    if (!ran) self().should_stop_ = true;
    self().should_stop_ = self().should_stop_ || ctx.stop_requested();
    self().in_run_ = false;
    return ran;
  }

  /// What a session's destructor calls: close(), except while an exception unwinds the stack
  /// (std::uncaught_exceptions() above the session's `uncaught_at_construction_`), as
  /// TensorFlow's `with MonitoredSession(...)` exits: then the session is marked closed and no
  /// end() called. Every hook's end() runs, and each exception from one is logged at ERROR
  /// (StderrLogger), in hook order, instead of escaping. Without exceptions
  /// (HOOKFUSE_NO_EXCEPTIONS) just close(): nothing can unwind there, and
  /// std::uncaught_exceptions() would link libsupc++'s exception globals into a bare-metal
  /// image.
  void close_from_destructor() {
#ifndef HOOKFUSE_NO_EXCEPTIONS
    if (std::uncaught_exceptions() > self().uncaught_at_construction_) {
      self().closed_ = true;
      return;
    }
    // keep_first = false: every end() error is logged here, in the order they happen.
    ErrorCollector errors(
        [](const char* what) {
          StderrLogger{}.log(Severity::error,
                             (ErrorMessage() << "hookfuse: a hook's end() threw while the "
                                                "session was destroyed (call close() to receive "
                                                "the exception): "
                                             << what)
                                 .str());
        },
        false);
    errors.run([&] { end_hooks(errors); });
#else
    close();
#endif
  }

 private:
  /// close()'s work: marks the session closed and, unless the last run() threw, calls every
  /// hook's end() through `errors` (every one runs; the caller raises or has logged the errors).
  template <class Log>
  void end_hooks(ErrorCollector<Log>& errors) {
    if (self().closed_) return;
    self().closed_ = true;
    if (self().in_run_) return;
    sync_hooks();
    call_end(self().hooks_, self(), errors);
  }
  /// A session whose hooks may sit out idle runs (MonitoredTrainingSession::skips_idle_runs)
  /// tells them the runs they missed before the caller gets hold of them.
  void sync_hooks() {
    if constexpr (requires { Session::skips_idle_runs; }) {
      if constexpr (Session::skips_idle_runs) self().sync_hooks_for_caller();
    }
  }
  /// The compile-time checks of run(no_train, feeds...): a session that trains, and the
  /// caller's feeds as in run(feeds...) / run().
  template <class... Fs>
  static constexpr bool check_no_train() {
    constexpr bool trains = requires { typename Session::optimizer_type; };
    static_assert(trains,
                  "hookfuse: run(no_train, ...) is for a session that trains "
                  "(MonitoredTrainingSession); every run of an evaluation session "
                  "(MonitoredSession) trains nothing: call run(...)");
    static_assert(Session::caller_fed == (sizeof...(Fs) > 0),
                  "hookfuse: feed<...>(...) arguments go with a session built with "
                  "caller_feeds(max_batch_size), and such a session needs them on every run");
    static_assert(Session::hook_feed_checks::template check_caller<Fs...>());
    return trains && Session::caller_fed == (sizeof...(Fs) > 0);
  }
  Session& self() { return static_cast<Session&>(*this); }
  const Session& self() const { return static_cast<const Session&>(*this); }
  auto from_input() {
    return [this] { return feed_from_input(self().input_, self().graph_); };
  }
  template <class... Fs>
  auto from_caller(const Fs&... feeds) {
    return [this, &feeds...] { return feed_from_caller(self().graph_, feeds...); };
  }
};

}  // namespace hookfuse::detail
