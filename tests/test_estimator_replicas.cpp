// The Estimator on replicas without MPI: the metrics' local variables summed across processes
// (metrics/reduce.hpp), RunConfig's chief notion (is_chief, num_worker_replicas,
// cross_replica_sum, with_replicas), a non-chief's train writing nothing, and evaluate on two
// shards reporting the whole set's metrics. The other process is simulated in this one: a fake
// group whose sum adds the state the other shard's evaluation left. tests/mpi/estimator.cpp runs
// the same on two MPI ranks.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <hookfuse/estimator/estimator.hpp>
#include <hookfuse/hookfuse.hpp>
#include <hookfuse/metrics.hpp>
#include <set>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "capturing_logger.hpp"
#include "error_of.hpp"
#include "estimator_replica_model.hpp"
#include "temp_dir.hpp"

namespace hf = hookfuse;
namespace hm = hookfuse::metrics;
namespace fs = std::filesystem;
using namespace replica_model;  // F2, L2, classifier_fn, kFeatures, kLabels
using hookfuse_test::CapturingLogger;
using hookfuse_test::error_of;
using hookfuse_test::Lines;
using hookfuse_test::TempDir;

namespace {

using Rows = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
Rows column(std::vector<float> v) {
  Rows m(static_cast<Eigen::Index>(v.size()), 1);
  for (std::size_t i = 0; i < v.size(); ++i) m(static_cast<Eigen::Index>(i), 0) = v[i];
  return m;
}

/// Two processes' metrics `a` and `b` summed as an allreduce would: both end with a + b.
template <class M>
void sum_two(M& a, M& b) {
  std::vector<float> buffer, of_b;
  hm::sum_local_variables([&](std::span<float> s) { of_b.assign(s.begin(), s.end()); }, buffer, b);
  hm::sum_local_variables(
      [&](std::span<float> s) {
        REQUIRE(s.size() == of_b.size());
        for (std::size_t i = 0; i < s.size(); ++i) s[i] += of_b[i];
        of_b.assign(s.begin(), s.end());
      },
      buffer, a);
  hm::sum_local_variables(
      [&](std::span<float> s) { std::copy(of_b.begin(), of_b.end(), s.begin()); }, buffer, b);
}

}  // namespace

TEST_CASE("metrics: two halves' local variables summed give the whole set's values") {
  // labels, predictions (class ids, or probabilities of class 1 for AUC), split 3 + 5.
  const std::vector<float> labels = {1, 0, 1, 1, 0, 0, 1, 0};
  const std::vector<float> ids = {1, 1, 1, 0, 0, 0, 0, 0};
  const std::vector<float> probs = {0.9f, 0.6f, 0.7f, 0.4f, 0.1f, 0.3f, 0.45f, 0.2f};
  const Rows l = column(labels), p = column(ids), s = column(probs);
  auto head = [](const Rows& m) { return m.topRows(3); };
  auto tail = [](const Rows& m) { return m.bottomRows(5); };

  SECTION("Accuracy: 5 of 8 correct") {
    hm::Accuracy a, b;
    a.update(head(l), head(p));  // 2 of 3
    b.update(tail(l), tail(p));  // 3 of 5
    sum_two(a, b);
    CHECK(a.total() == 5.0f);
    CHECK(a.count() == 8.0f);
    CHECK(a.value() == 5.0f / 8.0f);
    CHECK(b.value() == 5.0f / 8.0f);
  }
  SECTION("Mean: of the 8 probabilities, 3.65 / 8") {
    hm::Mean a, b;
    a.update(head(s));
    b.update(tail(s));
    sum_two(a, b);
    CHECK(a.count() == 8.0f);
    CHECK(a.value() == Approx(3.65 / 8.0).epsilon(1e-6));
  }
  SECTION("Precision 2 / 3, Recall 2 / 4") {
    hm::Precision pa, pb;
    hm::Recall ra, rb;
    pa.update(head(l), head(p));
    pb.update(tail(l), tail(p));
    ra.update(head(l), head(p));
    rb.update(tail(l), tail(p));
    sum_two(pa, pb);
    sum_two(ra, rb);
    CHECK(pa.value() == 2.0f / 3.0f);
    CHECK(rb.value() == 0.5f);
  }
  SECTION("MeanSquaredError, MeanPerClassAccuracy and AUC equal one metric on all 8") {
    hm::MeanSquaredError ma, mb, mall;
    ma.update(head(l), head(s));
    mb.update(tail(l), tail(s));
    mall.update(l, s);
    sum_two(ma, mb);
    CHECK(ma.value() == Approx(mall.value()).epsilon(1e-6));
    hm::MeanPerClassAccuracy ca(2), cb(2), call(2);
    ca.update(head(l), head(p));
    cb.update(tail(l), tail(p));
    call.update(l, p);
    sum_two(ca, cb);
    // class 0: 3 of 4 predicted 0, class 1: 2 of 4 predicted 1
    CHECK(ca.value() == Approx((0.75 + 0.5) / 2).epsilon(1e-6));
    CHECK(ca.total() == call.total());
    hm::AUC aa(50), ab(50), aall(50);
    aa.update(head(l), head(s));
    ab.update(tail(l), tail(s));
    aall.update(l, s);
    sum_two(aa, ab);
    CHECK(aa.true_positives() == aall.true_positives());
    CHECK(aa.false_positives() == aall.false_positives());
    CHECK(aa.value() == aall.value());
    CHECK(aa.value() != hm::AUC(50).value());  // not the empty metric's 0
  }
}

TEST_CASE("sum_local_variables packs every metric into one buffer, in order, one sum call") {
  hm::Mean mean;
  hm::Accuracy acc;
  hm::AUC auc(3);
  mean.update(column({2.0f, 4.0f}));
  acc.update(column({1.0f}), column({0.0f}));
  std::vector<float> buffer;
  int calls = 0;
  std::vector<float> seen;
  CHECK(hm::local_variable_size(mean, acc, auc) == 2 + 2 + 4 * 3);
  hm::sum_local_variables(
      [&](std::span<float> s) {
        ++calls;
        seen.assign(s.begin(), s.end());
        for (float& v : s) v *= 2.0f;  // as if a second process held the same
      },
      buffer, mean, acc, auc);
  CHECK(calls == 1);
  REQUIRE(seen.size() == 16);
  CHECK(seen[0] == 6.0f);  // Mean: total, count
  CHECK(seen[1] == 2.0f);
  CHECK(seen[2] == 0.0f);  // Accuracy: correct, count
  CHECK(seen[3] == 1.0f);
  CHECK(mean.total() == 12.0f);
  CHECK(mean.count() == 4.0f);
  CHECK(mean.value() == 3.0f);
  CHECK(acc.count() == 2.0f);
}

namespace {

/// A group of `n` processes of which this is `r`; its sum adds `other` (the other process's
/// local variables, zeros when empty) and keeps what this process sent in `sent`.
struct FakeGroup {
  FakeGroup(int rank, int size, std::vector<float> other_state = {})
      : r(rank), n(size), other(std::move(other_state)) {}
  int r;
  int n;
  std::vector<float> other;
  mutable std::vector<float> sent{};
  mutable int calls = 0;
  int rank() const { return r; }
  int size() const { return n; }
  void allreduce_sum(std::span<float> values) const {
    ++calls;
    sent.assign(values.begin(), values.end());
    if (!other.empty()) {
      REQUIRE(other.size() == values.size());
      for (std::size_t i = 0; i < values.size(); ++i) values[i] += other[i];
    }
  }
};
static_assert(hf::ReplicaGroup<FakeGroup>);

using Config = hf::RunConfig<hf::FakeClock, CapturingLogger>;

auto eval_input(std::int64_t shards, std::int64_t index) {
  return hf::numpy_input_fn<F2, L2>(kFeatures, 8, kLabels,
                                    {.batch_size = 4,
                                     .num_epochs = 1,
                                     .shuffle = false,
                                     .num_shards = shards,
                                     .shard_index = index});
}

std::set<std::string> listing(const fs::path& dir) {
  std::set<std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    out.insert(fs::relative(e.path(), dir).string());
  return out;
}

bool has_line_starting(const Lines& lines, const std::string& prefix) {
  return std::any_of(lines.begin(), lines.end(),
                     [&](const auto& l) { return l.text.starts_with(prefix); });
}

}  // namespace

TEST_CASE("with_replicas: rank 0 is the chief, the group's size the replicas, its sum the sum") {
  Lines lines;
  FakeGroup g1(1, 3);
  const Config c =
      hf::with_replicas(Config{.model_dir = "d", .logger = CapturingLogger{&lines}}, g1);
  CHECK_FALSE(c.is_chief);
  CHECK(c.num_worker_replicas == 3);
  std::vector<float> v = {1.0f, 2.0f};
  c.cross_replica_sum(std::span<float>(v));
  CHECK(g1.calls == 1);
  CHECK(g1.sent == std::vector<float>{1.0f, 2.0f});
  FakeGroup g0(0, 1);
  CHECK(hf::with_replicas(Config{.model_dir = "d"}, g0).is_chief);
  CHECK(Config{.model_dir = "d"}.is_chief);  // TF's default: a single process is the chief
  CHECK(error_of<hf::ValueError>([] {
          Config{.model_dir = "d", .num_worker_replicas = 0}.validate();
        }) == "RunConfig: num_worker_replicas must be at least 1, got 0");
}

TEST_CASE("Estimator on two replicas: a non-chief trains from the chief's files and writes none") {
  TempDir dir("replicas");
  Lines lines;
  auto train_input = hf::numpy_input_fn<F2, L2>(
      kFeatures, 8, kLabels, {.batch_size = 4, .num_epochs = std::nullopt, .shuffle = false});
  hf::Estimator chief(classifier_fn,
                      Config{.model_dir = dir.path.string(), .logger = CapturingLogger{&lines}});
  chief.train(train_input, {.steps = 20});
  REQUIRE(fs::exists(dir.path / "model.ckpt-20.index"));
  const auto before = listing(dir.path);
  std::vector<fs::file_time_type> times;
  for (const auto& name : before) times.push_back(fs::last_write_time(dir.path / name));

  lines.clear();
  FakeGroup g(1, 2);
  hf::Estimator worker(classifier_fn, hf::with_replicas(Config{.model_dir = dir.path.string(),
                                                               .log_step_count_steps = 1,
                                                               .logger = CapturingLogger{&lines}},
                                                        g));
  worker.train(train_input, {.steps = 5});
  // Restored at 20, trained 5 steps: the logging hook's lines say step = 20 .. 24.
  CHECK(has_line_starting(lines, "loss = "));
  bool saw20 = false, saw24 = false;
  for (const auto& l : lines) {
    saw20 = saw20 || l.text.find(", step = 20") != std::string::npos;
    saw24 = saw24 || l.text.find(", step = 24") != std::string::npos;
  }
  CHECK(saw20);
  CHECK(saw24);
  CHECK(listing(dir.path) == before);
  std::size_t i = 0;
  for (const auto& name : before) CHECK(fs::last_write_time(dir.path / name) == times[i++]);
}

TEST_CASE("Estimator on two replicas: evaluate on two shards reports the whole set's metrics") {
  TempDir dir("replicas");
  Lines lines;
  hf::Estimator trainer(classifier_fn,
                        Config{.model_dir = dir.path.string(), .logger = CapturingLogger{&lines}});
  trainer.train(hf::numpy_input_fn<F2, L2>(
                    kFeatures, 8, kLabels,
                    {.batch_size = 4, .num_epochs = std::nullopt, .shuffle = true, .seed = 1}),
                {.steps = 30});

  // By hand, from the checkpoint's variables: accuracy over the 8 examples, and the loss, the
  // mean of the two batches' mean cross-entropies (batches of 4, in order).
  const auto reader = hf::io::load_checkpoint(dir.path / "model.ckpt-30");
  const ByHand hand =
      by_hand(reader.get_tensor<float>("dense/kernel"), reader.get_tensor<float>("dense/bias"));
  const int correct = hand.correct;
  const double xent = hand.loss;
  REQUIRE(correct > 0);
  REQUIRE(correct <= 6);  // two examples repeat two others with the other label

  // One process on the whole set, a non-chief so that it writes nothing.
  hf::Estimator whole(
      classifier_fn,
      Config{.model_dir = dir.path.string(), .is_chief = false, .logger = CapturingLogger{&lines}});
  const hf::EvalResult single = whole.evaluate(eval_input(1, 0));
  CHECK(single.at("accuracy") == Approx(correct / 8.0).epsilon(1e-6));
  CHECK(single.loss() == Approx(xent).epsilon(1e-5));
  CHECK_FALSE(fs::exists(dir.path / "eval"));

  // Rank 1 first, its group adding nothing: what it sends is its shard's state. Then rank 0
  // with rank 1's state added, then rank 1 again with rank 0's: both see the whole set.
  FakeGroup g1(1, 2);
  hf::Estimator e1(classifier_fn, hf::with_replicas(Config{.model_dir = dir.path.string(),
                                                           .logger = CapturingLogger{&lines}},
                                                    g1));
  const hf::EvalResult shard1 = e1.evaluate(eval_input(2, 1));
  REQUIRE(g1.calls == 1);
  CHECK(g1.sent.size() == 2 + 2 + 4 * 200);  // loss, accuracy, AUC's 4 x 200 counts
  CHECK(g1.sent[1] == 2.0f);                 // the loss's count: 2 batches of 2 rows
  CHECK(g1.sent[3] == 4.0f);                 // accuracy's count: 4 examples
  CHECK_FALSE(fs::exists(dir.path / "eval"));

  FakeGroup g0(0, 2, g1.sent);
  lines.clear();
  hf::Estimator e0(classifier_fn, hf::with_replicas(Config{.model_dir = dir.path.string(),
                                                           .logger = CapturingLogger{&lines}},
                                                    g0));
  const hf::EvalResult r0 = e0.evaluate(eval_input(2, 0));
  CHECK(r0.global_step == 30);
  CHECK(r0.at("accuracy") == single.at("accuracy"));
  CHECK(r0.at("auc") == single.at("auc"));
  CHECK(r0.loss() == Approx(single.loss()).epsilon(1e-6));
  CHECK(r0.metrics.size() == 3);
  CHECK(has_line_starting(lines, "Saving dict for global step 30: accuracy = "));
  CHECK(listing(dir.path / "eval").size() == 1);  // the chief's event file

  lines.clear();
  g1.other = g0.sent;
  const hf::EvalResult r1 = e1.evaluate(eval_input(2, 1));
  CHECK(r1.at("accuracy") == single.at("accuracy"));
  CHECK(r1.at("auc") == single.at("auc"));
  CHECK(r1.loss() == Approx(single.loss()).epsilon(1e-6));
  CHECK_FALSE(has_line_starting(lines, "Saving dict"));
  CHECK(listing(dir.path / "eval").size() == 1);
  (void)shard1;
}

namespace {
/// A metric without for_each_local_variable: its state cannot be summed.
struct OpaqueMetric {
  static constexpr int num_inputs = 1;
  float v = 0.0f;
  template <class M>
  float update(const Eigen::MatrixBase<M>&) {
    return v += 1.0f;
  }
  float value() const { return v; }
  void reset() { v = 0.0f; }
};
}  // namespace

TEST_CASE("Estimator on replicas: a metric that cannot be summed is refused by name") {
  TempDir dir("replicas");
  Lines lines;
  auto fn = [](F2 x, L2 y, auto mode, auto& vars) {
    auto& dense = hf::nn::get_layer<hf::nn::Dense<"dense", float, 2, 2>>(vars, "dense");
    auto logits = hf::named<"logits">(dense(x));
    auto loss = hf::named<"loss">(hf::sparse_softmax_cross_entropy(y, logits));
    return hf::EstimatorSpec{
        .mode = mode,
        .predictions = logits,
        .loss = loss,
        .train_op = hf::GradientDescentOptimizer(0.5).minimize(loss, vars.global_step()),
        .eval_metric_ops = hf::eval_metric_ops(hf::metric<"opaque">(OpaqueMetric{}, logits))};
  };
  hf::Estimator chief(fn,
                      Config{.model_dir = dir.path.string(), .logger = CapturingLogger{&lines}});
  chief.train(eval_input(1, 0), {.steps = 1});
  FakeGroup g(0, 2);
  hf::Estimator e(
      fn, hf::with_replicas(
              Config{.model_dir = dir.path.string(), .logger = CapturingLogger{&lines}}, g));
  CHECK(error_of<hf::ValueError>([&] { e.evaluate(eval_input(2, 0)); }) ==
        "Estimator.evaluate: metric 'opaque' has no for_each_local_variable, so its local "
        "variables cannot be summed across replicas (RunConfig.cross_replica_sum is set)");
  CHECK(g.calls == 0);
  CHECK_FALSE(fs::exists(dir.path / "eval"));

  // Two replicas declared without a sum: evaluated alone, with a warning saying so.
  lines.clear();
  hf::Estimator alone(fn, Config{.model_dir = dir.path.string(),
                                 .num_worker_replicas = 2,
                                 .logger = CapturingLogger{&lines}});
  (void)alone.evaluate(eval_input(1, 0));
  CHECK(has_line_starting(lines,
                          "Estimator.evaluate: RunConfig.num_worker_replicas is 2 but "
                          "cross_replica_sum is not set"));
}

TEST_CASE("train_and_evaluate refuses a RunConfig of several replicas, before writing anything") {
  TempDir dir("replicas");
  Lines lines;
  FakeGroup g(0, 2);
  hf::Estimator e(classifier_fn, hf::with_replicas(Config{.model_dir = dir.path.string(),
                                                          .save_checkpoints_steps = 5,
                                                          .logger = CapturingLogger{&lines}},
                                                   g));
  CHECK(error_of<hf::ValueError>([&] {
          (void)hf::train_and_evaluate(e, hf::TrainSpec(eval_input(1, 0), 10),
                                       hf::EvalSpec(eval_input(1, 0)));
        }) == "train_and_evaluate: runs locally (non-distributed) only, but the RunConfig has 2 "
              "worker replicas or a cross_replica_sum; on data-parallel ranks call "
              "estimator.train and estimator.evaluate on every rank");
  CHECK(fs::is_empty(dir.path));
  CHECK(g.calls == 0);
}
