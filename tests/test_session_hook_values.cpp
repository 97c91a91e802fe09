// What docs/how-to/write-a-hook.md and write-an-input.md state about the session: it stores its
// own copy of an input object (the caller's is never advanced; a std::reference_wrapper is not
// an input); `return {}` from before_run requests every name of the hook's SessionRunArgs;
// after_run still runs when the hook requested nothing and then reads empty values.
#include <catch2/catch.hpp>
#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <hookfuse/hookfuse.hpp>
#include <stdexcept>
#include <type_traits>
#include <vector>

namespace {
namespace hf = hookfuse;

// Four (x, y) points on y = 2x, one per run, forever.
struct PointsInput {
  std::array<float, 4> xs{1, 2, 3, 4}, ys{2, 4, 6, 8};
  std::size_t i = 0, taken = 0;
  bool next() {
    i = taken++ % 4;
    return true;
  }
  hf::Index batch_size() const { return 1; }
  template <class Graph>
  void feed(Graph& g) {
    g.template feed<"x">(&xs[i], 1, 1);
    g.template feed<"y">(&ys[i], 1, 1);
  }
};

// Requests "loss" and "global_step" with `return {}` in odd runs, none() in even runs, and
// records what after_run received.
struct OddRunsHook {
  std::int64_t runs = 0;
  std::vector<long long> loss_sizes, step_sizes, steps;
  int item_throws = 0;
  hf::SessionRunArgs<"loss", "global_step"> before_run(hf::SessionRunContext&) {
    if (++runs % 2 == 0) return hf::SessionRunArgs<"loss", "global_step">::none();
    return {};
  }
  void after_run(hf::SessionRunContext&,
                 const hf::SessionRunValues<"loss", "global_step">& values) {
    const hf::TensorValue& loss = values.get<"loss">();
    loss_sizes.push_back(static_cast<long long>(loss.size()));
    step_sizes.push_back(static_cast<long long>(values.get<"global_step">().size()));
    if (values.get<"global_step">().size() != 0)
      steps.push_back(static_cast<long long>(values.get<"global_step">().item_int()));
    try {
      (void)loss.item();
    } catch (const std::out_of_range&) {
      ++item_throws;
    }
  }
};

struct Model {
  hf::Placeholder<"x", float, 1> x;
  hf::Placeholder<"y", float, 1> y;
  hf::Variable<"W", float, 1, 1> W;
  hf::GlobalStep global_step;
  auto train_op() {
    auto loss = hf::named<"loss">(hf::mean_squared_error(y, hf::matmul(x, W)));
    return hf::GradientDescentOptimizer(0.01).minimize(loss, global_step);
  }
};
}  // namespace

TEST_CASE("Session input, a named input object is copied and the caller's is not advanced",
          "[session][docs]") {
  Model m;
  PointsInput points;
  hf::MonitoredTrainingSession session(m.train_op(), points,
                                       hf::hooks(hf::StopAtStepHook({.last_step = 4})));
  while (!session.should_stop()) session.run();
  CHECK(points.taken == 0);             // the caller's object: never asked for a batch
  CHECK(session.input().taken == 4);    // the session's copy: one next() per run, 4 runs
  using Graph = std::remove_reference_t<decltype(session.graph())>;
  STATIC_REQUIRE(hf::InputFor<PointsInput, Graph>);
  STATIC_REQUIRE_FALSE(hf::InputFor<std::reference_wrapper<PointsInput>, Graph>);
}

TEST_CASE("Session hook values, return {} requests every name and none() leaves them empty",
          "[session][docs]") {
  Model m;
  OddRunsHook probe;
  hf::MonitoredTrainingSession session(
      m.train_op(), PointsInput{},
      hf::hooks(std::ref(probe), hf::StopAtStepHook({.last_step = 4})));
  while (!session.should_stop()) session.run();
  // after_run runs in all 4 runs; runs 1 and 3 (return {}) get both tensors, runs 2 and 4
  // (none()) get empty values, not those of the run before.
  CHECK(probe.loss_sizes == std::vector<long long>{1, 0, 1, 0});
  CHECK(probe.step_sizes == std::vector<long long>{1, 0, 1, 0});
  // "global_step" is the step before the run's increment (TensorFlow): 0 in run 1, 2 in run 3.
  CHECK(probe.steps == std::vector<long long>{0, 2});
  CHECK(probe.item_throws == 2);  // item() of an empty TensorValue: std::out_of_range
}
