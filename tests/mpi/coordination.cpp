// tests/mpi/coordination.cpp: what keeps data-parallel ranks in step, run by ctest as
// `mpirun --allow-run-as-root --oversubscribe -np 2 mpi_coordination` (tests/CMakeLists.txt,
// with a timeout: a rank left waiting in a collective fails the test instead of hanging it):
// a stop on one rank stopping every rank (SyncStopHook).
//
// Every rank runs every test case (they are collective). Its own main(): MPI is initialised
// around Catch2's session.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <vector>

#include <hookfuse/distributed/average_gradients_hook.hpp>
#include <hookfuse/distributed/broadcast_global_variables_hook.hpp>
#include <hookfuse/distributed/communicator.hpp>
#include <hookfuse/distributed/sync_stop_hook.hpp>
#include <hookfuse/hookfuse.hpp>

namespace hf = hookfuse;
namespace hd = hookfuse::distributed;

namespace {

hd::Communicator* g_comm = nullptr;  // MPI_COMM_WORLD, set by main()

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

int main(int argc, char** argv) {
  hd::MpiEnvironment mpi(argc, argv);
  int result = 0;
  {
    hd::Communicator comm;
    g_comm = &comm;
    result = Catch::Session().run(argc, argv);
    // Every rank reports the worst result, so mpirun's exit status sees any failure.
    std::array<std::int64_t, 1> worst = {result};
    comm.allreduce_max(std::span<std::int64_t>(worst));
    result = static_cast<int>(worst[0]);
    g_comm = nullptr;
  }
  return result;
}
