// hookfuse/hooks/summary_saver_hook.hpp: SummarySaverHook (tf.compat.v1.train.SummarySaverHook).
//
// Writes event files, so it is not a core header (hookfuse/hookfuse.hpp leaves it out; it needs
// the io/ layer: protozero, <filesystem>). Include it where a session writes summaries.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <stdexcept>
#include <utility>
#include <vector>

#include "hookfuse/autodiff/summary.hpp"
#include "hookfuse/clock.hpp"
#include "hookfuse/config.hpp"
#include "hookfuse/detail/format.hpp"
#include "hookfuse/errors.hpp"
#include "hookfuse/hooks/session_run_hook.hpp"
#include "hookfuse/hooks/summary_writer_ref.hpp"
#include "hookfuse/hooks/timer.hpp"
#include "hookfuse/io/event.hpp"
#include "hookfuse/io/histogram.hpp"
#include "hookfuse/io/summary_proto.hpp"
#include "hookfuse/io/summary_writer.hpp"
#include "hookfuse/io/summary_writer_cache.hpp"

namespace hookfuse {

template <class Summaries, Clock C = SteadyClock>
class SummarySaverHook;

/// Saves the model's summaries (summary::merge(...), autodiff/summary.hpp) every `save_steps`
/// global steps or every `save_secs` seconds, as TensorFlow's SummarySaverHook:
///
///     SummarySaverHook({.save_steps = 100, .output_dir = "runs/mlp"}, summary::merge(
///         summary::scalar<"loss">(loss), summary::histogram<"dense/kernel">(dense.kernel)))
///
/// Cadence (TF's code): the first run of a session always writes; then a run writes when the
/// timer fires for the global step that run will end on. Events are stamped with the global step
/// after the run (TF reads the global step again after the train op), so with save_steps = 8
/// from global step 0 the summaries are at steps 1, 9, 17, 25, ..., and their values are those
/// of the run that ends there (the forward pass of the run that moved the step from 0 to 1, 8 to
/// 9, ...). The first run of a session also writes SessionLog{START} at its step (after a
/// restore from step N: N + 1, then summaries at N + 1, N + 9, ...). With a train op that adds 2
/// per run (TrainOp::global_step_increment), "the step the run will end on" is the step before it
/// plus 2: save_steps = 8 from step 0 writes at steps 2, 10, 18, ... (every 4th run). One event per firing holds
/// every summary, in list order (TF's merged summary op); scalars in the writer's ScalarForm,
/// histograms over TF's default buckets. end() flushes the writer.
///
/// A run that does not train (session.run(no_train), run_context.trains() false) counts as TF
/// counts it: a firing one writes that run's values at the current global step (and restarts
/// the cadence there); a quiet one takes the step it ends on to be the one before it plus the
/// increment (TF's `stale_global_step + 1`), so the next run checks the trigger one step ahead:
/// with save_steps = 4 and summaries at 1, 5, ..., a non-training run at step 3 moves the next
/// write to the training run that ends on step 4 (then 8, 12, ...). docs/hooks.md has the table.
///
/// The summaries' tensors are fetched only in runs where the hook fires: between firings the
/// hook asks for nothing, so a tensor outside the loss's graph is not computed and nothing is
/// allocated. Errors: std::invalid_argument unless exactly one of save_steps and save_secs is
/// given (TF: ValueError); ValueError when neither output_dir nor summary_writer is (TF leaves
/// such a hook silently idle, with a TODO to raise); a histogram of NaN or infinite values
/// throws ValueError from after_run ("Nan in summary histogram for: <tag>"), as TF's op fails
/// the run; a write error throws io::IoError.
template <class... Specs, Clock C>
class SummarySaverHook<summary::Merged<Specs...>, C> {
 public:
  struct Options {
    std::optional<std::int64_t> save_steps = std::nullopt;
    std::optional<double> save_secs = std::nullopt;
    /// The directory whose shared writer (io::SummaryWriterCache::get) gets the events.
    SummaryWriterRef output_dir = {};
    /// The writer that gets the events (wins over output_dir, as in TensorFlow).
    SummaryWriterRef summary_writer = {};
  };

  explicit SummarySaverHook(Options options, summary::Merged<Specs...> = {}, C clock = C{})
      : timer_(options.save_secs, options.save_steps, clock),
        writer_(options.summary_writer ? std::move(options.summary_writer)
                                       : std::move(options.output_dir)) {
    if (!writer_)
      detail::fail<ValueError>(
          "SummarySaverHook: neither output_dir nor summary_writer was given; expected one");
  }

  /// Starts a session: the next run writes SessionLog{START} and the summaries.
  void begin() {
    timer_.reset();
    next_step_.reset();
  }

  /// Requests the summaries' tensors when this run writes them (TF's `_request_summary`), and
  /// nothing otherwise. (TF also fetches the global step; here after_run reads it from the run
  /// context.)
  SessionRunArgs<Specs::name...> before_run(SessionRunContext&) {
    request_ = !next_step_ || timer_.should_trigger_for_step(*next_step_);
    return {request_};
  }

  void after_run(SessionRunContext& ctx, const SessionRunValues<Specs::name...>& values) {
    // TF: `global_step = stale_global_step + 1`, read again after the run
    // (`run_context.session.run(global_step_tensor)`) only in a session's first run and in a
    // run that writes. After a training run both are the step after it; after a run that does
    // not train (run(no_train): the global step stays put) the stale + 1 rule gives one step
    // past the current one, and so does the next run's trigger check (next_step_ below).
    std::int64_t global_step = ctx.global_step();
    if (!ctx.trains() && next_step_ && !request_)
      global_step = detail::saturating_add(global_step, ctx.global_step_increment());
    io::SummaryWriter& writer = *writer_.get();
    if (!next_step_) writer.add_session_log(io::SessionLog::START, global_step);
    if (request_) {
      (void)timer_.update_last_triggered_step(global_step);
      if constexpr (sizeof...(Specs) > 0)
        writer.add_summary(make_summary(values, writer), global_step);
    }
    // The step the next run will end on (TF: global_step + 1; here + the train op's increment).
    next_step_ = detail::saturating_add(global_step, ctx.global_step_increment());
  }

  /// Flushes the writer (TF's end()).
  template <class Session>
  void end(Session&) {
    writer_.get()->flush();
  }

  /// The writer the events go to.
  const SummaryWriterRef& summary_writer() const { return writer_; }
  /// The number of summaries written per firing.
  static constexpr std::size_t num_summaries = sizeof...(Specs);

 private:
  static io::Summary make_summary(const SessionRunValues<Specs::name...>& values,
                                  const io::SummaryWriter& writer) {
    io::Summary s;
    s.value.reserve(sizeof...(Specs));
    std::size_t i = 0;
    (s.value.push_back(make_value<Specs>(values.results[i++], writer.options().scalar_form)), ...);
    return s;
  }

  template <class Spec>
  static io::SummaryValue make_value(const TensorValue& t, io::ScalarForm form) {
    if constexpr (Spec::kind == summary::Kind::scalar) {
      if (t.size() != 1)
        detail::fail<ValueError>((detail::ErrorMessage()
                                  << "SummarySaverHook: scalar summary '" << Spec::tag.view()
                                  << "' of tensor '" << Spec::name.view() << "': the tensor is ["
                                  << static_cast<long long>(t.rows) << ", "
                                  << static_cast<long long>(t.cols) << "], expected [1, 1]")
                                     .str());
      return io::scalar_value(Spec::tag.view(), t.item(), form);
    } else {
      std::vector<double> xs;
      xs.reserve(static_cast<std::size_t>(t.size()));
      for (Eigen::Index r = 0; r < t.rows; ++r)
        for (Eigen::Index c = 0; c < t.cols; ++c) xs.push_back(t.at(r, c));
      return io::histogram_value(Spec::tag.view(), std::span<const double>(xs));
    }
  }

  SecondOrStepTimer<C> timer_;
  SummaryWriterRef writer_;
  std::optional<std::int64_t> next_step_;
  bool request_ = false;
};

template <class... Specs>
SummarySaverHook(typename SummarySaverHook<summary::Merged<Specs...>>::Options,
                 summary::Merged<Specs...>) -> SummarySaverHook<summary::Merged<Specs...>>;
template <class... Specs, Clock C>
SummarySaverHook(typename SummarySaverHook<summary::Merged<Specs...>, C>::Options,
                 summary::Merged<Specs...>, C) -> SummarySaverHook<summary::Merged<Specs...>, C>;

}  // namespace hookfuse
