// tests/mpi/estimator.cpp: the Estimator on 2 MPI ranks, run by ctest as `mpirun
// --allow-run-as-root --oversubscribe -np 2 mpi_estimator` (tests/CMakeLists.txt, with a
// timeout): RunConfig's chief notion from the communicator (with_replicas), so that rank 0 alone
// writes model_dir's checkpoints and event files and the eval directory, rank 1 restoring from
// the chief's checkpoint; evaluate on 2 shards reporting the metrics one process computes on
// the whole evaluation set.
//
// Every rank runs every test case (they are collective). Its own main(): MPI is initialised
// around Catch2's session.
#define CATCH_CONFIG_RUNNER
#include <stdlib.h>  // mkdtemp
#include <unistd.h>  // getpid

#include <array>
#include <catch2/catch.hpp>
#include <cstdint>
#include <filesystem>
#include <hookfuse/distributed/average_gradients_hook.hpp>
#include <hookfuse/distributed/broadcast_global_variables_hook.hpp>
#include <hookfuse/distributed/communicator.hpp>
#include <hookfuse/distributed/divergence_check_hook.hpp>
#include <hookfuse/distributed/sync_stop_hook.hpp>
#include <hookfuse/estimator/estimator.hpp>
#include <hookfuse/hookfuse.hpp>
#include <set>
#include <span>
#include <string>
#include <system_error>
#include <vector>

#include "../capturing_logger.hpp"
#include "../estimator_replica_model.hpp"
#include "mpi_test_main.hpp"

namespace hf = hookfuse;
namespace hd = hookfuse::distributed;
namespace fs = std::filesystem;
using hookfuse_test::CapturingLogger;
using hookfuse_test::Lines;
using namespace replica_model;  // F2, L2, classifier_fn, kFeatures, kLabels, by_hand

namespace {

using mpi_test::g_comm;  // MPI_COMM_WORLD (mpi_test_main.hpp)
using mpi_test::SharedDir;


/// The names of the files directly in `dir`.
std::set<std::string> names_in(const fs::path& dir) {
  std::set<std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) out.insert(e.path().filename().string());
  return out;
}

/// Every rank's pid, by rank.
std::array<std::int64_t, 2> pids() {
  std::array<std::int64_t, 2> p = {0, 0};
  p[static_cast<std::size_t>(g_comm->rank())] = static_cast<std::int64_t>(::getpid());
  g_comm->allreduce_sum(std::span<std::int64_t>(p));
  return p;
}

/// Event files (events.out.tfevents.<secs>.<host>.<pid>.<n>) in `names`, and whether each was
/// written by the process `pid`.
std::vector<std::string> event_files(const std::set<std::string>& names) {
  std::vector<std::string> out;
  for (const auto& n : names)
    if (n.starts_with("events.out.tfevents.")) out.push_back(n);
  return out;
}
bool written_by(const std::string& event_file, std::int64_t pid) {
  return event_file.find("." + std::to_string(pid) + ".") != std::string::npos;
}

using Config = hf::RunConfig<hf::FakeClock, CapturingLogger>;

/// This rank's half of every global batch of 4 (NumpyInputFnOptions::num_shards).
auto sharded_input(int epochs_or_forever) {
  const int rank = g_comm->rank();
  return hf::numpy_input_fn<F2, L2>(
      kFeatures, 8, kLabels,
      {.batch_size = 4,
       .num_epochs = epochs_or_forever > 0 ? std::optional<int>(epochs_or_forever) : std::nullopt,
       .shuffle = epochs_or_forever <= 0,
       .seed = 5,
       .num_shards = 2,
       .shard_index = rank});
}

bool logged(const Lines& lines, const std::string& part) {
  for (const auto& l : lines)
    if (l.text.find(part) != std::string::npos) return true;
  return false;
}

}  // namespace

TEST_CASE("mpi: an Estimator on 2 ranks writes model_dir on rank 0 only, rank 1 resumes from it",
          "[mpi][estimator]") {
  const hd::Communicator& comm = *g_comm;
  REQUIRE(comm.size() == 2);
  INFO("rank " << comm.rank());
  SharedDir shared;
  const fs::path& dir = shared.path;
  const auto pid = pids();
  Lines lines;
  hf::Estimator estimator(classifier_fn,
                          hf::with_replicas(Config{.model_dir = dir.string(),
                                                   .save_summary_steps = 2,
                                                   .save_checkpoints_steps = 5,
                                                   .log_step_count_steps = 1,
                                                   .logger = CapturingLogger{&lines}},
                                            comm));
  CHECK(estimator.config().is_chief == (comm.rank() == 0));
  CHECK(estimator.config().num_worker_replicas == 2);

  estimator.train(sharded_input(0), {.steps = 10},
                  hf::hooks(hd::BroadcastGlobalVariablesHook(comm), hd::AverageGradientsHook(comm),
                            hd::SyncStopHook(comm)));
  CHECK(logged(lines, ", step = 9"));
  comm.barrier();  // both trainings over: every file is written
  {
    const auto names = names_in(dir);
    const auto events = event_files(names);
    REQUIRE(events.size() == 1);
    CHECK(written_by(events[0], pid[0]));
    std::set<std::string> other;
    for (const auto& n : names)
      if (!n.starts_with("events.out.tfevents.")) other.insert(n);
    CHECK(other == std::set<std::string>{"checkpoint", "model.ckpt-0.data-00000-of-00001",
                                         "model.ckpt-0.index", "model.ckpt-10.data-00000-of-00001",
                                         "model.ckpt-10.index", "model.ckpt-5.data-00000-of-00001",
                                         "model.ckpt-5.index"});
  }
  comm.barrier();  // both listings done before rank 0 writes again

  // A second train call without the broadcast: each rank restores by itself, rank 1 from the
  // chief's model.ckpt-10. Equal variables on both ranks after every step (the divergence
  // check) show that rank 1 restored what rank 0 did.
  lines.clear();
  estimator.train(
      sharded_input(0), {.steps = 5},
      hf::hooks(hd::AverageGradientsHook(comm), hd::DivergenceCheckHook(comm, {.every_n_steps = 1}),
                hd::SyncStopHook(comm)));
  CHECK(logged(lines, ", step = 10"));  // the first step's global step: restored at 10
  CHECK(logged(lines, ", step = 14"));
  CHECK_FALSE(logged(lines, ", step = 0"));
  comm.barrier();
  const auto names = names_in(dir);
  CHECK(names.count("model.ckpt-15.index") == 1);
  for (const auto& e : event_files(names)) {
    INFO(e);
    CHECK(written_by(e, pid[0]));
    CHECK_FALSE(written_by(e, pid[1]));
  }
}

TEST_CASE("mpi: evaluate on 2 shards gives one process's metrics on the whole set",
          "[mpi][estimator]") {
  const hd::Communicator& comm = *g_comm;
  REQUIRE(comm.size() == 2);
  INFO("rank " << comm.rank());
  SharedDir shared;
  const fs::path& dir = shared.path;
  const auto pid = pids();
  Lines lines;
  hf::Estimator estimator(
      classifier_fn,
      hf::with_replicas(Config{.model_dir = dir.string(), .logger = CapturingLogger{&lines}},
                        comm));
  estimator.train(sharded_input(0), {.steps = 30},
                  hf::hooks(hd::BroadcastGlobalVariablesHook(comm), hd::AverageGradientsHook(comm),
                            hd::SyncStopHook(comm)));
  // No barrier: train returns on every rank once the chief's model.ckpt-30 is written.

  // One process on the whole set (a non-chief config: it writes nothing), on every rank.
  hf::Estimator whole(
      classifier_fn,
      Config{.model_dir = dir.string(), .is_chief = false, .logger = CapturingLogger{&lines}});
  const hf::EvalResult single = whole.evaluate(hf::numpy_input_fn<F2, L2>(
      kFeatures, 8, kLabels, {.batch_size = 4, .num_epochs = 1, .shuffle = false}));
  const auto reader = hf::io::load_checkpoint(dir / "model.ckpt-30");
  const ByHand hand =
      by_hand(reader.get_tensor<float>("dense/kernel"), reader.get_tensor<float>("dense/bias"));
  REQUIRE(hand.correct > 0);
  REQUIRE(hand.correct <= 6);
  CHECK(single.global_step == 30);
  CHECK(single.at("accuracy") == Approx(hand.correct / 8.0).epsilon(1e-6));
  CHECK(single.loss() == Approx(hand.loss).epsilon(1e-5));
  comm.barrier();
  CHECK_FALSE(fs::exists(dir / "eval"));

  // Each rank its half of each batch of 4: 2 batches of 2 rows.
  lines.clear();
  const hf::EvalResult r = estimator.evaluate(sharded_input(1));
  CHECK(r.global_step == 30);
  CHECK(r.at("accuracy") == single.at("accuracy"));  // counts: exact
  CHECK(r.at("auc") == single.at("auc"));
  CHECK(r.loss() == Approx(single.loss()).epsilon(1e-6));
  CHECK(r.metrics.size() == 3);
  CHECK(logged(lines, "Saving dict for global step 30: ") == (comm.rank() == 0));
  // Both ranks report the same numbers, bit for bit.
  std::vector<float> mine = {r.at("accuracy"), r.at("auc"), r.loss()};
  std::vector<float> root = mine;
  comm.broadcast(std::span<float>(root), 0);
  CHECK(mine == root);

  comm.barrier();  // both evaluations over
  REQUIRE(fs::is_directory(dir / "eval"));
  const auto events = event_files(names_in(dir / "eval"));
  REQUIRE(events.size() == 1);
  CHECK(names_in(dir / "eval").size() == 1);
  CHECK(written_by(events[0], pid[0]));
}
