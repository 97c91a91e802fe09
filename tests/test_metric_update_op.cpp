// metrics::update_op: a streaming metric's update as a tensor of the model, fetched by a hook or
// written by a training summary. Expected values are counted by hand.
#include <catch2/catch.hpp>
#include <cstdint>
#include <filesystem>
#include <hookfuse/hookfuse.hpp>
#include <hookfuse/io/event_reader.hpp>
#include <string>
#include <vector>

#include "temp_dir.hpp"

namespace hf = hookfuse;
namespace fs = std::filesystem;

TEST_CASE("update_op: accuracy streams over the batches it is computed for") {
  hf::Placeholder<"labels", std::int32_t, 1> labels;  // [batch]
  hf::Placeholder<"predictions", float, 1> classes;   // [batch], class ids as float
  hf::metrics::Accuracy accuracy;
  auto acc = hf::named<"acc">(hf::metrics::update_op(accuracy, labels, classes));
  auto g = hf::bind_forward(3, acc);
  // TF: accuracy over (labels [1, 2, 3], predictions [0, 2, 3]) then (labels [1, 1],
  // predictions [1, 0]) is 3 of 5 = 0.6, not the mean of the batch accuracies (2/3 + 1/2) / 2.
  const std::int32_t l1[3] = {1, 2, 3}, l2[2] = {1, 1};
  const float p1[3] = {0, 2, 3}, p2[2] = {1, 0};
  g.feed<"labels">(l1, 3);
  g.feed<"predictions">(p1, 3);
  CHECK(g.compute<"acc">()(0, 0) == Approx(2.0 / 3.0));
  g.feed<"labels">(l2, 2);
  g.feed<"predictions">(p2, 2);
  CHECK(g.compute<"acc">()(0, 0) == Approx(0.6));
  CHECK(accuracy.value() == Approx(0.6));
}

namespace {
// A run's batch: x = the class scores the accuracy reads, y = the labels.
struct ScoresInput {
  const float* scores;  // [n, 2]
  const std::int32_t* labels;
  std::int64_t n;
  std::int64_t i = -1;
  bool next() { return ++i < n; }
  hf::Index batch_size() const { return 1; }
  template <class G>
  void feed(G& g) {
    g.template feed<"x">(scores + 2 * i, 1, 2);
    g.template feed<"y">(labels + i, 1);
  }
};
}  // namespace

TEST_CASE("update_op: a training summary of a streaming accuracy writes the running value") {
  hookfuse_test::TempDir dir("update_op");
  hf::Placeholder<"x", float, 2> x;         // [batch, 2] class scores
  hf::Placeholder<"y", std::int32_t, 1> y;  // [batch]
  hf::Variable<"w", float, 1, 2, 1> w;
  // Something to train; the accuracy reads the fed scores only, so it is known by hand.
  auto loss = hf::named<"loss">(hf::reduce_mean(hf::square(hf::add(x, w))));
  hf::metrics::Accuracy accuracy;
  auto train_accuracy = hf::summary::scalar<"train_accuracy">(
      hf::named<"train_accuracy">(hf::metrics::update_op(accuracy, y, x)));
  hf::GlobalStep global_step;
  auto train_op = hf::GradientDescentOptimizer(0.01).minimize(loss, global_step);
  // Scores and labels of 4 steps: right, wrong, right, right (arg-max of the scores).
  const float scores[8] = {0.1f, 0.9f, 0.8f, 0.2f, 0.3f, 0.7f, 0.6f, 0.4f};
  const std::int32_t labels[4] = {1, 1, 1, 0};
  {
    hf::MonitoredTrainingSession session(
        train_op, ScoresInput{scores, labels, 4},
        hf::SessionOptions<hf::io::Saver, hf::SteadyClock, hf::NullLogger>{
            .summary_dir = dir.path.string(), .save_summaries_steps = 1, .log_step_count_steps = 0},
        hf::hooks(), train_accuracy);
    while (!session.should_stop()) session.run();
  }
  std::vector<float> written;
  const auto files = hf::io::event_files(dir.path);
  REQUIRE(files.size() == 1);
  for (const auto& e : hf::io::read_events(files[0]))
    for (const auto& v : e.summary.value)
      if (v.tag == "train_accuracy") written.push_back(static_cast<float>(v.scalar().value_or(-1)));
  // Running accuracy after steps 1..4: 1/1, 1/2, 2/3, 3/4.
  REQUIRE(written.size() == 4);
  CHECK(written[0] == Approx(1.0));
  CHECK(written[1] == Approx(0.5));
  CHECK(written[2] == Approx(2.0 / 3.0));
  CHECK(written[3] == Approx(0.75));
}
