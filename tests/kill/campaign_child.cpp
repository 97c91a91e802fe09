// tests/kill/campaign_child.cpp: the training program of the kill campaign and of the fault
// injection (scripts/kill-campaign.sh, scripts/fault-injection.sh).
//
//   campaign_child DIR PHASE_FILE LAST_STEP
//
// Trains kill_model.hpp's network under MonitoredTrainingSession with
// SessionOptions{.checkpoint_dir = DIR, .save_checkpoint_steps = 1, .max_to_keep = 3} and a
// saver that records its phase (PhaseSaver), and writes one event per step to its own event
// file in DIR (EventHook: add_scalar("loss") and a flush after every run). PHASE_FILE ("-" for
// none) is the page campaign_phase.hpp describes, which the driver polls and reads after a kill.
//
// Its first line of output, once the session exists (restore, removal of what a killed process
// left, save at creation), is "restored <step> temporaries <n>" or "fresh 0 temporaries <n>":
// <n> counts the temporary files then in DIR, which a clean restart leaves none of.
// With CAMPAIGN_SHARDS=N (N >= 1) in the environment, the saver is TensorFlow's sharded one
// (SaverOptions{.sharded = true, .num_shards = N}: shards under "<prefix>_temp/", then merged).
// LAST_STEP 0: trains until its parent goes away (exit 0). LAST_STEP > 0: stops at that global
// step (StopAtStepHook), closes the session (final save) and the event file, exits 0. Any error:
// "campaign_child: <what>" on stderr, exit 2.
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <hookfuse/hookfuse.hpp>
#include <hookfuse/io/summary_writer.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "campaign_phase.hpp"
#include "kill_model.hpp"

namespace hf = hookfuse;

namespace {

hookfuse_test::SharedPhase* g_phase = nullptr;
hookfuse_test::SharedPhase g_unshared;  // when PHASE_FILE is "-"

/// io::Saver recording in the shared page when a save starts and ends.
class PhaseSaver : public hf::io::Saver {
 public:
  using hf::io::Saver::Saver;

  template <class Vars>
  std::string save(const Vars& vars, std::string_view save_path, std::int64_t global_step) {
    const auto before = g_phase->get();
    g_phase->saves.fetch_add(1, std::memory_order_relaxed);
    g_phase->set(hookfuse_test::Phase::save, global_step);
    const auto t0 = std::chrono::steady_clock::now();
    std::string prefix = hf::io::Saver::save(vars, save_path, global_step);
    g_phase->save_ns.store(
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0)
            .count(),
        std::memory_order_relaxed);
    g_phase->set(before == hookfuse_test::Phase::startup ? before : hookfuse_test::Phase::train,
                 global_step);
    return prefix;
  }
};

/// One scalar event per run, flushed at once: the event file grows by one record per step.
struct EventHook {
  hf::io::SummaryWriter* writer;

  hf::SessionRunArgs<"loss"> before_run(hf::SessionRunContext&) { return {}; }
  void after_run(hf::SessionRunContext& ctx, const hf::SessionRunValues<"loss">& v) {
    g_phase->events.fetch_add(1, std::memory_order_relaxed);
    g_phase->set(hookfuse_test::Phase::event, ctx.global_step());
    writer->add_scalar("loss", v.get<"loss">().item(), ctx.global_step());
    writer->flush();
    g_phase->set(hookfuse_test::Phase::train, ctx.global_step());
  }
};

int count_temporaries(const std::filesystem::path& dir) {
  int n = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    if (name.find(".tempstate") != std::string::npos || name.find(".tmp-") != std::string::npos ||
        name.ends_with("_temp"))
      ++n;
  }
  return n;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: campaign_child DIR PHASE_FILE LAST_STEP\n");
    return 2;
  }
  const pid_t parent = ::getppid();
  if (std::strcmp(argv[2], "-") == 0) {
    g_phase = &g_unshared;
  } else if ((g_phase = hookfuse_test::map_phase(argv[2])) == nullptr) {
    std::fprintf(stderr, "campaign_child: cannot map %s: %s\n", argv[2], std::strerror(errno));
    return 2;
  }
  g_phase->saves.store(0);
  g_phase->events.store(0);
  g_phase->set(hookfuse_test::Phase::startup, -1);
  const std::int64_t last_step = std::atoll(argv[3]);
  try {
    hookfuse_test::KillModel model;
    hf::io::SummaryWriter writer(
        argv[1], hf::io::SummaryWriterOptions{.max_queue = 1000, .flush_secs = 1e9});
    std::optional<std::int64_t> final_step;
    hf::SessionOptions<PhaseSaver, hf::SteadyClock, hf::NullLogger> options{
        .checkpoint_dir = argv[1],
        .save_checkpoint_steps = 1,
        .save_summaries_steps = 0,
        .log_step_count_steps = 0};
    const char* shards = std::getenv("CAMPAIGN_SHARDS");
    if (shards != nullptr && std::atoi(shards) >= 1) {
      options.saver = PhaseSaver(
          hf::SaverOptions{.max_to_keep = 3, .sharded = true, .num_shards = std::atoi(shards)});
    } else {
      options.max_to_keep = 3;
    }
    {
      hf::MonitoredTrainingSession session(
          model.train_op(), hookfuse_test::KillInput{&model.global_step}, std::move(options),
          hf::hooks(EventHook{&writer},
                    hf::StopAtStepHook({.last_step = last_step > 0 ? last_step : INT64_MAX})));
      std::printf("%s %lld temporaries %d\n",
                  session.restored_from_checkpoint() ? "restored" : "fresh",
                  static_cast<long long>(session.global_step()), count_temporaries(argv[1]));
      std::fflush(stdout);
      g_phase->set(hookfuse_test::Phase::train, session.global_step());
      while (!session.should_stop() && (last_step > 0 || ::getppid() == parent)) session.run();
      session.close();
      final_step = session.global_step();
    }
    writer.close();
    g_phase->set(hookfuse_test::Phase::done, final_step.value_or(-1));
    if (last_step > 0) std::printf("stopped %lld\n", static_cast<long long>(*final_step));
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "campaign_child: %s\n", e.what());
    return 2;
  }
}
