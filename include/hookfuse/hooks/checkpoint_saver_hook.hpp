// hookfuse/hooks/checkpoint_saver_hook.hpp: CheckpointSaverHook and its listeners
// (tf.compat.v1.train.CheckpointSaverHook, tf.compat.v1.train.CheckpointSaverListener).
//
// The cadence is TensorFlow's (basic_session_run_hooks.py):
//   after_create_session  saves at the current global step ("the state at step global_step",
//                         also after a restore) and starts the timer there;
//   before_run            requests global_step (its value before the step);
//   after_run             when stale_global_step + the run's increment (TF's steps_per_run,
//                         here TrainOp::global_step_increment, 1 by default) reaches the
//                         timer's next trigger, reads the
//                         real global step and saves if the timer fires for it; a listener's
//                         after_save returning true then requests a stop;
//   begin                 creates checkpoint_dir when the saver can (create_checkpoint_dir;
//                         TF's begin() creates it through its SummaryWriterCache.get), then
//                         calls every listener's begin;
//   end                   saves unless the last global step is the one last saved, then calls
//                         every listener's end: each of them runs even when the save or an
//                         earlier listener's end throws, and the first error is raised after.
// On a step where it does not fire, after_run is one comparison: no clock read (step cadence),
// no allocation, no call into the saver.
#pragma once

#include <boost/hana/tuple.hpp>
#include <boost/hana/unpack.hpp>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include "hookfuse/clock.hpp"
#include "hookfuse/detail/call_all.hpp"
#include "hookfuse/detail/format.hpp"
#include "hookfuse/detail/type_name.hpp"
#include "hookfuse/hooks/checkpoint_saver.hpp"
#include "hookfuse/hooks/concepts.hpp"
#include "hookfuse/hooks/session_run_hook.hpp"
#include "hookfuse/hooks/timer.hpp"
#include "hookfuse/logging.hpp"

namespace hookfuse {
namespace detail {

struct ListenerNames {
  void begin();
  void before_save();
  void after_save();
  void end();
};
template <class L>
struct ListenerProbe : L, ListenerNames {};

template <class L>
concept DeclaresListenerBegin = std::is_class_v<L> && !requires { &ListenerProbe<L>::begin; };
template <class L>
concept DeclaresBeforeSave = std::is_class_v<L> && !requires { &ListenerProbe<L>::before_save; };
template <class L>
concept DeclaresAfterSave = std::is_class_v<L> && !requires { &ListenerProbe<L>::after_save; };
template <class L>
concept DeclaresListenerEnd = std::is_class_v<L> && !requires { &ListenerProbe<L>::end; };

/// os.path.join(dir, name): no separator added after an empty dir or one ending in '/'.
inline std::string join_path(std::string_view dir, std::string_view name) {
  std::string out(dir);
  if (!out.empty() && out.back() != '/') out += '/';
  out += name;
  return out;
}

}  // namespace detail

/// A checkpoint listener (tf.compat.v1.train.CheckpointSaverListener) is any class with any of
///   void begin()                                    once, from the hook's begin()
///   void before_save(Session&, std::int64_t step)   before each save
///   R after_save(Session&, std::int64_t step)       after each save; R is void, or bool where
///                                                   true requests a stop (only when the save
///                                                   came from after_run, as in TensorFlow)
///   void end(Session&, std::int64_t step)           once, from the hook's end(), after its
///                                                   final save
/// where `step` is the global step saved. A declared member that cannot be called this way, or a
/// class with none of the four (misspelt), is a compile error naming the listener.
template <class L, class Session>
concept CheckpointSaverListener =
    std::is_class_v<L> &&
    (detail::DeclaresListenerBegin<L> || detail::DeclaresBeforeSave<L> || detail::DeclaresAfterSave<L> ||
     detail::DeclaresListenerEnd<L>) &&
    (!detail::DeclaresListenerBegin<L> || requires(L& l) { l.begin(); }) &&
    (!detail::DeclaresBeforeSave<L> || requires(L& l, Session& s, std::int64_t step) {
      l.before_save(s, step);
    }) &&
    (!detail::DeclaresAfterSave<L> || requires(L& l, Session& s, std::int64_t step) {
      l.after_save(s, step);
    }) &&
    (!detail::DeclaresListenerEnd<L> || requires(L& l, Session& s, std::int64_t step) {
      l.end(s, step);
    });

/// The listeners of a CheckpointSaverHook, in call order; std::ref(l) keeps l with the caller
/// (which must outlive the hook), anything else is copied into the hook.
template <class... Ls>
constexpr auto listeners(Ls&&... ls) {
  return boost::hana::make_tuple(std::forward<Ls>(ls)...);
}

/// Saves checkpoints every `save_steps` global steps or every `save_secs` seconds, like
/// tf.compat.v1.train.CheckpointSaverHook(checkpoint_dir, save_secs, save_steps, saver,
/// checkpoint_basename, listeners=...); the cadence is in the file comment. Each save writes
/// through `saver` (a CheckpointSaver, see hookfuse/hooks/checkpoint_saver.hpp; a
/// std::reference_wrapper to one keeps it with the caller) to the prefix
/// "<checkpoint_dir>/<checkpoint_basename>" and logs, at INFO, TensorFlow's line
/// "Saving checkpoints for 100 into D/model.ckpt.".
///
/// Exactly one of save_secs and save_steps must be given (std::invalid_argument otherwise, as
/// TensorFlow's ValueError from its SecondOrStepTimer). The session must provide global_step()
/// and variables() (the CheckpointVariable list the saver receives), as MonitoredTrainingSession
/// does. Errors from the saver propagate from the event that saved. A saver with
/// `create_checkpoint_dir(dir)` (io::Saver has it) is asked in begin() to create checkpoint_dir
/// and its missing parents, as TensorFlow's hook does; its error (io::IoError naming the path)
/// propagates from begin().
///
/// Copies: a hook copied before its session starts is an independent hook. A copy made while a
/// session runs does not save through that session's after_run (it saves again only once given
/// to a session, whose after_create_session it then needs).
template <class Saver, class Listeners = boost::hana::tuple<>, Clock C = SteadyClock,
          Logger L = StderrLogger>
class CheckpointSaverHook {
 public:
  using saver_type = std::remove_cvref_t<std::unwrap_reference_t<Saver>>;
  static_assert(CheckpointSaver<saver_type>,
                "hookfuse: CheckpointSaverHook: the saver must satisfy hookfuse::CheckpointSaver "
                "(save(vars, save_path, global_step) and restore_latest(vars, checkpoint_dir), "
                "see hookfuse/hooks/checkpoint_saver.hpp)");

  struct Options {
    std::optional<double> save_secs = std::nullopt;
    std::optional<std::int64_t> save_steps = std::nullopt;
    std::string checkpoint_basename = "model.ckpt";
  };

  CheckpointSaverHook(std::string_view checkpoint_dir, Options options, Saver saver,
                      Listeners listeners = {}, C clock = C{}, L logger = L{})
      : checkpoint_dir_(checkpoint_dir),
        save_path_(detail::join_path(checkpoint_dir, options.checkpoint_basename)),
        timer_(options.save_secs, options.save_steps, clock),
        saver_(std::move(saver)),
        listeners_(std::move(listeners)),
        logger_(std::move(logger)) {
    logger_.log(Severity::info, "Create CheckpointSaverHook.");
  }

  /// Creates checkpoint_dir through the saver's create_checkpoint_dir(dir), when it has one and
  /// the directory is not empty (TF: SummaryWriterCache.get(checkpoint_dir) in begin()), then
  /// calls every listener's begin().
  void begin() {
    if constexpr (requires(saver_type& s) { s.create_checkpoint_dir(std::string_view{}); }) {
      saver_type& saver = saver_;
      if (!checkpoint_dir_.empty()) saver.create_checkpoint_dir(checkpoint_dir_);
    }
    boost::hana::unpack(listeners_, [](auto&... ls) { (call_begin(hook_ref(ls)), ...); });
  }

  /// Saves at the session's global step (the restored one after a restore) and starts the timer
  /// there. A listener's request to stop is ignored here, as in TensorFlow.
  template <class Session>
  void after_create_session(Session& session) {
    check_listeners<Session>();
    bound_.session = &session;
    bound_.save = [](CheckpointSaverHook& self, void* s, std::int64_t step) {
      return self.save(*static_cast<Session*>(s), step);
    };
    const std::int64_t global_step = session.global_step();
    save(session, global_step);
    timer_.update_last_triggered_step(global_step);
  }

  SessionRunArgs<"global_step"> before_run(SessionRunContext&) { return {}; }

  void after_run(SessionRunContext& ctx, const SessionRunValues<"global_step">& values) {
    const std::int64_t stale_global_step = values.get<"global_step">().item_int();
    // The common case: one comparison. TF's stale + steps_per_run, here the train op's
    // increment (saturating: no overflow at INT64_MAX).
    if (!timer_.should_trigger_for_step(
            detail::saturating_add(stale_global_step, ctx.global_step_increment())))
      return;
    const std::int64_t global_step = ctx.global_step();
    if (timer_.should_trigger_for_step(global_step)) {
      timer_.update_last_triggered_step(global_step);
      if (bound_.save != nullptr && bound_.save(*this, bound_.session, global_step))
        ctx.request_stop();
    }
  }

  /// Saves the final global step unless it is the one saved last, then calls every listener's
  /// end(session, step) (TF: CheckpointSaverHook.end). Each listener's end() runs even when the
  /// save or an earlier listener's end() throws (TensorFlow's stops at the first error); the
  /// first exception is then raised, each later one logged at ERROR through the hook's logger.
  template <class Session>
  void end(Session& session) {
    const std::int64_t last_step = session.global_step();
    bound_ = {};
#ifdef HOOKFUSE_NO_EXCEPTIONS
    detail::ErrorCollector errors([](const char*) {});
#else
    detail::ErrorCollector errors([this](const char* what) {
      logger_.log(Severity::error,
                  (detail::ErrorMessage() << "CheckpointSaverHook.end: a listener's end() threw "
                                             "after an earlier error (the first is raised): "
                                          << what)
                      .str());
    });
#endif
    if (timer_.last_triggered_step() != last_step)
      errors.run([&] { save(session, last_step); });
    detail::call_all(
        listeners_, [&](auto& l) { call_end(hook_ref(l), session, last_step); }, errors);
    errors.rethrow_first();
  }

  /// "<checkpoint_dir>/<checkpoint_basename>", the prefix saves write to (before "-<step>").
  const std::string& save_path() const { return save_path_; }
  saver_type& saver() { return saver_; }
  Listeners& listeners() { return listeners_; }
  L& logger() { return logger_; }
  /// The global step of the last save (or of the last timer trigger), if any.
  std::optional<std::int64_t> last_triggered_step() const { return timer_.last_triggered_step(); }

 private:
  /// Saves `step` through the saver with the listeners around it; true when a listener's
  /// after_save asks to stop (every listener's after_save is called regardless).
  template <class Session>
  bool save(Session& session, std::int64_t step) {
    std::string line = "Saving checkpoints for ";
    line += std::to_string(step);
    line += " into ";
    line += save_path_;
    line += '.';
    logger_.log(Severity::info, line);
    boost::hana::unpack(listeners_, [&](auto&... ls) {
      (call_before_save(hook_ref(ls), session, step), ...);
    });
    const auto vars = session.variables();
    saver_type& saver = saver_;
    saver.save(VariableList(vars.data(), vars.size()), save_path_, step);
    bool should_stop = false;
    boost::hana::unpack(listeners_, [&](auto&... ls) {
      ((should_stop = call_after_save(hook_ref(ls), session, step) || should_stop), ...);
    });
    return should_stop;
  }

  template <class Session>
  void check_listeners() {
    boost::hana::unpack(listeners_, [](auto&... ls) {
      (check_listener<std::remove_cvref_t<decltype(hook_ref(ls))>, Session>(), ...);
    });
  }
  template <class Listener, class Session>
  static constexpr void check_listener() {
    static_assert(CheckpointSaverListener<Listener, Session>,
                  "hookfuse: a CheckpointSaverHook listener must declare at least one of begin(), "
                  "before_save(session, step), after_save(session, step), end(session, step), "
                  "each callable that way (the listener is 'Listener' in the instantiation above)");
  }

  template <class Listener>
  static void call_begin(Listener& l) {
    if constexpr (detail::DeclaresListenerBegin<Listener>) l.begin();
  }
  template <class Listener, class Session>
  static void call_before_save(Listener& l, Session& s, std::int64_t step) {
    if constexpr (detail::DeclaresBeforeSave<Listener>) l.before_save(s, step);
  }
  template <class Listener, class Session>
  bool call_after_save(Listener& l, Session& s, std::int64_t step) {
    if constexpr (detail::DeclaresAfterSave<Listener>) {
      if constexpr (std::is_void_v<decltype(l.after_save(s, step))>) {
        l.after_save(s, step);
      } else if (static_cast<bool>(l.after_save(s, step))) {
        std::string line =
            "A CheckpointSaverListener requested that training be stopped. listener: ";
        line += detail::type_name<Listener>();
        logger_.log(Severity::info, line);
        return true;
      }
    }
    return false;
  }
  template <class Listener, class Session>
  static void call_end(Listener& l, Session& s, std::int64_t step) {
    if constexpr (detail::DeclaresListenerEnd<Listener>) l.end(s, step);
  }

  /// The session whose after_run may save, set by after_create_session and cleared by end()
  /// (after_run has no session argument). Not copied: a copy is bound to no session.
  struct Binding {
    void* session = nullptr;
    bool (*save)(CheckpointSaverHook&, void*, std::int64_t) = nullptr;
    Binding() = default;
    Binding(const Binding&) {}
    Binding& operator=(const Binding&) {
      session = nullptr;
      save = nullptr;
      return *this;
    }
  };

  std::string checkpoint_dir_;
  std::string save_path_;
  SecondOrStepTimer<C> timer_;
  Saver saver_;
  Listeners listeners_;
  L logger_;
  Binding bound_;
};

}  // namespace hookfuse
