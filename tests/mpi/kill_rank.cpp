// tests/mpi/kill_rank.cpp: a small data-parallel training job for the kill-one-rank test
// (tests/mpi/kill_rank.sh, ctest mpi.kill_rank), run as
//
//     mpirun -np 2 mpi_kill_rank DIR MAX_STEPS KILL_AT
//
// Every rank trains y = x W + b (3 -> 1, mean squared error, SGD) on 4 rows of its own, with
// the hooks of a data-parallel job: BroadcastGlobalVariablesHook, AverageGradientsHook,
// StopAtStepHook(last_step = MAX_STEPS), DivergenceCheckHook every 5 steps and SyncStopHook. Rank
// 0 is the chief and saves a checkpoint to DIR every 5 steps; every rank restores from DIR.
//
// Fault injection: in a run that starts from step 0 (no checkpoint in DIR), rank 1 raises
// SIGKILL on itself when its global step reaches KILL_AT (0: never), between two runs, while
// rank 0 goes on into the next step's MPI_Allreduce. A restart of the same command starts from
// the chief's checkpoint and so is not killed.
//
// As Estimator.train with max_steps: when DIR's latest checkpoint is at MAX_STEPS or past it,
// every rank prints "skipping training" and exits 0 without creating a session.
//
// Every rank prints (stdout, line by line):
//   rank R: restored <true|false>, starts at global_step G     after the session is created
//   rank R: ends at global_step G                                after training
//   rank R: skipping training since max_steps has already saved (global_step G)
// Exit status: 0; 2 for bad arguments.
#include <array>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include <hookfuse/distributed/average_gradients_hook.hpp>
#include <hookfuse/distributed/broadcast_global_variables_hook.hpp>
#include <hookfuse/distributed/communicator.hpp>
#include <hookfuse/distributed/divergence_check_hook.hpp>
#include <hookfuse/distributed/sync_stop_hook.hpp>
#include <hookfuse/hookfuse.hpp>
#include <hookfuse/io/checkpoint_reader.hpp>

namespace hf = hookfuse;
namespace hd = hookfuse::distributed;

namespace {

/// y = x W + b, 3 -> 1, loss the mean squared error over the batch.
struct Linear {
  hf::Placeholder<"x", float, 3> x;
  hf::Placeholder<"y", float, 1> y;
  hf::Variable<"W", float, 3, 1> W;
  hf::Variable<"b", float, 1, 1, 1> b;
  hf::GlobalStep gs;
  Linear() {
    W.value << 0.1f, -0.2f, 0.3f;
    b.value(0, 0) = 0.05f;
  }
  auto loss() { return hf::named<"loss">(hf::mean_squared_error(y, hf::matmul(x, W) + b)); }
};

/// The global step of DIR's latest checkpoint, 0 without one (TF's
/// _load_global_step_from_checkpoint_dir, what Estimator.train compares max_steps with).
std::int64_t checkpoint_step(const std::string& dir) {
  const auto latest = hf::io::latest_checkpoint(std::filesystem::path(dir));
  if (!latest) return 0;
  const hf::io::CheckpointReader reader(*latest);
  const auto v = reader.get_tensor<std::int64_t>("global_step");
  return v.empty() ? 0 : v[0];
}

bool parse(const char* text, std::int64_t& out) {
  char* end = nullptr;
  const long long v = std::strtoll(text, &end, 10);
  if (end == text || *end != '\0' || v < 0) return false;
  out = v;
  return true;
}

using QuietOptions = hf::SessionOptions<hf::DefaultSaver, hf::SteadyClock, hf::NullLogger>;

}  // namespace

int main(int argc, char** argv) {
  hd::MpiEnvironment mpi(argc, argv);
  hd::Communicator comm;
  std::int64_t max_steps = 0, kill_at = 0;
  if (argc != 4 || !parse(argv[2], max_steps) || !parse(argv[3], kill_at) || max_steps == 0) {
    std::fprintf(stderr,
                 "usage: mpi_kill_rank DIR MAX_STEPS KILL_AT (MAX_STEPS > 0, KILL_AT >= 0)\n");
    return 2;
  }
  const std::string dir = argv[1];
  const int rank = comm.rank();

  const std::int64_t saved = checkpoint_step(dir);
  if (saved >= max_steps) {
    std::printf("rank %d: skipping training since max_steps has already saved (global_step %lld)\n",
                rank, static_cast<long long>(saved));
    std::fflush(stdout);
    return 0;
  }

  Linear m;
  std::array<float, 12> x{};
  std::array<float, 4> y{};
  for (int r = 0; r < 4; ++r) {  // rank R's rows: x = (r + 4 R, 1, -r) / 8, y = 1 - r / 4
    const auto i = static_cast<std::size_t>(r);
    x[3 * i] = static_cast<float>(r + 4 * rank) / 8.0f;
    x[3 * i + 1] = 0.125f;
    x[3 * i + 2] = -static_cast<float>(r) / 8.0f;
    y[i] = 1.0f - static_cast<float>(r) / 4.0f;
  }
  hf::MonitoredTrainingSession session(
      hf::GradientDescentOptimizer(0.1).minimize(m.loss(), m.gs), hf::caller_feeds(4),
      QuietOptions{.is_chief = rank == 0, .checkpoint_dir = dir, .save_checkpoint_steps = 5},
      hf::hooks(hd::BroadcastGlobalVariablesHook(comm), hd::AverageGradientsHook(comm),
                hf::StopAtStepHook({.last_step = max_steps}),
                hd::DivergenceCheckHook(comm, {.every_n_steps = 5}), hd::SyncStopHook(comm)));
  const bool restored = session.restored_from_checkpoint();
  std::printf("rank %d: restored %s, starts at global_step %lld\n", rank,
              restored ? "true" : "false", static_cast<long long>(m.gs.value));
  std::fflush(stdout);
  const bool inject = rank == 1 && kill_at > 0 && m.gs.value == 0;
  while (!session.should_stop()) {
    if (inject && m.gs.value == kill_at) std::raise(SIGKILL);
    session.run(hf::feed<"x">(x.data(), 4, 3), hf::feed<"y">(y.data(), 4, 1));
  }
  session.close();
  std::printf("rank %d: ends at global_step %lld\n", rank, static_cast<long long>(m.gs.value));
  std::fflush(stdout);
  return 0;
}
