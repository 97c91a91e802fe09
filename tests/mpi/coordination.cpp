// tests/mpi/coordination.cpp: what keeps data-parallel ranks in step, run by ctest as
// `mpirun --allow-run-as-root --oversubscribe -np 2 mpi_coordination` (tests/CMakeLists.txt,
// with a timeout: a rank left waiting in a collective fails the test instead of hanging it):
// a stop on one rank stopping every rank (SyncStopHook); checkpoints and event files written by
// the chief (rank 0) only, every rank restoring from the chief's directory; the sharded input
// (NumpyInputFnOptions::num_shards) giving every rank its slice of the global batch, and the
// gradients weighted by each rank's rows on an unevenly split last batch (AverageGradientsHook);
// the cross-rank checksum of the variables (DivergenceCheckHook).
//
// Every rank runs every test case (they are collective). Its own main(): MPI is initialised
// around Catch2's session.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <unistd.h>  // getpid

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <hookfuse/distributed/average_gradients_hook.hpp>
#include <hookfuse/distributed/broadcast_global_variables_hook.hpp>
#include <hookfuse/distributed/communicator.hpp>
#include <hookfuse/distributed/divergence_check_hook.hpp>
#include <hookfuse/distributed/sync_stop_hook.hpp>
#include <hookfuse/hookfuse.hpp>

#include "mpi_test_main.hpp"

namespace hf = hookfuse;
namespace hd = hookfuse::distributed;
namespace fs = std::filesystem;

namespace {

using mpi_test::g_comm;  // MPI_COMM_WORLD (mpi_test_main.hpp)
using mpi_test::SharedDir;

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
  std::vector<float> values() const {
    return {W.value(0, 0), W.value(1, 0), W.value(2, 0), b.value(0, 0)};
  }
};

/// Four rows of data for this rank; rows of x are (r, 1, -r) / 4, y = 1.
struct RankRows {
  std::array<float, 12> x{};
  std::array<float, 4> y{1, 1, 1, 1};
  RankRows() {
    for (int r = 0; r < 4; ++r) {
      x[static_cast<std::size_t>(3 * r)] = static_cast<float>(r) / 4.0f;
      x[static_cast<std::size_t>(3 * r + 1)] = 0.25f;
      x[static_cast<std::size_t>(3 * r + 2)] = -static_cast<float>(r) / 4.0f;
    }
  }
};

template <class Session>
void run_rows(Session& s, const RankRows& d) {
  s.run(hf::feed<"x">(d.x.data(), 4, 3), hf::feed<"y">(d.y.data(), 4, 1));
}

/// Rank 0's values on every rank, for an exact cross-rank comparison.
template <class T>
std::vector<T> root_copy(std::vector<T> v) {
  g_comm->broadcast(std::span<T>(v), 0);
  return v;
}


/// Every file of `dir`: name -> (size, modification time).
std::map<std::string, std::pair<std::uintmax_t, fs::file_time_type>> listing(const fs::path& dir) {
  std::map<std::string, std::pair<std::uintmax_t, fs::file_time_type>> out;
  for (const auto& e : fs::directory_iterator(dir))
    out[e.path().filename().string()] = {e.file_size(), e.last_write_time()};
  return out;
}

using QuietOptions = hf::SessionOptions<hf::DefaultSaver, hf::SteadyClock, hf::NullLogger>;

/// A data-parallel session with the chief's files in `dir`: rank 0 is the chief; checkpoints
/// every 5 steps, summaries at TensorFlow's default cadence (every 100 steps, from step 1).
template <class... Hooks>
auto chief_session(Linear& m, const fs::path& dir, Hooks... extra) {
  return hf::MonitoredTrainingSession(
      hf::GradientDescentOptimizer(0.1).minimize(m.loss(), m.gs), hf::caller_feeds(4),
      QuietOptions{.is_chief = g_comm->rank() == 0,
                   .checkpoint_dir = dir.string(),
                   .save_checkpoint_steps = 5},
      hf::hooks(extra..., hd::AverageGradientsHook(*g_comm)));
}

}  // namespace

// --- SyncStopHook --------------------------------------------------------------------------------

TEST_CASE("mpi: a StopAtStepHook on rank 1 at step 7 stops both ranks at step 7", "[mpi][stop]") {
  const hd::Communicator& comm = *g_comm;
  REQUIRE(comm.size() == 2);
  INFO("rank " << comm.rank());
  Linear m;
  RankRows d;
  // Rank 0 would train to step 1000; rank 1 stops at 7.
  hf::MonitoredTrainingSession s(
      hf::GradientDescentOptimizer(0.1).minimize(m.loss(), m.gs), hf::caller_feeds(4),
      hf::hooks(hd::BroadcastGlobalVariablesHook(comm), hd::AverageGradientsHook(comm),
                hf::StopAtStepHook({.last_step = comm.rank() == 1 ? 7 : 1000}),
                hd::SyncStopHook(comm)));
  int runs = 0;
  while (!s.should_stop() && runs < 50) {
    run_rows(s, d);
    ++runs;
  }
  CHECK(runs == 7);
  CHECK(m.gs.value == 7);
  const auto& sync = s.hook<hd::SyncStopHook>();
  REQUIRE(sync.stopped_at().has_value());
  CHECK(*sync.stopped_at() == 7);
  CHECK(sync.stopped_by_other_rank() == (comm.rank() == 0));
  CHECK(root_copy(m.values()) == m.values());
}

TEST_CASE("mpi: a NaN loss on rank 1 stops both ranks at the same step, fail_on_nan_loss false",
          "[mpi][stop]") {
  const hd::Communicator& comm = *g_comm;
  REQUIRE(comm.size() == 2);
  INFO("rank " << comm.rank());
  Linear m;
  RankRows d;
  RankRows nan_rows;  // rank 1's data in its 4th run: a NaN target
  nan_rows.y[2] = std::numeric_limits<float>::quiet_NaN();
  hf::MonitoredTrainingSession s(
      hf::GradientDescentOptimizer(0.1).minimize(m.loss(), m.gs), hf::caller_feeds(4),
      hf::hooks(hd::AverageGradientsHook(comm),
                hf::NanTensorHook<"loss", hf::NullLogger>({.fail_on_nan_loss = false}),
                hd::SyncStopHook(comm)));
  int runs = 0;
  while (!s.should_stop() && runs < 50) {
    run_rows(s, comm.rank() == 1 && runs == 3 ? nan_rows : d);
    ++runs;
  }
  CHECK(runs == 4);
  CHECK(m.gs.value == 4);
  CHECK(s.hook<hd::SyncStopHook>().stopped_by_other_rank() == (comm.rank() == 0));
}

TEST_CASE("mpi: SyncStopHook keeps training while no rank asks for a stop", "[mpi][stop]") {
  const hd::Communicator& comm = *g_comm;
  REQUIRE(comm.size() == 2);
  Linear m;
  RankRows d;
  hf::MonitoredTrainingSession s(hf::GradientDescentOptimizer(0.1).minimize(m.loss(), m.gs),
                                 hf::caller_feeds(4), hf::hooks(hd::SyncStopHook(comm)));
  for (int t = 0; t < 12; ++t) run_rows(s, d);
  CHECK_FALSE(s.should_stop());
  CHECK_FALSE(s.hook<hd::SyncStopHook>().stopped_at().has_value());
  CHECK(m.gs.value == 12);
}

// --- chief-only files ---------------------------------------------------------------------------

TEST_CASE("mpi: only rank 0 writes checkpoints and events, every rank restores the chief's",
          "[mpi][chief]") {
  const hd::Communicator& comm = *g_comm;
  REQUIRE(comm.size() == 2);
  INFO("rank " << comm.rank());
  SharedDir shared;
  const fs::path& dir = shared.path;
  RankRows d;
  std::vector<float> trained;
  {  // 12 steps: rank 0 saves at 0, 5, 10 and 12 (end), and one event file
    Linear m;
    auto s = chief_session(m, dir, hd::BroadcastGlobalVariablesHook(comm),
                           hf::StopAtStepHook({.last_step = 12}), hd::SyncStopHook(comm));
    // Slots 0, 1, 2: StepCounterHook, SummarySaverHook, CheckpointSaverHook; empty on rank 1.
    CHECK(s.hook<0>().has_value() == (comm.rank() == 0));
    CHECK(s.hook<1>().has_value() == (comm.rank() == 0));
    CHECK(s.hook<2>().has_value() == (comm.rank() == 0));
    while (!s.should_stop()) run_rows(s, d);
    CHECK(m.gs.value == 12);
    trained = m.values();
  }
  comm.barrier();  // both sessions closed: every file is written
  {
    // The files of one writer: each checkpoint once, one event file, named with the pid of
    // rank 0 (events.out.tfevents.<secs>.<host>.<pid>.<n>).
    std::array<std::int64_t, 1> pid0 = {static_cast<std::int64_t>(::getpid())};
    comm.broadcast(std::span<std::int64_t>(pid0), 0);
    std::vector<std::string> events, other;
    for (const auto& [name, info] : listing(dir))
      (name.starts_with("events.out.tfevents.") ? events : other).push_back(name);
    CHECK(other == std::vector<std::string>{
                       "checkpoint", "model.ckpt-0.data-00000-of-00001", "model.ckpt-0.index",
                       "model.ckpt-10.data-00000-of-00001", "model.ckpt-10.index",
                       "model.ckpt-12.data-00000-of-00001", "model.ckpt-12.index",
                       "model.ckpt-5.data-00000-of-00001", "model.ckpt-5.index"});
    REQUIRE(events.size() == 1);
    CHECK(events[0].find("." + std::to_string(pid0[0]) + ".") != std::string::npos);
  }

  // Restart, without the broadcast: each rank restores by itself. Rank 1 reads a copy of the
  // chief's directory that nothing else touches, so its listing (names, sizes, times) shows
  // whether rank 1's session wrote anything there.
  const fs::path copy = dir.string() + "-rank1";
  comm.barrier();  // both listings done before rank 0's next session writes into `dir`
  if (comm.rank() == 1) fs::copy(dir, copy);
  comm.barrier();
  const fs::path mine = comm.rank() == 1 ? copy : dir;
  const auto before = comm.rank() == 1 ? listing(copy) : decltype(listing(copy)){};
  {
    Linear m;  // initial values, not the trained ones
    auto s = chief_session(m, mine, hf::StopAtStepHook({.last_step = 20}),
                           hd::SyncStopHook(comm));
    CHECK(s.restored_from_checkpoint());
    CHECK(m.gs.value == 12);
    CHECK(m.values() == trained);
    while (!s.should_stop()) run_rows(s, d);
    CHECK(m.gs.value == 20);
  }
  if (comm.rank() == 1) {
    CHECK(listing(copy) == before);
    fs::remove_all(copy);
  }
  comm.barrier();
  if (comm.rank() == 0) CHECK(fs::exists(dir / "model.ckpt-20.index"));

  // Restart once more, both ranks on the chief's directory, with last_step already reached:
  // every rank restores step 20, runs the one step TensorFlow runs, and stops after it.
  {
    Linear m;
    auto s = chief_session(m, dir, hd::BroadcastGlobalVariablesHook(comm),
                           hf::StopAtStepHook({.last_step = 20}), hd::SyncStopHook(comm));
    CHECK(m.gs.value == 20);
    int runs = 0;
    while (!s.should_stop() && runs < 10) {
      run_rows(s, d);
      ++runs;
    }
    CHECK(runs == 1);
    CHECK(m.gs.value == 21);
  }
}

// --- sharded input -------------------------------------------------------------------------------

namespace {
/// n examples of 3 features: example i is (i, i / 2, 1) / n, target 0.3 i / n - 0.1.
struct Examples {
  std::vector<float> x, y;
  explicit Examples(int n) {
    for (int i = 0; i < n; ++i) {
      const float t = static_cast<float>(i) / static_cast<float>(n);
      x.insert(x.end(), {t, t / 2.0f, 1.0f});
      y.push_back(0.3f * t - 0.1f);
    }
  }
};
using Input = hf::data::NumpyInputFn<float, float>;
Input::Options sharded(std::int64_t batch, int epochs, std::int64_t shards, std::int64_t index) {
  return {.batch_size = batch, .num_epochs = epochs, .shuffle = true, .seed = 11,
          .num_shards = shards, .shard_index = index};
}
}  // namespace

TEST_CASE("mpi: an epoch of 5 examples at global batch 4 on 2 ranks ends on both at once",
          "[mpi][shard]") {
  const hd::Communicator& comm = *g_comm;
  REQUIRE(comm.size() == 2);
  INFO("rank " << comm.rank());
  const Examples ex(5);
  // The batches: each rank's slices, as example indices (x[0] * 5), with -1 ending each batch.
  const auto slices = [&](std::int64_t shards, std::int64_t index) {
    Input in(ex.x.data(), 5, 3, ex.y.data(), sharded(4, 2, shards, index));
    std::vector<std::int64_t> out;
    while (in.next()) {
      for (std::int64_t r = 0; r < in.rows(); ++r)
        out.push_back(std::lround(in.features()(r, 0) * 5.0f));
      out.push_back(-1);
    }
    return out;
  };
  const std::vector<std::int64_t> mine = slices(2, comm.rank());
  // Per epoch global batches of 4 and 1 rows; rank i takes rows [i r / 2, (i + 1) r / 2): of 4
  // rows 2 each, of 1 row none (rank 0, [0, 0)) and one (rank 1, [0, 1)).
  const std::vector<std::size_t> want_rows = comm.rank() == 0
                                                 ? std::vector<std::size_t>{2, 0, 2, 0}
                                                 : std::vector<std::size_t>{2, 1, 2, 1};
  std::vector<std::size_t> rows;
  std::size_t n = 0;
  for (std::int64_t v : mine) {
    if (v >= 0) ++n;
    else rows.push_back(std::exchange(n, 0));
  }
  CHECK(rows == want_rows);
  // Rank 1's slices on rank 0 (a fixed-size buffer), joined with rank 0's batch by batch: the
  // single-process batches.
  std::array<std::int64_t, 16> theirs{};
  theirs.fill(-2);
  if (comm.rank() == 1) std::copy(mine.begin(), mine.end(), theirs.begin());
  comm.broadcast(std::span<std::int64_t>(theirs), 1);
  if (comm.rank() == 0) {
    std::vector<std::int64_t> joined;
    std::size_t j = 0;
    for (std::int64_t v : mine) {
      if (v >= 0) {
        joined.push_back(v);
        continue;
      }
      for (; theirs[j] != -1; ++j) joined.push_back(theirs[j]);
      ++j;
      joined.push_back(-1);
    }
    CHECK(joined == slices(1, 0));
  }

  // Trained through the session: both ranks run 4 steps (2 epochs of 2 batches) and stop
  // together at the end of the input; a hang would fail the test by its timeout.
  Linear m;
  Input in(ex.x.data(), 5, 3, ex.y.data(), sharded(4, 2, 2, comm.rank()));
  hf::MonitoredTrainingSession s(
      hf::GradientDescentOptimizer(0.1).minimize(m.loss(), m.gs), hf::feeds<"x", "y">(in),
      hf::hooks(hd::BroadcastGlobalVariablesHook(comm), hd::AverageGradientsHook(comm),
                hd::SyncStopHook(comm)));
  int runs = 0;
  while (!s.should_stop() && runs < 20) {
    s.run();
    ++runs;
  }
  CHECK(runs == 5);  // 4 steps, then the run that finds the input ended
  CHECK(m.gs.value == 4);
  CHECK(root_copy(m.values()) == m.values());
}

TEST_CASE("mpi: 2 ranks on the sharded input train as 1 process on the whole input",
          "[mpi][shard]") {
  // 16 examples, global batch 8, 3 shuffled epochs: every global batch splits evenly, so the
  // mean of the two half-batch gradients is the global batch's gradient.
  const hd::Communicator& comm = *g_comm;
  REQUIRE(comm.size() == 2);
  INFO("rank " << comm.rank());
  const Examples ex(16);
  const auto train = [&](std::int64_t shards, std::int64_t index, bool parallel) {
    Linear m;
    Input in(ex.x.data(), 16, 3, ex.y.data(), sharded(8, 3, shards, index));
    if (parallel) {
      hf::MonitoredTrainingSession s(hf::MomentumOptimizer(0.2, 0.9).minimize(m.loss(), m.gs),
                                     hf::feeds<"x", "y">(in),
                                     hf::hooks(hd::AverageGradientsHook(comm)));
      while (!s.should_stop()) s.run();
    } else {
      hf::MonitoredTrainingSession s(hf::MomentumOptimizer(0.2, 0.9).minimize(m.loss(), m.gs),
                                     hf::feeds<"x", "y">(in), hf::hooks());
      while (!s.should_stop()) s.run();
    }
    CHECK(m.gs.value == 6);
    return m.values();
  };
  const std::vector<float> parallel = train(2, comm.rank(), true);
  const std::vector<float> single = train(1, 0, false);
  const std::vector<float> mine_only = train(2, comm.rank(), false);  // no averaging
  double diff = 0.0, scale = 0.0, apart = 0.0;
  for (std::size_t i = 0; i < single.size(); ++i) {
    diff = std::max(diff, static_cast<double>(std::abs(parallel[i] - single[i])));
    apart = std::max(apart, static_cast<double>(std::abs(mine_only[i] - single[i])));
    scale = std::max(scale, static_cast<double>(std::abs(single[i])));
  }
  INFO("max difference " << diff << ", without averaging " << apart << ", max weight " << scale);
  CHECK(diff <= 1e-5 * scale);
  CHECK(apart > 1e-3 * scale);  // the comparison can fail
}

namespace {
/// Before the averaging: on a rank whose batch is empty, overwrites its gradients with NaN after
/// checking that the session left them 0 (tests/test_zero_rows.cpp: mean_squared_error of 0 rows
/// is 0 with zero gradients). The averaging must not read them.
struct PoisonEmptyBatch {
  int empty_runs = 0;
  bool zero_before = true;
  void before_apply_gradients(auto& gradients) {
    if (gradients.batch_rows() != 0) return;
    ++empty_runs;
    gradients.for_each([&](auto& g, std::string_view) {
      zero_before = zero_before && g.isZero(0.0);
      g.setConstant(std::numeric_limits<float>::quiet_NaN());
    });
  }
};
}  // namespace

TEST_CASE("mpi: the uneven last batch weighted by rows trains as 1 process, 5 examples at 4",
          "[mpi][shard][uneven]") {
  // 5 examples, global batch 4, 2 shuffled epochs: the batches split 2 + 2 and 0 + 1 rows. The
  // global gradient of the short batch is rank 1's alone: sum_r(rows_r g_r) / sum_r(rows_r)
  // = (0 + 1 g_1) / 1. An equal weight per rank gives (g_0 + g_1) / 2 instead (g_0 = 0), half
  // the step: the unweighted run must end elsewhere, so the comparison can fail.
  const hd::Communicator& comm = *g_comm;
  REQUIRE(comm.size() == 2);
  INFO("rank " << comm.rank());
  const Examples ex(5);
  struct Run {
    std::vector<float> values;
    std::int64_t steps = 0, averaged = 0, empty = 0;
    int poisoned = 0;
    bool zero_before = false;
  };
  const auto train = [&](std::int64_t shards, std::int64_t index, bool parallel, bool weighted) {
    Linear m;
    Input in(ex.x.data(), 5, 3, ex.y.data(), sharded(4, 2, shards, index));
    Run out;
    if (parallel) {
      hf::MonitoredTrainingSession s(
          hf::GradientDescentOptimizer(0.5).minimize(m.loss(), m.gs), hf::feeds<"x", "y">(in),
          hf::hooks(PoisonEmptyBatch{},
                    hd::AverageGradientsHook(comm, {.weight_by_rows = weighted}),
                    hd::SyncStopHook(comm)));
      while (!s.should_stop()) s.run();
      out.averaged = s.hook<hd::AverageGradientsHook>().steps();
      out.empty = s.hook<hd::AverageGradientsHook>().empty_steps();
      out.poisoned = s.hook<PoisonEmptyBatch>().empty_runs;
      out.zero_before = s.hook<PoisonEmptyBatch>().zero_before;
    } else {
      hf::MonitoredTrainingSession s(hf::GradientDescentOptimizer(0.5).minimize(m.loss(), m.gs),
                                     hf::feeds<"x", "y">(in), hf::hooks());
      while (!s.should_stop()) s.run();
    }
    out.steps = m.gs.value;
    out.values = m.values();
    return out;
  };
  const Run weighted = train(2, comm.rank(), true, true);
  const Run equal = train(2, comm.rank(), true, false);
  const Run single = train(1, 0, false, false);
  CHECK(weighted.steps == 4);
  CHECK(single.steps == 4);
  CHECK(weighted.averaged == 4);
  CHECK(weighted.empty == 0);
  // Rank 0's second batch of each epoch is empty; its zero gradients became NaN before the
  // averaging, and the weighted result stays finite and equal to the single process's.
  CHECK(weighted.poisoned == (comm.rank() == 0 ? 2 : 0));
  CHECK(weighted.zero_before);
  double diff = 0.0, apart = 0.0, scale = 0.0;
  bool equal_finite = true;
  for (std::size_t i = 0; i < single.values.size(); ++i) {
    diff = std::max(diff, static_cast<double>(std::abs(weighted.values[i] - single.values[i])));
    equal_finite = equal_finite && std::isfinite(equal.values[i]);
    scale = std::max(scale, static_cast<double>(std::abs(single.values[i])));
  }
  // The equal-weight run on the same poisoned gradients: NaN (0-row rank read). Without the
  // poison its result is what apart measures below.
  CHECK_FALSE(equal_finite);
  const Run equal_clean = [&] {
    Linear m;
    Input in(ex.x.data(), 5, 3, ex.y.data(), sharded(4, 2, 2, comm.rank()));
    hf::MonitoredTrainingSession s(
        hf::GradientDescentOptimizer(0.5).minimize(m.loss(), m.gs), hf::feeds<"x", "y">(in),
        hf::hooks(hd::AverageGradientsHook(comm, {.weight_by_rows = false}),
                  hd::SyncStopHook(comm)));
    while (!s.should_stop()) s.run();
    Run r;
    r.values = m.values();
    return r;
  }();
  for (std::size_t i = 0; i < single.values.size(); ++i)
    apart = std::max(apart,
                     static_cast<double>(std::abs(equal_clean.values[i] - single.values[i])));
  INFO("max difference " << diff << ", equal weight per rank " << apart << ", max weight "
                         << scale);
  CHECK(diff <= 1e-5 * scale);
  CHECK(apart > 1e-3 * scale);  // the comparison can fail
  CHECK(root_copy(weighted.values) == weighted.values);
}

TEST_CASE("mpi: a last batch split 1 + 2 rows weighted by rows trains as 1 process, 7 at 4",
          "[mpi][shard][uneven]") {
  // 7 examples, global batch 4, 2 shuffled epochs: the batches split 2 + 2 and 1 + 2 rows
  // ([0, 1) and [1, 3) of 3). The short batch's gradient is (1 g_0 + 2 g_1) / 3; an equal
  // weight per rank gives (g_0 + g_1) / 2.
  const hd::Communicator& comm = *g_comm;
  REQUIRE(comm.size() == 2);
  INFO("rank " << comm.rank());
  const Examples ex(7);
  const auto train = [&](std::int64_t shards, std::int64_t index, bool parallel, bool weighted) {
    Linear m;
    Input in(ex.x.data(), 7, 3, ex.y.data(), sharded(4, 2, shards, index));
    std::vector<std::int64_t> rows;
    if (parallel) {
      hf::MonitoredTrainingSession s(
          hf::GradientDescentOptimizer(0.5).minimize(m.loss(), m.gs), hf::feeds<"x", "y">(in),
          hf::hooks(hd::AverageGradientsHook(comm, {.weight_by_rows = weighted}),
                    hd::SyncStopHook(comm)));
      while (!s.should_stop()) s.run();
    } else {
      hf::MonitoredTrainingSession s(hf::GradientDescentOptimizer(0.5).minimize(m.loss(), m.gs),
                                     hf::feeds<"x", "y">(in), hf::hooks());
      while (!s.should_stop()) s.run();
    }
    CHECK(m.gs.value == 4);
    return m.values();
  };
  const std::vector<float> weighted = train(2, comm.rank(), true, true);
  const std::vector<float> equal = train(2, comm.rank(), true, false);
  const std::vector<float> single = train(1, 0, false, false);
  double diff = 0.0, apart = 0.0, scale = 0.0;
  for (std::size_t i = 0; i < single.size(); ++i) {
    diff = std::max(diff, static_cast<double>(std::abs(weighted[i] - single[i])));
    apart = std::max(apart, static_cast<double>(std::abs(equal[i] - single[i])));
    scale = std::max(scale, static_cast<double>(std::abs(single[i])));
  }
  INFO("max difference " << diff << ", equal weight per rank " << apart << ", max weight "
                         << scale);
  CHECK(diff <= 1e-5 * scale);
  CHECK(apart > 1e-3 * scale);  // the comparison can fail
}

TEST_CASE("mpi: a step with 0 rows on every rank leaves the gradients 0, SGD unchanged",
          "[mpi][uneven]") {
  const hd::Communicator& comm = *g_comm;
  REQUIRE(comm.size() == 2);
  INFO("rank " << comm.rank());
  Linear m;
  const std::vector<float> start = m.values();
  hf::MonitoredTrainingSession s(hf::GradientDescentOptimizer(0.5).minimize(m.loss(), m.gs),
                                 hf::caller_feeds(4),
                                 hf::hooks(PoisonEmptyBatch{}, hd::AverageGradientsHook(comm)));
  const std::array<float, 3> x{1.0f, 2.0f, 3.0f};
  const std::array<float, 1> y{1.0f};
  s.run(hf::feed<"x">(x.data(), 0, 3), hf::feed<"y">(y.data(), 0, 1));
  CHECK(s.hook<PoisonEmptyBatch>().empty_runs == 1);
  CHECK(s.hook<hd::AverageGradientsHook>().empty_steps() == 1);
  CHECK(m.gs.value == 1);
  CHECK(m.values() == start);  // gradients 0: w - 0.5 * 0 = w, not NaN
}

// --- DivergenceCheckHook -------------------------------------------------------------------------

TEST_CASE("mpi: DivergenceCheckHook names the variable rank 1 perturbed", "[mpi][divergence]") {
  const hd::Communicator& comm = *g_comm;
  REQUIRE(comm.size() == 2);
  INFO("rank " << comm.rank());
  Linear m;
  RankRows d;
  hf::MonitoredTrainingSession s(
      hf::AdamOptimizer(0.01).minimize(m.loss(), m.gs), hf::caller_feeds(4),
      hf::hooks(hd::BroadcastGlobalVariablesHook(comm), hd::AverageGradientsHook(comm),
                hd::DivergenceCheckHook(comm, {.every_n_steps = 3})));
  for (int t = 0; t < 4; ++t) run_rows(s, d);  // checked after step 3: equal
  CHECK(s.hook<hd::DivergenceCheckHook>().checks() == 1);
  // Rank 1 moves b (the variable after W) by 1e-3; W, updated by the averaged gradient, stays
  // equal on both, and so do Adam's slots (4), beta powers (2) and global_step: 1 of 9 differs.
  if (comm.rank() == 1) m.b.value(0, 0) += 1e-3f;
  run_rows(s, d);  // step 5: no check
  CHECK_THROWS_WITH(run_rows(s, d),  // step 6: checked on both ranks, both throw
                    Catch::Contains("DivergenceCheckHook: the ranks' variables differ after "
                                    "global step 6: first 'b' (1 of 9 variables differ") &&
                        Catch::Contains("rank " + std::to_string(comm.rank()) +
                                        " has checksum 0x"));
  CHECK(s.hook<hd::DivergenceCheckHook>().checks() == 2);
}

TEST_CASE("mpi: DivergenceCheckHook rejects every_n_steps <= 0", "[mpi][divergence]") {
  CHECK_THROWS_WITH(hd::DivergenceCheckHook(*g_comm, {.every_n_steps = 0}),
                    "DivergenceCheckHook: every_n_steps must be > 0, got 0");
}
