// tests/test_feeds.cpp: checked feeding (issue 8): every fed input is checked before anything
// reads it, as TensorFlow checks a feed_dict: the data's width against the placeholder's, the
// same row count for every placeholder of a step, every placeholder the step reads fed, an
// input holding every tensor its feeds name; the caller-fed session (sess.run(train_op,
// feed_dict=...)); fetch before any step.
//
// Each case would read out of bounds (or through a null pointer) without its check: run under
// -fsanitize=address,undefined, a missing check shows as a sanitizer report.
#include <catch2/catch.hpp>

#include "error_of.hpp"
#include "lr_model.hpp"
#include <cstdint>
#include <functional>
#include <hookfuse/data/input_fn.hpp>
#include <hookfuse/hookfuse.hpp>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

namespace hf = hookfuse;
using Catch::Matchers::Contains;

namespace {

using hookfuse_test::error_of;

constexpr int kIn = 784;
constexpr int kOut = 10;

/// logits = x W + b over Placeholder<"x", float, 784>, with int32 labels: the model.
struct Classifier {
  hf::Placeholder<"x", float, kIn> x;
  hf::Placeholder<"labels", std::int32_t, 1> labels;
  hf::Variable<"W", float, hf::Dynamic, hf::Dynamic> W{kIn, kOut};
  hf::Variable<"b", float, 1, kOut> b;
  hf::GlobalStep global_step;

  Classifier() { W.value.setConstant(0.5f); }
  auto logits() { return hf::named<"logits">(hf::matmul(x, W) + b); }
  auto loss() { return hf::named<"loss">(hf::sparse_softmax_cross_entropy(labels, logits())); }
  auto accuracy() { return hf::named<"accuracy">(hf::accuracy(labels, logits())); }
  /// Reads no placeholder: computable before any step.
  auto w_mean() { return hf::named<"w_mean">(hf::reduce_mean(W)); }
  auto train_op() { return hf::GradientDescentOptimizer(0.1).minimize(loss(), global_step); }
};

/// `rows` examples of `cols` pixels (all 0.25) and labels 0, 1, 2, ...
struct Batch {
  std::vector<float> x;
  std::vector<std::int32_t> y;
  Batch(int rows, int cols, int label_rows)
      : x(static_cast<std::size_t>(rows * cols), 0.25f), y(static_cast<std::size_t>(label_rows)) {
    for (int i = 0; i < label_rows; ++i) y[static_cast<std::size_t>(i)] = i % kOut;
  }
};

}  // namespace

TEST_CASE("feeds: a 400-wide and a 2352-wide batch into Placeholder<x, float, 784> are refused",
          "[feeds]") {
  Classifier m;
  auto g = hf::bind(8, m.loss());
  for (const int width : {400, 2352}) {
    CAPTURE(width);
    const Batch batch(4, width, 4);
    const std::string msg = error_of<hf::ShapeError>(
        [&] { g.feed<"x">(batch.x.data(), 4, width); });
    CHECK_THAT(msg, Contains("'x'") && Contains("[4, " + std::to_string(width) + "]") &&
                        Contains("[?, 784] float32"));
    CHECK_FALSE(g.fed<"x">());  // nothing was pointed at the data
    // The same through the session-level feed of a container: the width is size / rows.
    const auto f = hf::feed<"x">(batch.x, 4);
    CHECK(f.cols == width);
    CHECK_THROWS_AS(f.apply(g), hf::ShapeError);
    // A forward pass now would read the unfed placeholder: refused too.
    CHECK_THROWS_AS(g.forward(), hf::ShapeError);
  }
}

TEST_CASE("feeds: a NumpyInputFn of 400 features under Placeholder<x, 784> fails at session "
          "construction",
          "[feeds]") {
  Classifier m;
  const std::vector<std::uint8_t> pixels(6 * 400, 7), labels{0, 1, 2, 3, 4, 5};
  hf::data::NumpyInputFn<float> input(pixels.data(), 6, 400, labels.data(),
                                      {.batch_size = 3, .shuffle = false});
  const std::string msg = error_of<hf::ShapeError>([&] {
    hf::MonitoredTrainingSession session(m.train_op(), hf::feeds<"x", "labels">(input),
                                         hf::hooks());
  });
  CHECK_THAT(msg, Contains("'x'") && Contains("400 columns") && Contains("[?, 784]"));
  CHECK(m.global_step.value == 0);
}

TEST_CASE("feeds: 4 feature rows with 3 label rows are refused before the forward pass",
          "[feeds]") {
  Classifier m;
  const Batch batch(4, kIn, 3);
  SECTION("graph") {
    auto g = hf::bind(8, m.loss());
    g.feed<"x">(batch.x.data(), 4, kIn);
    g.feed<"labels">(batch.y.data(), 3, 1);
    const std::string msg = error_of<hf::ShapeError>([&] { g.forward(); });
    CHECK_THAT(msg, Contains("different row counts") && Contains("'x' 4 rows") &&
                        Contains("'labels' 3 rows"));
    // Listed in tape order, separated by "; ", nothing after the last (docs/inputs.md).
    CHECK_THAT(msg, Catch::Matchers::EndsWith(": 'labels' 3 rows; 'x' 4 rows"));
  }
  SECTION("caller-fed session") {
    hf::MonitoredTrainingSession session(m.train_op(), hf::caller_feeds(8), hf::hooks());
    const std::string msg = error_of<hf::ShapeError>(
        [&] { session.run(hf::feed<"x">(batch.x, 4), hf::feed<"labels">(batch.y, 3)); });
    CHECK_THAT(msg, Contains("'x' 4 rows") && Contains("'labels' 3 rows"));
    CHECK(m.global_step.value == 0);  // no step ran
    CHECK(m.W.value(0, 0) == 0.5f);   // no update
  }
}

TEST_CASE("feeds: a NumpyInputFn<float> without labels under feeds<x, labels> fails at session "
          "construction",
          "[feeds]") {
  Classifier m;
  const std::vector<float> x(5 * kIn, 0.5f);
  hf::data::NumpyInputFn<float> input(x.data(), 5, kIn, {.batch_size = 2, .shuffle = false});
  REQUIRE_FALSE(input.has_labels());
  const std::string msg = error_of<std::invalid_argument>([&] {
    hf::MonitoredTrainingSession session(m.train_op(), hf::feeds<"x", "labels">(input),
                                         hf::hooks());
  });
  CHECK_THAT(msg, Contains("'labels'") && Contains("no tensor"));
}

namespace {
/// A hand-written input that forgets to feed the labels.
struct ForgetsLabels {
  std::vector<float> x = std::vector<float>(2 * kIn, 0.1f);
  bool next() { return true; }
  hf::Index batch_size() const { return 2; }
  template <class G>
  void feed(G& g) {
    g.template feed<"x">(x.data(), 2, kIn);
  }
};
}  // namespace

TEST_CASE("feeds: a placeholder the step reads but no one fed is an error", "[feeds]") {
  Classifier m;
  const Batch batch(2, kIn, 2);
  SECTION("graph") {
    auto g = hf::bind(8, m.loss());
    g.feed<"x">(batch.x.data(), 2, kIn);
    const std::string msg = error_of<hf::ShapeError>([&] { g.forward(); });
    CHECK_THAT(msg, Contains("forward pass") && Contains("'labels'") && Contains("not fed"));
  }
  SECTION("hand-written input") {
    hf::MonitoredTrainingSession session(m.train_op(), ForgetsLabels{}, hf::hooks());
    CHECK_THROWS_WITH(session.run(), Contains("'labels'") && Contains("not fed"));
    CHECK(m.global_step.value == 0);
  }
  SECTION("caller-fed session: feeds of an earlier run do not carry over") {
    hf::MonitoredTrainingSession session(m.train_op(), hf::caller_feeds(8), hf::hooks());
    session.run(hf::feed<"x">(batch.x, 2), hf::feed<"labels">(batch.y, 2));
    CHECK(m.global_step.value == 1);
    CHECK_THROWS_WITH(session.run(hf::feed<"x">(batch.x, 2)),
                      Contains("'labels'") && Contains("not fed"));
    CHECK(m.global_step.value == 1);
  }
}

TEST_CASE("feeds: rows above the bound capacity are an error", "[feeds]") {
  Classifier m;
  const Batch batch(9, kIn, 9);
  hf::MonitoredTrainingSession session(m.train_op(), hf::caller_feeds(8), hf::hooks());
  CHECK_THROWS_WITH(session.run(hf::feed<"x">(batch.x, 9), hf::feed<"labels">(batch.y, 9)),
                    Contains("'x'") && Contains("9 rows") && Contains("up to 8"));
  CHECK_THROWS_AS(hf::caller_feeds(0), std::invalid_argument);
}

TEST_CASE("caller-fed session: one SGD step on y = W x + b matches the hand computation",
          "[feeds]") {
  // loss = (y - (W x + b))^2 for x = 1, y = 2 from W = b = 0: dW = db = -2 (2 - 0) = -4;
  // SGD 0.1 gives W = b = 0.4. The second run feeds x = 2, y = 4 as a [1, 1] Eigen matrix:
  // prediction 1.2, error -2.8, dW = 2 * -2.8 * 2 = -11.2, db = -5.6: W = 1.52, b = 0.96.
  hf::Placeholder<"x", float, 1> x;
  hf::Placeholder<"y", float, 1> y;
  hf::Variable<"W", float, 1, 1> W;
  hf::Variable<"b", float, 1, 1> b;
  hf::GlobalStep gs;
  auto loss = hf::named<"loss">(hf::mean_squared_error(y, hf::matmul(x, W) + b));
  hf::MonitoredTrainingSession session(hf::GradientDescentOptimizer(0.1).minimize(loss, gs),
                                       hf::caller_feeds(4), hf::hooks());
  const float x1 = 1.0f, y1 = 2.0f;
  session.run(hf::feed<"x">(&x1, 1, 1), hf::feed<"y">(&y1, 1));
  CHECK(W.value(0, 0) == Approx(0.4));
  CHECK(b.value(0, 0) == Approx(0.4));
  Eigen::Matrix<float, 1, 1> x2, y2;
  x2 << 2.0f;
  y2 << 4.0f;
  session.run(hf::feed<"x">(x2), hf::feed<"y">(y2));
  CHECK(W.value(0, 0) == Approx(1.52));
  CHECK(b.value(0, 0) == Approx(0.96));
  CHECK(session.global_step() == 2);
  CHECK(session.fetch<"loss">().item() == Approx(2.8 * 2.8));  // this run's loss
}

TEST_CASE("fetch before any step computes what needs no input and refuses what does",
          "[feeds][fetch]") {
  Classifier m;
  const std::vector<std::uint8_t> pixels(3 * kIn, 51), labels{1, 2, 3};
  hf::data::NumpyInputFn<float> input(pixels.data(), 3, kIn, labels.data(),
                                      {.batch_size = 2, .shuffle = false});
  hf::MonitoredTrainingSession session(m.train_op(), hf::feeds<"x", "labels">(input),
                                       hf::hooks(), m.accuracy(), m.w_mean());
  CHECK(session.fetch<"w_mean">().item() == 0.5f);  // W is all 0.5
  const std::string msg = error_of<hf::ShapeError>([&] { session.fetch<"accuracy">(); });
  CHECK_THAT(msg, Contains("fetch 'accuracy'") && Contains("'labels' ([?, 1] int32), 'x' ([?, 784] float32)") &&
                      Contains("not fed"));
  CHECK_THROWS_WITH(session.fetch<"loss">(), Contains("fetch 'loss'"));
  // After a step the same fetch is this batch's value: logits are all equal (every pixel the
  // same, b = 0), so the prediction is class 0 (the first maximum) and no label is 0.
  session.run();
  CHECK(session.fetch<"accuracy">().item() == 0.0f);
}

TEST_CASE("fetch<accuracy> on a session whose input was empty throws, naming the placeholder",
          "[feeds][fetch]") {
  Classifier m;
  // Zero examples, with a (non-null) labels array: a features-and-labels input that is empty.
  const std::uint8_t pixels[1] = {0}, labels[1] = {0};
  hf::data::NumpyInputFn<float> input(pixels, 0, kIn, labels, {.batch_size = 4, .shuffle = true});
  REQUIRE(input.has_labels());
  hf::MonitoredTrainingSession session(m.train_op(), hf::feeds<"x", "labels">(input),
                                       hf::hooks(), m.accuracy());
  session.run();  // end of input at once
  CHECK(session.should_stop());
  CHECK(m.global_step.value == 0);
  CHECK_THROWS_WITH(session.fetch<"accuracy">(),
                    Contains("fetch 'accuracy'") && Contains("'x'") && Contains("not fed"));
}

TEST_CASE("named feature columns feed the placeholders of their names", "[feeds][input_fn]") {
  // Example i: x1 = {i, 1}, x2 = {i}, y = 3 i + 1. 7 examples, batch 3, 2 epochs: 6 steps.
  std::vector<float> x1, x2, y;
  for (int i = 0; i < 7; ++i) {
    x1.push_back(static_cast<float>(i));
    x1.push_back(1.0f);
    x2.push_back(static_cast<float>(i));
    y.push_back(3.0f * static_cast<float>(i) + 1.0f);
  }
  namespace data = hf::data;
  auto input = data::numpy_input_fn(
      7, std::tuple{data::column<"x1">(x1.data(), 2), data::column<"x2">(x2.data(), 1)}, y.data(),
      {.batch_size = 3, .num_epochs = 2, .shuffle = true, .seed = 1});
  hf::Placeholder<"x1", float, 2> p1;
  hf::Placeholder<"x2", float, 1> p2;
  hf::Placeholder<"y", float, 1> target;
  hf::Variable<"W1", float, 2, 1> W1;
  hf::Variable<"W2", float, 1, 1> W2;
  hf::GlobalStep gs;
  auto loss = hf::named<"loss">(
      hf::mean_squared_error(target, hf::matmul(p1, W1) + hf::matmul(p2, W2)));
  // The prediction error x1 . W1 + x2 W2 - y at W = 0 is -y: mean of y^2 over the batch.
  hf::MonitoredTrainingSession session(hf::GradientDescentOptimizer(0.0).minimize(loss, gs),
                                       hf::feeds<"x1", "x2", "y">(input), hf::hooks());
  int steps = 0;
  while (!session.should_stop()) {
    session.run();
    if (session.should_stop()) break;
    ++steps;
    double expected = 0;
    const float* t = input.labels_data();
    for (std::int64_t r = 0; r < input.rows(); ++r)
      expected += static_cast<double>(t[r]) * static_cast<double>(t[r]);
    expected /= static_cast<double>(input.rows());
    CHECK(session.fetch<"loss">().item() == Approx(expected));
  }
  CHECK(steps == 6);
  CHECK(gs.value == 6);
}

namespace {
/// Fetches "z_sum", a metric that reads placeholder "z" (not the loss), in every run while `ask`
/// holds (SessionRunArgs::none() otherwise); counts the after_run calls it gets.
struct FetchesZ {
  bool ask = true;
  int after_runs = 0;
  hf::SessionRunArgs<"z_sum"> before_run(hf::SessionRunContext&) {
    return ask ? hf::SessionRunArgs<"z_sum">{} : hf::SessionRunArgs<"z_sum">::none();
  }
  void after_run(hf::SessionRunContext&, const hf::SessionRunValues<"z_sum">&) { ++after_runs; }
};
/// Feeds x and labels (2 rows each) and nothing else.
struct FeedsXAndLabels {
  Batch batch{2, kIn, 2};
  bool next() { return true; }
  hf::Index batch_size() const { return 2; }
  template <class G>
  void feed(G& g) {
    g.template feed<"x">(batch.x.data(), 2, kIn);
    g.template feed<"labels">(batch.y.data(), 2);
  }
};
}  // namespace

TEST_CASE("feeds: a placeholder read only by a step's fetch is checked before the forward pass",
          "[feeds][fetch]") {
  // W and b are updated in the backward pass (SGD folded in), so a check after it would come
  // too late: the weights must be as they were, and no hook must see an after_run.
  Classifier m;
  hf::Placeholder<"z", float, 3> z;
  auto z_sum = hf::named<"z_sum">(hf::reduce_sum(z));
  const Batch batch(2, kIn, 2);
  const std::vector<float> zs(3 * 3, 1.0f);  // 3 rows of z
  FetchesZ hook;
  std::string msg;
  SECTION("a hook's fetch, with an input object that does not feed z") {
    hf::MonitoredTrainingSession session(m.train_op(), FeedsXAndLabels{},
                                         hf::hooks(std::ref(hook)), z_sum);
    msg = error_of<hf::ShapeError>([&] { session.run(); });
    CHECK_THAT(msg, Contains("fetch 'z_sum'") && Contains("'z' ([?, 3] float32)") &&
                        Contains("not fed"));
  }
  SECTION("a hook's fetch, caller-fed without z") {
    hf::MonitoredTrainingSession session(m.train_op(), hf::caller_feeds(8),
                                         hf::hooks(std::ref(hook)), z_sum);
    msg = error_of<hf::ShapeError>(
        [&] { session.run(hf::feed<"x">(batch.x, 2), hf::feed<"labels">(batch.y, 2)); });
    CHECK_THAT(msg, Contains("fetch 'z_sum'") && Contains("'z'") && Contains("not fed"));
  }
  SECTION("the caller's fetch run<z_sum>(), without z") {
    hf::MonitoredTrainingSession session(m.train_op(), hf::caller_feeds(8), hf::hooks(), z_sum);
    msg = error_of<hf::ShapeError>([&] {
      (void)session.run<"loss", "z_sum">(hf::feed<"x">(batch.x, 2),
                                          hf::feed<"labels">(batch.y, 2));
    });
    CHECK_THAT(msg, Contains("fetch 'z_sum'") && Contains("'z'") && Contains("not fed"));
  }
  SECTION("z fed, with 3 rows where x and labels have 2") {
    hf::MonitoredTrainingSession session(m.train_op(), hf::caller_feeds(8),
                                         hf::hooks(std::ref(hook)), z_sum);
    msg = error_of<hf::ShapeError>([&] {
      session.run(hf::feed<"x">(batch.x, 2), hf::feed<"labels">(batch.y, 2),
                  hf::feed<"z">(zs, 3));
    });
    CHECK_THAT(msg, Contains("different row counts") && Contains("'x' 2 rows") &&
                        Contains("'labels' 2 rows") && Contains("'z' 3 rows"));
  }
  CHECK(m.global_step.value == 0);
  CHECK(m.W.value.isConstant(0.5f, 0.0f));  // as the constructor left them
  CHECK(m.b.value.isZero(0.0f));
  CHECK(hook.after_runs == 0);
}

TEST_CASE("feeds: an unfed placeholder that no active fetch of the step reads is no error",
          "[feeds][fetch]") {
  Classifier m;
  hf::Placeholder<"z", float, 3> z;
  auto z_sum = hf::named<"z_sum">(hf::reduce_sum(z));
  const Batch batch(2, kIn, 2);
  FetchesZ hook;
  hook.ask = false;  // the hook fetches z_sum in no run
  hf::MonitoredTrainingSession session(m.train_op(), hf::caller_feeds(8),
                                       hf::hooks(std::ref(hook)), z_sum);
  session.run(hf::feed<"x">(batch.x, 2), hf::feed<"labels">(batch.y, 2));
  CHECK(m.global_step.value == 1);
  CHECK(hook.after_runs == 1);
  // z fed with the batch's 2 rows and the hook asking: the fetch is z's sum, 2 x 3 ones.
  hook.ask = true;
  const std::vector<float> zs(2 * 3, 1.0f);
  session.run(hf::feed<"x">(batch.x, 2), hf::feed<"labels">(batch.y, 2), hf::feed<"z">(zs, 2));
  CHECK(m.global_step.value == 2);
  CHECK(hook.after_runs == 2);
  CHECK(session.fetch<"z_sum">().item() == 6.0f);
}

TEST_CASE("feeds: the graph is bound for the input's capacity, a short last batch trains",
          "[feeds][input_fn]") {
  // y = W x + b with W = b = 0 and learning rate 0: each step's loss is mean(y^2) over its
  // batch. Targets 1..5, in order.
  hookfuse_test::LrModel lr;
  const std::vector<float> xs{1, 2, 3, 4, 5}, ys{1, 2, 3, 4, 5};
  SECTION("batch_size 2 over 5 examples: batches of 2, 2 and 1 rows, capacity 2") {
    hf::data::NumpyInputFn<float, float> input(
        xs.data(), 5, 1, ys.data(), {.batch_size = 2, .num_epochs = 1, .shuffle = false});
    hf::MonitoredTrainingSession session(lr.train_op(), hf::feeds<"x", "y">(input), hf::hooks());
    CHECK(session.graph().capacity() == 2);
    // A step's values stay valid until the next run: each is read before the next.
    const double expected[3] = {(1.0 + 4.0) / 2, (9.0 + 16.0) / 2, 25.0};  // the last: one row
    for (const double loss : expected) {
      const auto values = session.run<"loss">();
      REQUIRE(values);
      CHECK(values->get<"loss">().item() == Approx(loss));
    }
    CHECK_FALSE(session.run<"loss">());  // end of input
    CHECK(session.global_step() == 3);
  }
  SECTION("batch_size 8 over 5 examples: one batch of 5; bound for 5 rows, not 8") {
    hf::data::NumpyInputFn<float, float> input(
        xs.data(), 5, 1, ys.data(), {.batch_size = 8, .num_epochs = 1, .shuffle = false});
    REQUIRE(input.capacity() == 5);
    hf::MonitoredTrainingSession session(lr.train_op(), hf::feeds<"x", "y">(input), hf::hooks());
    CHECK(session.graph().capacity() == 5);
    const auto only = session.run<"loss">();
    REQUIRE(only);
    CHECK(only->get<"loss">().item() == Approx((1.0 + 4.0 + 9.0 + 16.0 + 25.0) / 5));
    CHECK_FALSE(session.run());
  }
}
