// hookfuse/hookfuse.hpp: the umbrella header: everything in hookfuse.
//
// In hosted builds it also includes the checkpoint layer (hookfuse/io/saver.hpp,
// init_from_checkpoint.hpp and VariableInitializationHook) and SummarySaverHook, which need
// LevelDB and protozero: SessionOptions<> saves with io::Saver and installs TensorFlow's default
// summary hooks. Core-only builds (CMake's HOOKFUSE_CORE_ONLY, which
// defines the macro of that name) and builds without exceptions (HOOKFUSE_NO_EXCEPTIONS,
// HOOKFUSE_EMBEDDED) leave it out, and the Estimator (hookfuse/estimator/) with it; their
// sessions with checkpoint options name their own saver.
#pragma once

// First: hookfuse's compile errors (detail/compile_error.hpp) then come with the shortest
// include chain ("In file included from hookfuse.hpp, from <your file>").
#include "hookfuse/detail/compile_error.hpp"

#include "hookfuse/autodiff.hpp"
#include "hookfuse/autodiff/feeds.hpp"
#include "hookfuse/clock.hpp"
#include "hookfuse/config.hpp"
#include "hookfuse/fixed_string.hpp"
#include "hookfuse/hooks/checkpoint_saver.hpp"
#include "hookfuse/hooks/checkpoint_saver_hook.hpp"
#include "hookfuse/hooks/checkpoint_variables.hpp"
#include "hookfuse/hooks/concepts.hpp"
#include "hookfuse/hooks/device_checkpoint.hpp"
#include "hookfuse/hooks/early_stopping_hook.hpp"
#include "hookfuse/hooks/feed_fn_hook.hpp"
#include "hookfuse/hooks/gradient_clip_hooks.hpp"
#include "hookfuse/hooks/learning_rate_scheduler_hook.hpp"
#include "hookfuse/hooks/logging_tensor_hook.hpp"
#include "hookfuse/hooks/monitor_mode.hpp"
#include "hookfuse/hooks/nan_tensor_hook.hpp"
#include "hookfuse/hooks/reduce_lr_on_plateau_hook.hpp"
#include "hookfuse/hooks/resumable_state.hpp"
#include "hookfuse/hooks/session_run_hook.hpp"
#include "hookfuse/hooks/step_counter_hook.hpp"
#include "hookfuse/hooks/step_timeline.hpp"
#include "hookfuse/hooks/stop_at_step_hook.hpp"
#include "hookfuse/hooks/terminate_on_non_finite_hook.hpp"
#include "hookfuse/hooks/timer.hpp"
#include "hookfuse/hooks/timer_stop_hook.hpp"
#include "hookfuse/logging.hpp"
#include "hookfuse/nn/dense.hpp"
#include "hookfuse/nn/initializers.hpp"
#include "hookfuse/optim/adagrad.hpp"
#include "hookfuse/optim/adam.hpp"
#include "hookfuse/optim/global_step.hpp"
#include "hookfuse/optim/gradient_descent.hpp"
#include "hookfuse/optim/learning_rate_ref.hpp"
#include "hookfuse/optim/momentum.hpp"
#include "hookfuse/optim/optimizer.hpp"
#include "hookfuse/optim/rmsprop.hpp"
#include "hookfuse/optim/schedules.hpp"
#include "hookfuse/session/conditional_hook.hpp"
#include "hookfuse/session/evaluation_session.hpp"
#include "hookfuse/session/gradient_event.hpp"
#include "hookfuse/session/hook_calls.hpp"
#include "hookfuse/session/hook_state.hpp"
#include "hookfuse/session/monitored_session.hpp"
#include "hookfuse/session/optimizer_slots.hpp"
#include "hookfuse/session/session_interface.hpp"
#include "hookfuse/session/session_options.hpp"

// Hosted, but no dependency beyond the standard library (CSVLoggerHook and io::CsvWriter write
// with stdio, ProgressBarHook to a std::ostream, the metrics' AUC and MeanPerClassAccuracy hold
// std::vectors): left out of embedded builds only.
#if !defined(HOOKFUSE_EMBEDDED) && !defined(HOOKFUSE_NO_EXCEPTIONS)
#include "hookfuse/hooks/csv_logger_hook.hpp"
#include "hookfuse/hooks/final_ops_hook.hpp"
#include "hookfuse/hooks/global_step_waiter_hook.hpp"
#include "hookfuse/hooks/progress_bar_hook.hpp"
#include "hookfuse/io/csv_writer.hpp"
#include "hookfuse/metrics.hpp"
#endif

#if !defined(HOOKFUSE_CORE_ONLY) && !defined(HOOKFUSE_NO_EXCEPTIONS)
#include "hookfuse/estimator/estimator.hpp"
#include "hookfuse/estimator/exporter.hpp"
#include "hookfuse/estimator/train_spec.hpp"
#include "hookfuse/estimator/training.hpp"
#include "hookfuse/hooks/summary_saver_hook.hpp"
#include "hookfuse/hooks/variable_initialization_hook.hpp"
#include "hookfuse/io/checkpoint_manager.hpp"
#include "hookfuse/io/init_from_checkpoint.hpp"
#include "hookfuse/io/saver.hpp"
#endif
