// hookfuse/hooks/profiler_hook.hpp: ProfilerHook (tf.compat.v1.train.ProfilerHook): the phases
// of a training step as a Chrome trace, timeline-<step>.json.
//
// Writes JSON files with nlohmann-json and <filesystem>, so it is not a core header
// (hookfuse/hookfuse.hpp leaves it out, as core-only and embedded builds do). Include it where a
// session is profiled. The timing itself is the session's (hooks/step_timeline.hpp).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>

#include "hookfuse/clock.hpp"
#include "hookfuse/detail/format.hpp"
#include "hookfuse/hooks/session_run_hook.hpp"
#include "hookfuse/hooks/step_timeline.hpp"
#include "hookfuse/hooks/timer.hpp"
#include "hookfuse/io/atomic_file.hpp"
#include "hookfuse/io/errors.hpp"
#include "hookfuse/logging.hpp"

namespace hookfuse {
namespace detail {

/// The trace of one step in the Chrome trace event format (JSON object form), as chrome://tracing
/// and Perfetto open it: metadata events naming the process ("hookfuse") and the thread
/// ("MonitoredTrainingSession.run"), a complete event ("ph": "X") "step" covering the step, then
/// one complete event per phase in step order. ts and dur are microseconds (doubles, whole
/// nanoseconds) from the start of the step; pid and tid are 1. A phase whose clock went backwards
/// gets dur 0.
inline nlohmann::json chrome_trace(const StepTimeline& t) {
  using nlohmann::json;
  constexpr int pid = 1;
  constexpr int tid = 1;
  const double origin = t.marks.empty() ? 0.0 : t.marks.front();
  // Whole nanoseconds from the origin, so that ts and dur print short and the phases tile the
  // step exactly (dur = the difference of two integers).
  auto nanos = [origin](double secs) { return std::llround((secs - origin) * 1e9); };
  auto micros = [&nanos](double secs) { return static_cast<double>(nanos(secs)) / 1e3; };
  auto span_micros = [&nanos](double from, double to) {
    const long long d = nanos(to) - nanos(from);
    return d > 0 ? static_cast<double>(d) / 1e3 : 0.0;
  };
  json events = json::array();
  events.push_back({{"name", "process_name"},
                    {"ph", "M"},
                    {"pid", pid},
                    {"tid", tid},
                    {"args", {{"name", "hookfuse"}}}});
  events.push_back({{"name", "thread_name"},
                    {"ph", "M"},
                    {"pid", pid},
                    {"tid", tid},
                    {"args", {{"name", "MonitoredTrainingSession.run"}}}});
  if (!t.marks.empty()) {
    events.push_back({{"name", "step"},
                      {"cat", "step"},
                      {"ph", "X"},
                      {"ts", 0.0},
                      {"dur", span_micros(origin, t.marks.back())},
                      {"pid", pid},
                      {"tid", tid},
                      {"args", {{"global_step", t.global_step}}}});
  }
  // marks holds one reading more than there are phases; a shorter span (never produced by the
  // session) is read only as far as it goes.
  const std::size_t n = t.marks.size() < 1 ? 0 : std::min(t.phases.size(), t.marks.size() - 1);
  for (std::size_t i = 0; i < n; ++i) {
    const StepPhaseInfo& p = t.phases[i];
    const std::string phase(phase_name(p.phase));
    json e = {{"name", phase},
              {"cat", phase},
              {"ph", "X"},
              {"ts", micros(t.start(i))},
              {"dur", span_micros(t.start(i), t.marks[i + 1])},
              {"pid", pid},
              {"tid", tid}};
    if (p.phase == StepPhase::before_run || p.phase == StepPhase::after_run) {
      e["name"] = phase + "[" + std::to_string(p.hook_index) + "] " + std::string(p.hook);
      e["args"] = {{"hook_index", p.hook_index}, {"hook", std::string(p.hook)}};
    }
    events.push_back(std::move(e));
  }
  return {{"traceEvents", std::move(events)},
          {"displayTimeUnit", "ms"},
          {"otherData",
           {{"producer", "hookfuse ProfilerHook"},
            {"global_step", t.global_step},
            {"clock_origin_secs", origin}}}};
}

}  // namespace detail

/// Writes the phases of a training step as a Chrome trace (`timeline-<global step>.json` in
/// `output_dir`) every `save_steps` global steps or every `save_secs` seconds, as TensorFlow's
/// tf.compat.v1.train.ProfilerHook(save_steps, save_secs, output_dir):
///
///     MonitoredTrainingSession session(train_op, input,
///         hooks(ProfilerHook({.save_steps = 100, .output_dir = "runs/mlp"}), ...));
///
/// The file holds one complete event per phase of the fused step (detail::chrome_trace): every
/// hook's before_run ("before_run[<hook index>] <hook type>"), input, forward, backward (with
/// the fused updates), fetches, unfused_update, every hook's after_run; ts and dur in
/// microseconds from the step's start, read from `clock`. Open it in chrome://tracing or
/// https://ui.perfetto.dev.
///
/// Cadence (TF's code, basic_session_run_hooks.py): the first run of a session is never traced;
/// its after_run starts the timer at the global step before that run. A later run is traced
/// when the timer fires for the global step that run ends on, and the file is named with that
/// step. So save_steps = 2 from global step 0 writes timeline-2.json, timeline-4.json, ...
/// (TF's test: runs 2 and 4 save, 1, 3 and 5 do not), and save_steps = 100 writes at 100, 200,
/// ... . The decision is taken at the start of the step, before the first hook's before_run
/// (TF: in this hook's before_run, after the earlier hooks'), so that every before_run is in
/// the trace: the same steps for save_steps; for save_secs the clock is compared a few
/// microseconds earlier. begin() restarts the cadence as TF's does (the timer is not reset:
/// the first run re-bases it).
///
/// Cost: steps that are not traced read no clock and allocate nothing (one comparison per
/// step for save_steps); a traced step reads the clock once per phase, then builds and writes
/// the JSON after the last after_run (outside the timed phases). Logs "Saving timeline for
/// <step> into '<path>'." at INFO, as TF does. Not done (TF's RunMetadata has no counterpart):
/// TF's per-op device stats, show_dataflow / show_memory, and its RunMetadata event
/// "step_<step>" in output_dir's event file.
///
/// Errors: std::invalid_argument unless exactly one of save_steps and save_secs is given (TF:
/// ValueError); io::IoError when output_dir cannot be created (at construction: TF creates it
/// through its summary writer) or a file cannot be written (from the run that traces).
template <Clock C = SteadyClock, Logger L = StderrLogger>
class ProfilerHook {
 public:
  struct Options {
    std::optional<std::int64_t> save_steps = std::nullopt;
    std::optional<double> save_secs = std::nullopt;
    /// The directory of the timeline files; "" is the current directory (TF's default).
    std::string output_dir = {};
  };

  /// The session times the phases of a step for this hook (hooks/step_timeline.hpp).
  static constexpr bool wants_phase_timings = true;

  explicit ProfilerHook(Options options, C clock = C{}, L logger = L{})
      : timer_(options.save_secs, options.save_steps, clock),
        clock_(clock),
        logger_(logger),
        output_dir_(std::move(options.output_dir)) {
    if (!output_dir_.empty()) {
      std::error_code ec;
      std::filesystem::create_directories(output_dir_, ec);
      if (ec)
        io::detail::fail_os("ProfilerHook: cannot create output_dir", output_dir_, ec.value());
    }
  }

  /// Starts a session: its first run is not traced (TF: `_next_step = None`).
  void begin() {
    next_step_.reset();
    request_ = false;
  }

  /// At the start of every step (before any before_run): whether this step is traced, TF's
  /// `_next_step is not None and timer.should_trigger_for_step(_next_step)`.
  bool should_time_step(const SessionRunContext& ctx) {
    stale_step_ = ctx.global_step();
    request_ = next_step_.has_value() && timer_.should_trigger_for_step(*next_step_);
    return request_;
  }

  /// The hook's clock, seconds (what the session times the phases with).
  double now() { return static_cast<double>(clock_.now()); }

  void after_run(SessionRunContext& ctx, const SessionRunValues<>&) {
    // TF: the first run only starts the timer, at the global step before it.
    if (!next_step_) (void)timer_.update_last_triggered_step(stale_step_);
    std::int64_t global_step = detail::saturating_add(stale_step_, ctx.global_step_increment());
    if (request_) {
      global_step = ctx.global_step();  // TF reads the global step again after the train op
      (void)timer_.update_last_triggered_step(global_step);
      save_step_ = global_step;
    }
    next_step_ = detail::saturating_add(global_step, ctx.global_step_increment());  // TF: + 1
  }

  /// After the last after_run of a timed step: writes timeline-<step>.json when this hook asked
  /// for the step (crash-safe: a temporary renamed into place).
  void after_timed_step(const StepTimeline& timeline) {
    if (!request_) return;
    request_ = false;
    const std::filesystem::path path =
        std::filesystem::path(output_dir_) / ("timeline-" + std::to_string(save_step_) + ".json");
    logger_.log(Severity::info, (detail::ErrorMessage() << "Saving timeline for " << save_step_
                                                        << " into '" << path.string() << "'.")
                                    .str());
    io::AtomicFileWriter out(path);
    out.write(detail::chrome_trace(timeline).dump());
    out.commit();
  }

  const std::string& output_dir() const { return output_dir_; }

 private:
  SecondOrStepTimer<C> timer_;
  C clock_;
  L logger_;
  std::string output_dir_;
  std::optional<std::int64_t> next_step_;
  std::int64_t stale_step_ = 0;
  std::int64_t save_step_ = 0;
  bool request_ = false;
};

}  // namespace hookfuse
