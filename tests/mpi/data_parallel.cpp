// tests/mpi/data_parallel.cpp: data-parallel training over MPI, run by ctest as
// `mpirun --allow-run-as-root --oversubscribe -np 2 mpi_data_parallel` (tests/CMakeLists.txt).
//
// Every rank runs every test case (they are collective). The single-process reference is a
// plain in-process session on the whole global batch, with no MPI in it: the comparison does
// not depend on the averaging code. Its own main(): MPI is initialised around Catch2's session.
#define CATCH_CONFIG_RUNNER
#define HOOKFUSE_DEFINE_ALLOC_COUNTER
#include "../alloc_counter.hpp"  // before any Eigen header

#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <span>
#include <string>
#include <vector>

#include <hookfuse/distributed/average_gradients_hook.hpp>
#include <hookfuse/distributed/average_variables_hook.hpp>
#include <hookfuse/distributed/broadcast_global_variables_hook.hpp>
#include <hookfuse/distributed/communicator.hpp>
#include <hookfuse/distributed/divergence_check_hook.hpp>
#include <hookfuse/hookfuse.hpp>

#include "mpi_test_main.hpp"

namespace hf = hookfuse;
namespace hd = hookfuse::distributed;

namespace {

using mpi_test::g_comm;  // MPI_COMM_WORLD (mpi_test_main.hpp)

constexpr int kIn = 4, kHidden = 6, kOut = 2;
constexpr int kGlobalBatch = 32;
constexpr int kBatchesPerEpoch = 8;  // the data: 256 rows, the same order every epoch
constexpr int kRows = kGlobalBatch * kBatchesPerEpoch;
constexpr int kSteps = 100;

/// The data set: x uniform in [-1, 1) from a fixed LCG, y a smooth function of x. The same on
/// every rank (no file, no MPI).
struct Data {
  std::vector<float> x = std::vector<float>(kRows * kIn);
  std::vector<float> y = std::vector<float>(kRows * kOut);
  Data() {
    std::uint64_t s = 0x2545F4914F6CDD1Dull;
    const auto next = [&s] {
      s = s * 6364136223846793005ull + 1442695040888963407ull;
      return static_cast<float>(static_cast<double>(s >> 11) / 9007199254740992.0 * 2.0 - 1.0);
    };
    for (float& v : x) v = next();
    for (int r = 0; r < kRows; ++r) {
      const float* xr = &x[static_cast<std::size_t>(r * kIn)];
      y[static_cast<std::size_t>(r * kOut)] = 0.5f * xr[0] - xr[1] * xr[2] + 0.25f;
      y[static_cast<std::size_t>(r * kOut + 1)] = std::sin(xr[3]) + 0.3f * xr[0];
    }
  }
};
const Data& data() {
  static const Data d;
  return d;
}

/// A 4 -> 6 tanh -> 2 regression MLP; "loss" is the mean squared error over the batch, so the
/// mean of two half-batch gradients is the whole batch's gradient.
struct Mlp {
  hf::Placeholder<"x", float, kIn> x;
  hf::Placeholder<"y", float, kOut> y;
  hf::Variable<"W1", float, kIn, kHidden> W1;
  hf::Variable<"b1", float, 1, kHidden, 1> b1;
  hf::Variable<"W2", float, kHidden, kOut> W2;
  hf::Variable<"b2", float, 1, kOut, 1> b2;
  hf::GlobalStep gs;

  /// Deterministic initial values: element i of the variables together is
  /// scale * sin(seed + 0.7 i).
  explicit Mlp(double seed = 1.0, double scale = 0.5) {
    int i = 0;
    const auto fill = [&](auto& m) {
      for (Eigen::Index r = 0; r < m.rows(); ++r)
        for (Eigen::Index c = 0; c < m.cols(); ++c)
          m(r, c) = static_cast<float>(scale * std::sin(seed + 0.7 * i++));
    };
    fill(W1.value);
    fill(b1.value);
    fill(W2.value);
    fill(b2.value);
  }
  Mlp(const Mlp&) = delete;
  Mlp& operator=(const Mlp&) = delete;

  auto loss() {
    return hf::named<"loss">(
        hf::mean_squared_error(y, hf::matmul(hf::tanh(hf::matmul(x, W1) + b1), W2) + b2));
  }
  /// Every variable's values, in the order W1, b1, W2, b2.
  std::vector<float> values() const {
    std::vector<float> out;
    const auto add = [&out](const auto& m) {
      for (Eigen::Index r = 0; r < m.rows(); ++r)
        for (Eigen::Index c = 0; c < m.cols(); ++c) out.push_back(m(r, c));
    };
    add(W1.value);
    add(b1.value);
    add(W2.value);
    add(b2.value);
    return out;
  }
};

/// Feeds rows [first, first + rows) of batch `step` of the data (the epoch's order is fixed).
template <class Session>
void run_rows(Session& s, int step, int first, int rows) {
  const int row0 = (step % kBatchesPerEpoch) * kGlobalBatch + first;
  const Data& d = data();
  s.run(hf::feed<"x">(&d.x[static_cast<std::size_t>(row0 * kIn)], rows, kIn),
        hf::feed<"y">(&d.y[static_cast<std::size_t>(row0 * kOut)], rows, kOut));
}

/// One process, the whole global batch each step, no MPI: the reference.
template <class MakeOpt>
std::vector<float> train_single(MakeOpt make_opt, int first = 0, int rows = kGlobalBatch) {
  Mlp m;
  hf::MonitoredTrainingSession s(make_opt().minimize(m.loss(), m.gs), hf::caller_feeds(rows),
                                 hf::hooks());
  for (int t = 0; t < kSteps; ++t) run_rows(s, t, first, rows);
  CHECK(m.gs.value == kSteps);
  return m.values();
}

/// This rank's share of each global batch, averaged over the ranks by `Average`
/// (AverageGradientsHook: the gradients; AverageVariablesHook: the updated values and slots).
/// The ranks' variables are compared every 10 steps (DivergenceCheckHook). `fused`: whether the
/// session folds the update of W1 into the backward pass.
template <class Average, class MakeOpt>
std::vector<float> train_data_parallel(MakeOpt make_opt, std::size_t* exchanged = nullptr,
                                       bool* fused = nullptr) {
  const hd::Communicator& comm = *g_comm;
  const int per_rank = kGlobalBatch / comm.size();
  Mlp m;
  hf::MonitoredTrainingSession s(make_opt().minimize(m.loss(), m.gs), hf::caller_feeds(per_rank),
                                 hf::hooks(hd::BroadcastGlobalVariablesHook(comm), Average(comm),
                                           hd::DivergenceCheckHook(comm, {.every_n_steps = 10})));
  for (int t = 0; t < kSteps; ++t) run_rows(s, t, comm.rank() * per_rank, per_rank);
  CHECK(m.gs.value == kSteps);
  CHECK(s.template hook<hd::DivergenceCheckHook>().checks() == kSteps / 10);
  CHECK(s.template hook<Average>().steps() == kSteps);
  if (exchanged) *exchanged = s.template hook<Average>().float_elements();
  if (fused) *fused = s.template update_fused_now<"W1">();
  return m.values();
}

/// max |got - want| <= rel * max |want| (relative to the largest weight: elements near 0 do
/// not make the bound meaningless).
bool close_rel(const std::vector<float>& got, const std::vector<float>& want, double rel) {
  if (got.size() != want.size()) return false;
  double diff = 0.0, scale = 0.0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    diff = std::max(diff, std::abs(static_cast<double>(got[i]) - want[i]));
    scale = std::max(scale, std::abs(static_cast<double>(want[i])));
  }
  UNSCOPED_INFO("max abs difference " << diff << ", max abs weight " << scale << ", ratio "
                                      << diff / scale);
  return diff <= rel * scale;
}

/// Rank 0's values on every rank (a broadcast of a copy), for an exact cross-rank comparison.
std::vector<float> root_copy(std::vector<float> v) {
  g_comm->broadcast(std::span<float>(v), 0);
  return v;
}

constexpr std::size_t kModelElements = kIn * kHidden + kHidden + kHidden * kOut + kOut;

/// `Average` on 2 ranks x 16 rows against one process x 32 rows; `elements`: the floats it must
/// exchange per step.
template <class Average = hd::AverageGradientsHook, class MakeOpt>
void check_equivalence(MakeOpt make_opt, std::size_t elements = kModelElements) {
  REQUIRE(g_comm->size() == 2);
  std::size_t exchanged = 0;
  const std::vector<float> parallel = train_data_parallel<Average>(make_opt, &exchanged);
  const std::vector<float> reference = train_single(make_opt);
  // Independent of the averaging code: rank 0's half batch alone trains elsewhere, so the
  // comparison below can fail.
  const std::vector<float> half_only = train_single(make_opt, 0, kGlobalBatch / 2);
  INFO("rank " << g_comm->rank());
  CHECK(exchanged == elements);
  CHECK(close_rel(parallel, reference, 1e-5));
  CHECK_FALSE(close_rel(half_only, reference, 1e-3));
  // Every rank ends with the same weights, bit for bit.
  CHECK(root_copy(parallel) == parallel);
}

}  // namespace

TEST_CASE("mpi: 2 ranks x batch 16 equal 1 process x batch 32 after 100 steps, SGD",
          "[mpi]") {
  check_equivalence([] { return hf::GradientDescentOptimizer(0.1); });
}

TEST_CASE("mpi: 2 ranks x batch 16 equal 1 process x batch 32 after 100 steps, Momentum",
          "[mpi]") {
  check_equivalence([] { return hf::MomentumOptimizer(0.05, 0.9); });
}

TEST_CASE("mpi: 2 ranks x batch 16 equal 1 process x batch 32 after 100 steps, Adam",
          "[mpi]") {
  check_equivalence([] { return hf::AdamOptimizer(0.01); });
}

// Where the update is linear in the gradient (SGD, Momentum with or without Nesterov), averaging
// the updated values and slots equals averaging the gradients, and the update stays fused.
TEST_CASE("mpi: AverageVariablesHook 2 ranks x batch 16 equal 1 process x batch 32, SGD",
          "[mpi]") {
  const auto sgd = [] { return hf::GradientDescentOptimizer(0.1); };
  check_equivalence<hd::AverageVariablesHook>(sgd);  // the values only: as many as gradients
  bool fused_values = false, fused_gradients = true;
  (void)train_data_parallel<hd::AverageVariablesHook>(sgd, nullptr, &fused_values);
  (void)train_data_parallel<hd::AverageGradientsHook>(sgd, nullptr, &fused_gradients);
  CHECK(fused_values);
  CHECK_FALSE(fused_gradients);
}

TEST_CASE("mpi: AverageVariablesHook 2 ranks x batch 16 equal 1 process x batch 32, Momentum",
          "[mpi]") {
  const auto momentum = [] { return hf::MomentumOptimizer(0.05, 0.9); };
  check_equivalence<hd::AverageVariablesHook>(momentum, 2 * kModelElements);  // + accumulators
  bool fused = false;
  (void)train_data_parallel<hd::AverageVariablesHook>(momentum, nullptr, &fused);
  CHECK(fused);
}

TEST_CASE("mpi: AverageVariablesHook equals gradient averaging for Nesterov Momentum", "[mpi]") {
  check_equivalence<hd::AverageVariablesHook>(
      [] { return hf::MomentumOptimizer(0.05, 0.9, /*use_nesterov=*/true); },
      2 * kModelElements);
}

TEST_CASE("mpi: AverageVariablesHook allocates on the first step only", "[mpi]") {
  const hd::Communicator& comm = *g_comm;
  REQUIRE(comm.size() == 2);
  INFO("rank " << comm.rank());
  Mlp m;
  hf::MonitoredTrainingSession s(hf::MomentumOptimizer(0.05, 0.9).minimize(m.loss(), m.gs),
                                 hf::caller_feeds(16), hf::hooks(hd::AverageVariablesHook(comm)));
  const auto first = hookfuse_test::allocations_of([&] { run_rows(s, 0, comm.rank() * 16, 16); });
  const auto later = hookfuse_test::allocations_of([&] {
    for (int t = 1; t < 20; ++t) run_rows(s, t, comm.rank() * 16, 16);
  });
  CHECK(first.news > 0);
  CHECK(later.news == 0);
  CHECK(later.eigen_mallocs == 0);
  CHECK(s.hook<hd::AverageVariablesHook>().steps() == 20);
}

TEST_CASE("mpi: AverageGradientsHook allocates on the first step only", "[mpi]") {
  const hd::Communicator& comm = *g_comm;
  REQUIRE(comm.size() == 2);
  INFO("rank " << comm.rank());
  Mlp m;
  hf::MonitoredTrainingSession s(hf::AdamOptimizer(0.01).minimize(m.loss(), m.gs),
                                 hf::caller_feeds(16), hf::hooks(hd::AverageGradientsHook(comm)));
  const auto first = hookfuse_test::allocations_of([&] { run_rows(s, 0, comm.rank() * 16, 16); });
  const auto later = hookfuse_test::allocations_of([&] {
    for (int t = 1; t < 20; ++t) run_rows(s, t, comm.rank() * 16, 16);
  });
  CHECK(first.news > 0);  // the two buffers (the counter sees them)
  CHECK(later.news == 0);
  CHECK(later.eigen_mallocs == 0);
  CHECK(s.hook<hd::AverageGradientsHook>().steps() == 20);
}

TEST_CASE("mpi: BroadcastGlobalVariablesHook starts every rank from rank 0's variables",
          "[mpi]") {
  const hd::Communicator& comm = *g_comm;
  REQUIRE(comm.size() == 2);
  INFO("rank " << comm.rank());
  const std::vector<float> rank0_init = Mlp(1.0).values();
  // Rank 1 starts elsewhere, at another global step.
  Mlp m(comm.rank() == 0 ? 1.0 : 4.0, comm.rank() == 0 ? 0.5 : 2.0);
  m.gs.value = comm.rank() == 0 ? 0 : 7;
  REQUIRE((comm.rank() == 0) == (m.values() == rank0_init));
  hf::MonitoredTrainingSession s(hf::AdamOptimizer(0.01).minimize(m.loss(), m.gs),
                                 hf::caller_feeds(16),
                                 hf::hooks(hd::BroadcastGlobalVariablesHook(comm)));
  CHECK(m.values() == rank0_init);
  CHECK(m.gs.value == 0);
  CHECK(s.hook<hd::BroadcastGlobalVariablesHook>().broadcasts() == 1);
}

TEST_CASE("mpi: BroadcastGlobalVariablesHook sends optimizer slots and non-slot variables",
          "[mpi]") {
  const hd::Communicator& comm = *g_comm;
  REQUIRE(comm.size() == 2);
  INFO("rank " << comm.rank());
  // What rank 0 holds after 5 Adam steps on rows [0, 16) of each batch, computed here without
  // MPI: every value of its checkpoint list (weights, Adam slots, beta powers, global step).
  const auto state_after = [](int first, int steps, std::vector<double>& out) {
    Mlp m;
    hf::MonitoredTrainingSession s(hf::AdamOptimizer(0.01).minimize(m.loss(), m.gs),
                                   hf::caller_feeds(16), hf::hooks());
    for (int t = 0; t < steps; ++t) run_rows(s, t, first, 16);
    out.clear();
    for (const hf::CheckpointVariable& v : s.variables()) {
      if (v.dtype == hf::DType::float32)
        for (float f : v.values<const float>()) out.push_back(f);
      else
        for (std::int64_t i : v.values<const std::int64_t>()) out.push_back(static_cast<double>(i));
    }
  };
  std::vector<double> rank0_state;
  state_after(0, 5, rank0_state);

  // Each rank trains on its own rows (rank 1: rows [16, 32), and 3 steps), no averaging: the
  // slots, beta powers and global steps differ. Then the hook broadcasts rank 0's.
  Mlp m;
  hf::MonitoredTrainingSession s(hf::AdamOptimizer(0.01).minimize(m.loss(), m.gs),
                                 hf::caller_feeds(16), hf::hooks());
  const int steps = comm.rank() == 0 ? 5 : 3;
  for (int t = 0; t < steps; ++t) run_rows(s, t, comm.rank() * 16, 16);
  hd::BroadcastGlobalVariablesHook hook(comm);
  hook.after_create_session(s);
  std::vector<double> mine;
  for (const hf::CheckpointVariable& v : s.variables()) {
    if (v.dtype == hf::DType::float32)
      for (float f : v.values<const float>()) mine.push_back(f);
    else
      for (std::int64_t i : v.values<const std::int64_t>()) mine.push_back(static_cast<double>(i));
  }
  // W1, b1, W2, b2, two Adam slots each, beta1_power, beta2_power, global_step.
  CHECK(s.variables().size() == 4 + 8 + 2 + 1);
  CHECK(mine == rank0_state);
  CHECK(m.gs.value == 5);
}

TEST_CASE("mpi: BroadcastGlobalVariablesHook rejects a root_rank outside the communicator",
          "[mpi]") {
  const hd::Communicator& comm = *g_comm;
  CHECK_THROWS_WITH(hd::BroadcastGlobalVariablesHook(comm, 2),
                    "BroadcastGlobalVariablesHook: root_rank must be in [0, 2) (the "
                    "communicator's size), got 2");
  CHECK_THROWS_AS(hd::BroadcastGlobalVariablesHook(comm, -1), std::invalid_argument);
}

TEST_CASE("mpi: Communicator allreduce_average and broadcast", "[mpi]") {
  const hd::Communicator& comm = *g_comm;
  REQUIRE(comm.size() == 2);
  // rank r holds {r + 1, 10 (r + 1)}: the mean over ranks 0 and 1 is {1.5, 15}.
  std::array<double, 2> v = {comm.rank() + 1.0, 10.0 * (comm.rank() + 1)};
  comm.allreduce_average(std::span<double>(v));
  CHECK(v[0] == 1.5);
  CHECK(v[1] == 15.0);
  std::array<std::int64_t, 3> b = {comm.rank() == 1 ? 4 : 0, 5, comm.rank() == 1 ? -6 : 0};
  comm.broadcast(std::span<std::int64_t>(b), 1);
  CHECK(b == std::array<std::int64_t, 3>{4, 5, -6});
}

TEST_CASE("mpi: an MPI error names the call and MPI_Error_string", "[mpi]") {
  // MPI_Bcast to a root beyond the group, called directly on the communicator's duplicate
  // (MPI_ERRORS_RETURN): MPI returns an error code, which check_mpi turns into MpiError.
  const hd::Communicator& comm = *g_comm;
  int x = 0;
  const int code = MPI_Bcast(&x, 1, MPI_INT, comm.size() + 3, comm.native());
  REQUIRE(code != MPI_SUCCESS);  // MPI_ERRORS_RETURN: a code, not an abort
  try {
    hd::detail::check_mpi(code, "MPI_Bcast");
    FAIL("check_mpi did not throw");
  } catch (const hd::MpiError& e) {
    const std::string what = e.what();
    CHECK(what.rfind("hookfuse: MPI_Bcast failed: ", 0) == 0);
    char text[MPI_MAX_ERROR_STRING];
    int length = 0;
    MPI_Error_string(code, text, &length);
    CHECK(what.find(std::string(text, static_cast<std::size_t>(length))) != std::string::npos);
  }
}
