// hookfuse/session/session_options.hpp: MonitoredTrainingSession's checkpoint and summary options
// under TensorFlow's argument names (SessionOptions), chief-only hooks, and the hook list they
// make. For a chief, as tf.compat.v1.train.MonitoredTrainingSession: the chief-only hooks, the
// default hooks (a StepCounterHook and a SummarySaverHook writing into summary_dir, then the
// CheckpointSaverHook), then the user's hooks; a non-chief gets the user's hooks only. Which of
// them run is decided at construction (ConditionalHook), so session.hook<I>() positions are the
// same either way. The fields and what the session does with them: docs/session-options.md.
//
// The summary hooks write files, so they run in hosted builds with the io layer (the macro
// HOOKFUSE_SESSION_SUMMARIES below says so); there a session made with SessionOptions needs
// <hookfuse/hooks/summary_saver_hook.hpp> (the umbrella header includes it), as SessionOptions<>
// needs io::Saver. Other builds keep the two slots empty.
#pragma once

#include <boost/hana/tuple.hpp>
#include <boost/hana/unpack.hpp>
#include <concepts>
#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>

#include "hookfuse/autodiff/summary.hpp"
#include "hookfuse/clock.hpp"
#include "hookfuse/config.hpp"
#include "hookfuse/errors.hpp"
#include "hookfuse/hooks/checkpoint_saver.hpp"
#include "hookfuse/hooks/checkpoint_saver_hook.hpp"
#include "hookfuse/hooks/checkpoint_variables.hpp"
#include "hookfuse/hooks/step_counter_hook.hpp"
#include "hookfuse/hooks/timer.hpp"
#include "hookfuse/logging.hpp"
#include "hookfuse/session/conditional_hook.hpp"

#if !defined(HOOKFUSE_CORE_ONLY) && !defined(HOOKFUSE_NO_EXCEPTIONS) && !defined(HOOKFUSE_EMBEDDED)
/// Defined where sessions install TensorFlow's default summary hooks (see the file comment).
#define HOOKFUSE_SESSION_SUMMARIES 1
#endif

namespace hookfuse {

#ifdef HOOKFUSE_SESSION_SUMMARIES
template <class Summaries, Clock C>
class SummarySaverHook;  // hookfuse/hooks/summary_saver_hook.hpp
#endif

namespace detail {

/// A saver that cannot warm start: SessionOptions<S>::warm_start_from is then always empty.
struct NoWarmStart {};
template <class S>
struct warm_start_of {
  using type = NoWarmStart;
};
template <class S>
  requires requires { typename S::warm_start_type; }
struct warm_start_of<S> {
  using type = typename S::warm_start_type;
};
/// What SessionOptions<S>::warm_start_from holds: S::warm_start_type, or NoWarmStart.
template <class S>
using warm_start_t = typename warm_start_of<S>::type;

}  // namespace detail

/// Checkpoint and summary options of a MonitoredTrainingSession, under TensorFlow's argument
/// names and in their order (set them by name: `SessionOptions{.checkpoint_dir = "d",
/// .save_checkpoint_steps = 50}`). Every field's meaning, default and TensorFlow counterpart, and
/// what the session does with them: docs/session-options.md.
/// `Saver` is the saver type (DefaultSaver, io::Saver, unless given: SessionOptions<MySaver>{...});
/// SessionOptions<> therefore needs <hookfuse/io/saver.hpp> (hookfuse.hpp includes it in
/// non-core builds).
template <class Saver = DefaultSaver, Clock C = SteadyClock, Logger L = StderrLogger>
struct SessionOptions {
  bool is_chief = true;
  std::string checkpoint_dir{};
  std::optional<double> save_checkpoint_secs = std::nullopt;
  std::optional<std::int64_t> save_checkpoint_steps = std::nullopt;
  std::string summary_dir{};
  std::optional<std::int64_t> save_summaries_steps = std::nullopt;
  std::optional<double> save_summaries_secs = std::nullopt;
  std::int64_t log_step_count_steps = 100;
  std::optional<int> max_to_keep = std::nullopt;
  std::optional<io::RestoreFallback> restore_fallback = std::nullopt;
  std::optional<Saver> saver = std::nullopt;
  std::optional<detail::warm_start_t<Saver>> warm_start_from = std::nullopt;
  C clock = C{};
  L logger = L{};
  bool flush_denormals = true;
};

/// Hooks that run only in the chief (TF's chief_only_hooks): `chief_only_hooks(h1, std::ref(h2))`.
template <class... Hs>
struct ChiefOnlyHooks {
  boost::hana::tuple<Hs...> hooks;
};
template <class... Hs>
constexpr auto chief_only_hooks(Hs&&... hs) {
  return ChiefOnlyHooks<std::decay_t<Hs>...>{boost::hana::make_tuple(std::forward<Hs>(hs)...)};
}

namespace detail {

template <class T>
struct is_chief_only_hooks : std::false_type {};
template <class... Hs>
struct is_chief_only_hooks<ChiefOnlyHooks<Hs...>> : std::true_type {};

/// The summaries of a model (train op `T`, extras `E...`): every summary declared in its loss
/// and extras (TF's merge_all).
template <class T, class... E>
using model_summaries_t = summary::merge_all_t<decltype(std::declval<T&>().loss), E...>;

/// Position of the checkpoint saver hook's slot after `num_chief` chief-only hooks and the two
/// default summary hook slots.
template <std::size_t num_chief>
inline constexpr std::size_t checkpoint_slot_index = num_chief + 2;

/// What the SummarySaverHook slot holds in builds without event files: an empty hook (the slot
/// stays empty; it keeps session.hook<I>() positions the same in every build).
struct NoSummarySaverHook {
  void begin() {}
};

/// The hook list of a session made with options, for the train op T and extras E...: chief-only
/// hooks, the StepCounterHook, the SummarySaverHook, the checkpoint saver hook, the user's hooks.
template <class Options, class Chief, class User, class T, class... E>
struct session_hooks;
template <class Saver, class C, class L, class... Cs, class... Us, class T, class... E>
struct session_hooks<SessionOptions<Saver, C, L>, ChiefOnlyHooks<Cs...>, boost::hana::tuple<Us...>,
                     T, E...> {
  using checkpoint_hook = CheckpointSaverHook<Saver, boost::hana::tuple<>, C, L>;
  using step_counter_hook = StepCounterHook<C, L>;
#ifdef HOOKFUSE_SESSION_SUMMARIES
  using summaries = model_summaries_t<T, E...>;
  using summary_hook = SummarySaverHook<summaries, C>;
  static_assert(
      requires { sizeof(typename dependent<T, summary_hook>::type); },
      "hookfuse: a session made with SessionOptions installs TensorFlow's default "
      "SummarySaverHook: #include <hookfuse/hooks/summary_saver_hook.hpp> (or "
      "<hookfuse/hookfuse.hpp>)");
#else
  using summary_hook = NoSummarySaverHook;
#endif
  using type =
      boost::hana::tuple<ConditionalHook<Cs>..., ConditionalHook<step_counter_hook>,
                         ConditionalHook<summary_hook>, ConditionalHook<checkpoint_hook>, Us...>;
  /// Position of the checkpoint saver hook's slot.
  static constexpr std::size_t checkpoint_index = checkpoint_slot_index<sizeof...(Cs)>;
};
template <class Options, class Chief, class User, class T, class... E>
using session_hooks_t = typename session_hooks<Options, Chief, User, T, E...>::type;

/// The saver of `o`: the one given, or one made from max_to_keep.
template <class Saver, class C, class L>
Saver take_saver(SessionOptions<Saver, C, L>& o) {
  if (o.saver) {
    if (o.max_to_keep)
      detail::fail<ValueError>(
          "hookfuse: SessionOptions: max_to_keep is for the saver the session makes; a given "
          "saver keeps its own (set max_to_keep where the saver is made)");
    if (o.restore_fallback)
      detail::fail<ValueError>(
          "hookfuse: SessionOptions: restore_fallback is for the saver the session makes; a "
          "given saver keeps its own (set restore_fallback where the saver is made)");
    Saver s = std::move(*o.saver);
    o.saver.reset();
    return s;
  }
  if constexpr (std::constructible_from<Saver, SaverOptions>) {
    return Saver(
        SaverOptions{.max_to_keep = o.max_to_keep.value_or(5),
                     .restore_fallback = o.restore_fallback.value_or(io::RestoreFallback::none)});
  } else {
    detail::fail<ValueError>(
        "hookfuse: SessionOptions: no saver given, and this saver type cannot be made from "
        "SaverOptions: give one in SessionOptions::saver");
  }
}

/// A default hook's cadence: every that many seconds (first) or global steps (second).
using Cadence = std::pair<std::optional<double>, std::optional<std::int64_t>>;

/// TensorFlow's choice of a default hook's cadence (MonitoredTrainingSession): the seconds and
/// steps given, `fallback` when neither is (both USE_DEFAULT); none, for no hook, when the hook
/// is not `installed` (a non-chief, no directory) or the chosen cadence is <= 0.
inline std::optional<Cadence> choose_cadence(bool installed,
                                             const std::optional<double>& given_secs,
                                             const std::optional<std::int64_t>& given_steps,
                                             const Cadence& fallback) {
  // Element by element: copying the optionals whole trips GCC 12's -Wmaybe-uninitialized.
  std::optional<double> secs;
  std::optional<std::int64_t> steps;
  if (given_secs.has_value()) secs = given_secs.value();
  if (given_steps.has_value()) steps = given_steps.value();
  if (!secs && !steps) {
    if (fallback.first.has_value()) secs = fallback.first.value();
    if (fallback.second.has_value()) steps = fallback.second.value();
  }
  if (!installed) return std::nullopt;
  if (!((secs && *secs > 0) || (steps && *steps > 0))) return std::nullopt;
  return Cadence{secs, steps};
}

/// TensorFlow's choice of checkpoint cadence (default every 600 s): (secs, steps) for the hook,
/// or none for no hook.
template <class O>
std::optional<Cadence> checkpoint_cadence(const O& o) {
  return choose_cadence(o.is_chief && !o.checkpoint_dir.empty(), o.save_checkpoint_secs,
                        o.save_checkpoint_steps, Cadence{600.0, std::nullopt});
}

/// TF's `summary_dir or checkpoint_dir`.
template <class O>
const std::string& summary_dir_of(const O& o) {
  return o.summary_dir.empty() ? o.checkpoint_dir : o.summary_dir;
}

/// TensorFlow's choice of summary cadence (default every 100 steps): (secs, steps) for the
/// SummarySaverHook, or none for no hook (a non-chief, no summary directory, a cadence <= 0).
template <class O>
std::optional<Cadence> summary_cadence(const O& o) {
  return choose_cadence(o.is_chief && !summary_dir_of(o).empty(), o.save_summaries_secs,
                        o.save_summaries_steps, Cadence{std::nullopt, 100});
}

/// Builds the session's hook tuple from the options, the chief-only and the user's hooks, for
/// the train op T and extras E... (whose summaries the default SummarySaverHook writes). The
/// default summary hooks' slots are left empty here: create_summary_hooks fills them once the
/// graph is bound, the warm start applied and the checkpoint restored, so that a session whose
/// creation fails before that leaves no event file. Their cadence is checked here
/// (std::invalid_argument when both save_summaries_steps and save_summaries_secs are given, TF's
/// ValueError), and in builds without event files an explicit summary_dir is a ValueError.
template <class T, class... E, class Saver, class C, class L, class... Cs, class... Us>
auto make_session_hooks(SessionOptions<Saver, C, L>& o, ChiefOnlyHooks<Cs...>&& chief,
                        boost::hana::tuple<Us...>&& user) {
  using H = session_hooks<SessionOptions<Saver, C, L>, ChiefOnlyHooks<Cs...>,
                          boost::hana::tuple<Us...>, T, E...>;
  if (const auto cadence = summary_cadence(o))
    (void)SecondOrStepTimer<C>(cadence->first, cadence->second, o.clock);  // throws if both
#ifndef HOOKFUSE_SESSION_SUMMARIES
  if (!o.summary_dir.empty())
    detail::fail<ValueError>(
        "hookfuse: SessionOptions::summary_dir: this build writes no event files "
        "(HOOKFUSE_CORE_ONLY, HOOKFUSE_NO_EXCEPTIONS or HOOKFUSE_EMBEDDED); leave it empty");
#endif
  ConditionalHook<typename H::checkpoint_hook> saver_hook;
  if (const auto cadence = checkpoint_cadence(o)) {
    saver_hook.emplace(o.checkpoint_dir,
                       typename H::checkpoint_hook::Options{.save_secs = cadence->first,
                                                            .save_steps = cadence->second},
                       take_saver(o), boost::hana::tuple<>{}, o.clock, o.logger);
  }
  const bool is_chief = o.is_chief;
  return boost::hana::unpack(std::move(chief.hooks), [&](auto&&... cs) {
    return boost::hana::unpack(std::move(user), [&](auto&&... us) {
      return typename H::type{ConditionalHook<Cs>(std::move(cs), is_chief)...,
                              ConditionalHook<typename H::step_counter_hook>{},
                              ConditionalHook<typename H::summary_hook>{}, std::move(saver_hook),
                              std::move(us)...};
    });
  });
}

#ifdef HOOKFUSE_SESSION_SUMMARIES
/// The summaries a SummarySaverHook type writes.
template <class Hook>
struct summaries_of;
template <class S, class C>
struct summaries_of<SummarySaverHook<S, C>> {
  using type = S;
};
#endif

/// Creates the default summary hooks of a chief with a summary directory in their slots (after
/// the `num_chief` chief-only hooks) of the session's `hooks`, in TF's order: the
/// StepCounterHook (every log_step_count_steps, "global_step/sec"), then the SummarySaverHook,
/// both into the directory's one shared writer (io::SummaryWriterCache), whose file this opens.
/// Called by the session after binding, the warm start and the restore; a new hook is as its
/// begin() leaves it, so neither misses that event. Does nothing in builds without event
/// files (their slots stay empty).
template <std::size_t num_chief, class Hooks, class Saver, class C, class L>
void create_summary_hooks(Hooks& hooks, const SessionOptions<Saver, C, L>& o) {
#ifdef HOOKFUSE_SESSION_SUMMARIES
  if (!o.is_chief || summary_dir_of(o).empty()) return;
  auto& step_slot = boost::hana::at_c<num_chief>(hooks);
  auto& summary_slot = boost::hana::at_c<num_chief + 1>(hooks);
  using StepCounter = typename std::remove_cvref_t<decltype(step_slot)>::hook_type;
  using SummaryHook = typename std::remove_cvref_t<decltype(summary_slot)>::hook_type;
  if (o.log_step_count_steps > 0)
    step_slot.emplace(typename StepCounter::Options{.every_n_steps = o.log_step_count_steps,
                                                    .output_dir = summary_dir_of(o)},
                      o.clock, o.logger);
  if (const auto cadence = summary_cadence(o))
    summary_slot.emplace(typename SummaryHook::Options{.save_steps = cadence->second,
                                                       .save_secs = cadence->first,
                                                       .output_dir = summary_dir_of(o)},
                         typename summaries_of<SummaryHook>::type{}, o.clock);
#else
  (void)hooks;
  (void)o;
#endif
}

/// The restore of a session with a checkpoint_dir (TF: ChiefSessionCreator's
/// SessionManager.prepare_session): the latest checkpoint into `vars`, through the saver hook's
/// saver (the one that saves next), or the options' saver when no hook saves (a non-chief, a
/// cadence <= 0); a saver that takes a logger gets the options' one. A non-chief restores too,
/// reading the chief's directory and writing nothing: its variables are its own, where
/// TensorFlow's workers share the chief's (on parameter servers) and wait for its restore.
/// Logs TensorFlow's INFO line "Restoring parameters from <prefix>" (Saver.restore's) through
/// the options' logger when a checkpoint was restored. Returns whether one was restored.
template <class Slot, class Saver, class C, class L>
bool restore_latest(Slot& checkpoint_slot, SessionOptions<Saver, C, L>& o, VariableList vars) {
  if (o.checkpoint_dir.empty()) return false;
  auto restore_with = [&](auto& saver) -> std::optional<std::string> {
    if constexpr (requires { saver.restore_latest(vars, o.checkpoint_dir, o.logger); })
      return saver.restore_latest(vars, o.checkpoint_dir, o.logger);
    else
      return saver.restore_latest(vars, o.checkpoint_dir);
  };
  std::optional<std::string> restored;
  if (auto* hook = checkpoint_slot.get_if()) {
    restored = restore_with(hook->saver());
  } else {
    Saver saver = take_saver(o);
    restored = restore_with(saver);
  }
  if (restored) o.logger.log(Severity::info, "Restoring parameters from " + *restored);
  return restored.has_value();
}

/// The warm start of `o` into the model's variables of `vars`, when one is given (before
/// restore_latest).
template <class Saver, class C, class L>
void warm_start(SessionOptions<Saver, C, L>& o, VariableList vars) {
  if constexpr (!std::is_same_v<warm_start_t<Saver>, NoWarmStart>) {
    if (o.warm_start_from) o.warm_start_from->apply(warm_start_variables(vars), o.logger);
  }
}

}  // namespace detail
}  // namespace hookfuse
