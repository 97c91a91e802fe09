// Estimator train / evaluate: y = Wx + b through a model_fn, step accounting, the files written,
// TensorFlow's log lines. Expected numbers are worked out in the tests by hand.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <hookfuse/estimator/estimator.hpp>
#include <hookfuse/hookfuse.hpp>
#include <hookfuse/io/event_reader.hpp>
#include <iterator>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "capturing_logger.hpp"
#include "error_of.hpp"
#include "temp_dir.hpp"

namespace hf = hookfuse;
namespace fs = std::filesystem;
using hookfuse_test::CapturingLogger;
using hookfuse_test::Lines;
using hookfuse_test::TempDir;

namespace {

using X = hf::Placeholder<"x", float, 1>;  // [batch, 1]
using Y = hf::Placeholder<"y", float, 1>;  // [batch, 1]

struct Params {
  double learning_rate = 0.01;
};

// y = W x + b, W and b start at 0 (TF: get_variable(initializer=zeros)).
auto linear_model_fn = [](X x, Y y, auto mode, const Params& params, auto& vars) {
  auto& W = hf::nn::get_variable<"W", float, 1, 1, 2>(vars, hf::nn::zeros{});
  auto& b = hf::nn::get_variable<"b", float, 1, 1, 1>(vars, hf::nn::zeros{});
  auto predictions = hf::named<"predictions">(hf::matmul(x, W) + b);
  auto loss = hf::named<"loss">(hf::mean_squared_error(y, predictions));
  return hf::EstimatorSpec{
      .mode = mode,
      .predictions = predictions,
      .loss = loss,
      .train_op =
          hf::GradientDescentOptimizer(params.learning_rate).minimize(loss, vars.global_step())};
};

std::set<std::string> listing(const fs::path& dir) {
  std::set<std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    out.insert(fs::relative(e.path(), dir).string());
  return out;
}

std::string read_file(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), {});
}

// Records the rows of every batch the session trains on (the "predictions" tensor is [rows, 1]).
struct RowsHook {
  std::vector<long long>* rows;
  hf::SessionRunArgs<"predictions"> before_run(hf::SessionRunContext&) { return {}; }
  void after_run(hf::SessionRunContext&, const hf::SessionRunValues<"predictions">& v) {
    rows->push_back(static_cast<long long>(v.get<"predictions">().rows));
  }
};

auto make_estimator(const fs::path& dir, Lines& lines,
                    std::optional<std::int64_t> save_steps = {}) {
  return hf::Estimator(
      linear_model_fn,
      hf::RunConfig<hf::FakeClock, CapturingLogger>{.model_dir = dir.string(),
                                                    .save_checkpoints_steps = save_steps,
                                                    .logger = CapturingLogger{&lines}},
      Params{0.01});
}

bool has_line(const Lines& lines, const std::string& text) {
  for (const auto& l : lines)
    if (l.text == text) return true;
  return false;
}

}  // namespace

TEST_CASE("Estimator trains y = 2x on four points and evaluates the mean squared error") {
  TempDir dir("estimator");
  const float xs[4] = {1, 2, 3, 4};
  const float ys[4] = {2, 4, 6, 8};
  Lines lines;
  hf::Estimator estimator(linear_model_fn,
                          hf::RunConfig<hf::FakeClock, CapturingLogger>{
                              .model_dir = dir.path.string(), .logger = CapturingLogger{&lines}},
                          Params{0.01});
  // numpy_input_fn(x, y, batch_size=1, num_epochs=None, shuffle=True)
  estimator.train(
      hf::numpy_input_fn<X, Y>(
          xs, 4, ys, {.batch_size = 1, .num_epochs = std::nullopt, .shuffle = true, .seed = 3}),
      {.steps = 1000});
  CHECK(has_line(lines,
                 "Saving checkpoints for 1000 into " + (dir.path / "model.ckpt").string() + "."));
  CHECK(fs::exists(dir.path / "model.ckpt-1000.index"));

  lines.clear();
  const hf::EvalResult r = estimator.evaluate(
      hf::numpy_input_fn<X, Y>(xs, 4, ys, {.batch_size = 1, .num_epochs = 1, .shuffle = false}));
  CHECK(r.global_step == 1000);
  // W and b as restored from the checkpoint, read independently of the Estimator.
  const auto reader = hf::io::load_checkpoint(dir.path / "model.ckpt-1000");
  const float W = reader.get_tensor<float>("W")[0];
  const float b = reader.get_tensor<float>("b")[0];
  CHECK(std::abs(W - 2.0f) < 0.05f);
  CHECK(std::abs(b) < 0.1f);
  // The evaluation loss: batches of one row, so the mean of the four squared errors.
  double mse = 0;
  for (int i = 0; i < 4; ++i) {
    const double e = static_cast<double>(W) * xs[i] + b - ys[i];
    mse += e * e / 4.0;
  }
  CHECK(r.loss() == Approx(mse).epsilon(1e-4));
}

TEST_CASE("Estimator.train: 5 examples in batches of 2 end at global step 3 with model.ckpt-3") {
  TempDir dir("estimator");
  const float xs[5] = {1, 2, 3, 4, 5};
  const float ys[5] = {2, 4, 6, 8, 10};
  Lines lines;
  auto estimator = make_estimator(dir.path, lines);
  std::vector<long long> rows;
  // numpy_input_fn(x, y, batch_size=2, num_epochs=1, shuffle=False): batches of 2, 2 and 1 rows,
  // then the input ends before the 10 steps asked for (TF: OutOfRangeError ends training).
  estimator.train(
      hf::numpy_input_fn<X, Y>(xs, 5, ys, {.batch_size = 2, .num_epochs = 1, .shuffle = false}),
      {.steps = 10}, hf::hooks(RowsHook{&rows}));
  CHECK(rows == std::vector<long long>{2, 2, 1});
  CHECK(fs::exists(dir.path / "model.ckpt-3.index"));
  CHECK(fs::exists(dir.path / "model.ckpt-0.index"));  // saved when the session is created
  CHECK(hf::io::load_checkpoint(dir.path / "model.ckpt-3")
            .get_tensor<std::int64_t>("global_step")[0] == 3);
  // TF's log lines: the first "loss = ..., step = ..." line is at run 1, before the step's
  // increment (the hook fetches global_step before the update): step = 0.
  bool logged_first = false;
  for (const auto& l : lines)
    if (l.text.rfind("loss = ", 0) == 0 && l.text.find(", step = 0") != std::string::npos)
      logged_first = true;
  CHECK(logged_first);
  CHECK(lines.back().text.rfind("Loss for final step: ", 0) == 0);
}

TEST_CASE("Estimator.train: max_steps twice stays at 100 and writes nothing, then steps adds 100") {
  TempDir dir("estimator");
  const float xs[4] = {1, 2, 3, 4};
  const float ys[4] = {2, 4, 6, 8};
  const auto input_fn = hf::numpy_input_fn<X, Y>(
      xs, 4, ys, {.batch_size = 1, .num_epochs = std::nullopt, .shuffle = false});
  Lines lines;
  auto estimator = make_estimator(dir.path, lines, 50);
  estimator.train(input_fn, {.max_steps = 100});
  const auto step_of = [&](const char* prefix) {
    return hf::io::load_checkpoint(dir.path / prefix).get_tensor<std::int64_t>("global_step")[0];
  };
  CHECK(step_of("model.ckpt-100") == 100);
  const auto before = listing(dir.path);
  const std::string state_before = read_file(dir.path / "checkpoint");
  lines.clear();
  estimator.train(input_fn, {.max_steps = 100});
  CHECK(listing(dir.path) == before);
  CHECK(read_file(dir.path / "checkpoint") == state_before);
  REQUIRE(lines.size() == 1);
  CHECK(lines[0].text == "Skipping training since max_steps has already saved.");
  estimator.train(input_fn, {.steps = 100});
  CHECK(step_of("model.ckpt-200") == 200);
  CHECK(hf::io::latest_checkpoint(dir.path)->filename() == "model.ckpt-200");
}

TEST_CASE(
    "Estimator.train: bad steps and max_steps are TensorFlow's ValueErrors, nothing written") {
  TempDir dir("estimator");
  const float xs[1] = {1};
  const float ys[1] = {2};
  const auto input_fn =
      hf::numpy_input_fn<X, Y>(xs, 1, ys, {.batch_size = 1, .num_epochs = 1, .shuffle = false});
  Lines lines;
  auto estimator = make_estimator(dir.path, lines);
  CHECK(hookfuse_test::error_of<hf::ValueError>([&] { estimator.train(input_fn, {.steps = 0}); }) ==
        "Estimator.train: Must specify steps > 0, given: 0");
  CHECK(hookfuse_test::error_of<hf::ValueError>([&] {
          estimator.train(input_fn, {.steps = 1, .max_steps = 2});
        }) == "Estimator.train: Can not provide both steps and max_steps.");
  CHECK(hookfuse_test::error_of<hf::ValueError>([&] {
          estimator.train(input_fn, {.max_steps = -1});
        }) == "Estimator.train: Must specify max_steps > 0, given: -1");
  CHECK(fs::is_empty(dir.path));
}

TEST_CASE("RunConfig: both checkpoint cadences, or no model_dir, refuse to make an Estimator") {
  Lines lines;
  CHECK(hookfuse_test::error_of<hf::ValueError>([&] {
          hf::Estimator e(
              linear_model_fn,
              hf::RunConfig<hf::FakeClock, CapturingLogger>{.model_dir = "d",
                                                            .save_checkpoints_steps = 10,
                                                            .save_checkpoints_secs = 10.0,
                                                            .logger = CapturingLogger{&lines}},
              Params{});
        }) == "RunConfig: save_checkpoints_steps and save_checkpoints_secs cannot be both set.");
  CHECK(hookfuse_test::error_of<hf::ValueError>([&] {
          hf::Estimator e(linear_model_fn, hf::RunConfig<>{}, Params{});
        }).find("model_dir is empty") != std::string::npos);
}

TEST_CASE(
    "Estimator.evaluate: no checkpoint is TensorFlow's error, and two checkpoints give two "
    "events") {
  TempDir dir("estimator");
  const float xs[4] = {1, 2, 3, 4};
  const float ys[4] = {2, 4, 6, 8};
  const auto train_fn = hf::numpy_input_fn<X, Y>(
      xs, 4, ys, {.batch_size = 1, .num_epochs = std::nullopt, .shuffle = false});
  // batches of 3 and 1 rows: TF's loss is the mean of the two batch losses, not of the 4 rows.
  const auto eval_fn =
      hf::numpy_input_fn<X, Y>(xs, 4, ys, {.batch_size = 3, .num_epochs = 1, .shuffle = false});
  Lines lines;
  auto estimator = make_estimator(dir.path, lines);
  CHECK(hookfuse_test::error_of<hf::ValueError>([&] { (void)estimator.evaluate(eval_fn); }) ==
        "Estimator.evaluate: Could not find trained model in model_dir: " + dir.path.string() +
            ".");
  CHECK(fs::is_empty(dir.path));

  estimator.train(train_fn, {.steps = 10});
  const hf::EvalResult first = estimator.evaluate(eval_fn);
  estimator.train(train_fn, {.steps = 20});
  lines.clear();
  const hf::EvalResult second = estimator.evaluate(eval_fn);
  CHECK(first.global_step == 10);
  CHECK(second.global_step == 30);

  // The loss by hand from the checkpoint's W and b: batch 1 holds x = 1, 2, 3, batch 2 x = 4.
  const auto reader = hf::io::load_checkpoint(dir.path / "model.ckpt-30");
  const double W = reader.get_tensor<float>("W")[0];
  const double b = reader.get_tensor<float>("b")[0];
  const auto err2 = [&](int i) {
    const double e = W * xs[i] + b - ys[i];
    return e * e;
  };
  const double batch1 = (err2(0) + err2(1) + err2(2)) / 3.0;
  const double batch2 = err2(3);
  CHECK(second.loss() == Approx((batch1 + batch2) / 2.0).epsilon(1e-5));
  CHECK(second.loss() != Approx((err2(0) + err2(1) + err2(2) + err2(3)) / 4.0).epsilon(1e-5));
  // The log line TF writes: keys sorted, float32 values as numpy prints them.
  const std::string saving = "Saving dict for global step 30: global_step = 30, loss = " +
                             hf::detail::float32_str(second.loss());
  CHECK(has_line(lines, saving));

  const auto files = hf::io::event_files(dir.path / "eval");
  REQUIRE(files.size() == 1);
  std::vector<std::pair<long long, float>> losses;
  for (const hf::io::Event& e : hf::io::read_events(files[0]))
    for (const auto& v : e.summary.value)
      if (v.tag == "loss") losses.emplace_back(static_cast<long long>(e.step), v.simple_value);
  REQUIRE(losses.size() == 2);
  CHECK(losses[0].first == 10);
  CHECK(losses[0].second == first.loss());
  CHECK(losses[1].first == 30);
  CHECK(losses[1].second == second.loss());
}

TEST_CASE("Estimator.predict: one element per example, features only, no file written") {
  TempDir dir("estimator");
  const float xs[4] = {1, 2, 3, 4};
  const float ys[4] = {2, 4, 6, 8};
  Lines lines;
  auto estimator = make_estimator(dir.path, lines);
  estimator.train(hf::numpy_input_fn<X, Y>(
                      xs, 4, ys, {.batch_size = 1, .num_epochs = std::nullopt, .shuffle = false}),
                  {.steps = 50});
  const auto before = listing(dir.path);
  const auto reader = hf::io::load_checkpoint(dir.path / "model.ckpt-50");
  const float W = reader.get_tensor<float>("W")[0];
  const float b = reader.get_tensor<float>("b")[0];
  const float px[3] = {10, 20, 30};
  std::vector<float> got;
  // numpy_input_fn(x, y=None): no labels fed; the model_fn's Y placeholder stays unfed.
  const auto predict_fn = hf::numpy_input_fn<X, Y>(
      px, 3, nullptr, {.batch_size = 2, .num_epochs = 1, .shuffle = false});
  for (const auto& p : estimator.predict(predict_fn))
    got.push_back(static_cast<float>(p.get<"predictions">().item()));
  REQUIRE(got.size() == 3);
  for (int i = 0; i < 3; ++i) CHECK(got[i] == Approx(W * px[i] + b));
  // Batches: two elements, of 2 and 1 rows.
  std::vector<long long> rows;
  for (const auto& p :
       estimator.predict<"predictions">(predict_fn, {.yield_single_examples = false}))
    rows.push_back(static_cast<long long>(p.get<"predictions">().rows));
  CHECK(rows == std::vector<long long>{2, 1});
  CHECK(listing(dir.path) == before);
}

TEST_CASE("Estimator: a model_fn variable outside its VariableStore is refused by name") {
  TempDir dir("estimator");
  const float xs[1] = {1};
  const float ys[1] = {2};
  static hf::Variable<"outside", float, 1, 1> outside;  // not the store's: refused
  auto bad_model_fn = [](X x, Y y, auto mode, hf::nn::VariableStore& vars) {
    auto loss = hf::named<"loss">(hf::mean_squared_error(y, hf::matmul(x, outside)));
    return hf::EstimatorSpec{
        .mode = mode,
        .loss = loss,
        .train_op = hf::GradientDescentOptimizer(0.1).minimize(loss, vars.global_step())};
  };
  Lines lines;
  hf::Estimator estimator(bad_model_fn,
                          hf::RunConfig<hf::FakeClock, CapturingLogger>{
                              .model_dir = dir.path.string(), .logger = CapturingLogger{&lines}});
  const std::string what = hookfuse_test::error_of<hf::ValueError>([&] {
    estimator.train(
        hf::numpy_input_fn<X, Y>(xs, 1, ys, {.batch_size = 1, .num_epochs = 1, .shuffle = false}),
        {.steps = 1});
  });
  CHECK(what.find("'outside'") != std::string::npos);
  CHECK(what.find("VariableStore does not own") != std::string::npos);
  CHECK(fs::is_empty(dir.path));
}

namespace {
using F2 = hf::Placeholder<"features", float, 2>;      // [batch, 2]
using L2 = hf::Placeholder<"label", std::int32_t, 1>;  // [batch], class 0 or 1

// A two-class softmax classifier with accuracy and AUC (TF: tf.metrics.auc(labels,
// probabilities[:, 1])), written as a TensorFlow user would.
auto classifier_fn = [](F2 x, L2 y, auto mode, auto& vars) {
  auto& dense = hf::nn::get_layer<hf::nn::Dense<"dense", float, 2, 2>>(vars, "dense");
  auto logits = hf::named<"logits">(dense(x));
  auto probabilities = hf::named<"probabilities">(hf::softmax(logits));
  auto loss = hf::named<"loss">(hf::sparse_softmax_cross_entropy(y, logits));
  return hf::EstimatorSpec{
      .mode = mode,
      .predictions = hf::predictions(logits, probabilities),
      .loss = loss,
      .train_op = hf::GradientDescentOptimizer(0.5).minimize(loss, vars.global_step()),
      .eval_metric_ops = hf::eval_metric_ops(
          hf::metric<"accuracy">(hf::metrics::Accuracy{}, y, logits),
          hf::metric<"auc">(hf::metrics::AUC{}, y, hf::slice_cols<1>(probabilities)))};
};
}  // namespace

TEST_CASE("Estimator: a two-class model_fn trains, evaluates accuracy and AUC, predicts") {
  TempDir dir("estimator");
  // Class 1 above the line x0 + x1 = 0, class 0 below it.
  const float features[16] = {-1.0f, -0.5f, -0.8f, -1.2f, -1.5f, 0.2f,  0.3f,  -1.4f,
                              1.0f,  0.5f,  0.8f,  1.2f,  1.5f,  -0.2f, -0.3f, 1.4f};
  const std::int32_t labels[8] = {0, 0, 0, 0, 1, 1, 1, 1};
  Lines lines;
  hf::Estimator estimator(classifier_fn,
                          hf::RunConfig<hf::FakeClock, CapturingLogger>{
                              .model_dir = dir.path.string(), .logger = CapturingLogger{&lines}});
  estimator.train(hf::numpy_input_fn<F2, L2>(
                      features, 8, labels,
                      {.batch_size = 4, .num_epochs = std::nullopt, .shuffle = true, .seed = 1}),
                  {.steps = 200});
  // Three unequal batches (3, 3, 2 rows): accuracy streams over the 8 examples.
  const hf::EvalResult r = estimator.evaluate(hf::numpy_input_fn<F2, L2>(
      features, 8, labels, {.batch_size = 3, .num_epochs = 1, .shuffle = false}));
  const auto reader = hf::io::load_checkpoint(dir.path / "model.ckpt-200");
  const auto kernel = reader.get_tensor<float>("dense/kernel");  // [2, 2], row-major
  const auto bias = reader.get_tensor<float>("dense/bias");
  int correct = 0;
  std::vector<float> p1;
  for (int i = 0; i < 8; ++i) {
    const float z0 = features[2 * i] * kernel[0] + features[2 * i + 1] * kernel[2] + bias[0];
    const float z1 = features[2 * i] * kernel[1] + features[2 * i + 1] * kernel[3] + bias[1];
    correct += ((z1 > z0 ? 1 : 0) == labels[i]);
    p1.push_back(1.0f / (1.0f + std::exp(z0 - z1)));
  }
  CHECK(r.at("accuracy") == Approx(correct / 8.0));
  CHECK(correct == 8);  // separable data, 200 steps
  // Every positive scores above every negative: TF's 200-threshold AUC is 1 up to its epsilon
  // (tpr = (tp + 1e-7) / (tp + fn + 1e-7)), unless a positive and a negative share a bucket.
  float min_pos = 1, max_neg = 0;
  for (int k = 0; k < 8; ++k) {
    if (labels[k] == 1)
      min_pos = std::min(min_pos, p1[k]);
    else
      max_neg = std::max(max_neg, p1[k]);
  }
  REQUIRE(static_cast<int>(min_pos * 199) > static_cast<int>(max_neg * 199));
  CHECK(r.at("auc") == Approx(1.0).margin(1e-5));
  CHECK(r.metrics.size() == 3);  // accuracy, auc, loss

  int i = 0;
  for (const auto& p : estimator.predict<"probabilities">(hf::numpy_input_fn<F2, L2>(
           features, 8, nullptr, {.batch_size = 8, .num_epochs = 1, .shuffle = false}))) {
    const hf::TensorValue probs = p.get<"probabilities">();
    REQUIRE(probs.cols == 2);
    CHECK(probs.at(0, 1) == Approx(p1[i]).epsilon(1e-5));
    ++i;
  }
  CHECK(i == 8);
}

TEST_CASE("Estimator: bad inputs are errors naming the thing, and model_dir is left as it was") {
  TempDir dir("estimator");
  const float xs2[4] = {1, 2, 3, 4};  // two examples of two features
  const float ys[2] = {2, 4};
  Lines lines;
  auto estimator = make_estimator(dir.path, lines);

  SECTION("an input whose features do not fit the placeholder") {
    // X has one column; this input gives two per example.
    const auto two_columns = [&] {
      return hf::estimator_input<X, Y>(hf::data::NumpyInputFn<float, float>(
          xs2, 2, 2, ys, {.batch_size = 2, .num_epochs = 1, .shuffle = false}));
    };
    const std::string what = hookfuse_test::error_of<hf::ShapeError>(
        [&] { estimator.train(two_columns, {.steps = 1}); });
    CHECK(what.find("'x'") != std::string::npos);
    CHECK(fs::is_empty(dir.path));
  }
  SECTION("evaluate with a checkpoint_path that does not exist") {
    const auto eval_fn =
        hf::numpy_input_fn<X, Y>(xs2, 2, ys, {.batch_size = 2, .num_epochs = 1, .shuffle = false});
    const std::string missing = (dir.path / "model.ckpt-7").string();
    const std::string what = hookfuse_test::error_of<hf::io::NotFoundError>(
        [&] { (void)estimator.evaluate(eval_fn, {.checkpoint_path = missing}); });
    CHECK(what.find(missing) != std::string::npos);
    CHECK(hookfuse_test::error_of<hf::ValueError>([&] {
            (void)estimator.evaluate(eval_fn, {.steps = 0});
          }) == "Estimator.evaluate: Must specify steps > 0, given: 0");
    CHECK(fs::is_empty(dir.path));
  }
  SECTION("a model_dir that is a regular file") {
    const fs::path file = dir.path / "not_a_directory";
    { std::ofstream(file) << "keep me"; }
    Lines file_lines;
    auto on_file = make_estimator(file, file_lines);
    const auto train_fn =
        hf::numpy_input_fn<X, Y>(xs2, 2, ys, {.batch_size = 1, .num_epochs = 1, .shuffle = false});
    CHECK(hookfuse_test::error_of<hf::ValueError>([&] { on_file.train(train_fn, {.steps = 1}); }) ==
          "Estimator.train: model_dir must be a directory, but " + file.string() +
              " exists and is not one.");
    CHECK(read_file(file) == "keep me");
  }
}

TEST_CASE("Estimator: a newest checkpoint that lost its data file stops train and evaluate") {
  TempDir dir("estimator");
  const float xs[4] = {1, 2, 3, 4};
  const float ys[4] = {2, 4, 6, 8};
  const auto input_fn = hf::numpy_input_fn<X, Y>(
      xs, 4, ys, {.batch_size = 1, .num_epochs = std::nullopt, .shuffle = false});
  Lines lines;
  auto estimator = make_estimator(dir.path, lines, 5);
  estimator.train(input_fn, {.steps = 10});
  const fs::path data = dir.path / "model.ckpt-10.data-00000-of-00001";
  REQUIRE(fs::remove(data));
  const auto before = listing(dir.path);
  const std::string state = read_file(dir.path / "checkpoint");
  // Never a silent restart from step 0: the error names the missing file and the intact one.
  const std::string what = hookfuse_test::error_of<hf::io::NotFoundError>(
      [&] { estimator.train(input_fn, {.steps = 10}); });
  CHECK(what.find(data.filename().string()) != std::string::npos);
  CHECK(what.find("model.ckpt-5") != std::string::npos);
  CHECK(hookfuse_test::error_of<hf::io::NotFoundError>([&] {
          (void)estimator.evaluate(input_fn, {.steps = 1});
        }).find(data.filename().string()) != std::string::npos);
  CHECK(listing(dir.path) == before);
  CHECK(read_file(dir.path / "checkpoint") == state);
}

TEST_CASE("numpy_input_fn over spans checks the sizes before anything reads them") {
  const std::vector<float> xs{1, 2, 3, 4};
  const std::vector<float> ys{2, 4, 6};
  const std::string what = hookfuse_test::error_of<std::invalid_argument>([&] {
    (void)hf::numpy_input_fn<X, Y>(std::span<const float>(xs), std::span<const float>(ys),
                                   {.batch_size = 1, .num_epochs = 1, .shuffle = false});
  });
  CHECK(
      what ==
      "numpy_input_fn: x holds 4 values, expected 3 examples x 1 features of 'x' = 3 (y holds 3)");
  const auto fine =
      hf::numpy_input_fn<X, Y>(std::span<const float>(xs), std::span<const float>(xs.data(), 4),
                               {.batch_size = 1, .num_epochs = 1, .shuffle = false});
  CHECK(fine.num_examples == 4);
}

namespace {
// Which store each mode's call received, and whether its variables carry a gradient matrix.
struct StoreSeen {
  bool forward_store = false;
  bool kernel_has_grad = true;
};
std::map<hf::Mode, StoreSeen> g_seen;

auto recording_fn = [](F2 x, L2 y, auto mode, auto& vars) {
  auto& dense = hf::nn::get_layer<hf::nn::Dense<"dense", float, 2, 2>>(vars, "dense");
  using Store = std::remove_cvref_t<decltype(vars)>;
  g_seen[mode] = {std::is_same_v<Store, hf::nn::ForwardVariableStore>,
                  std::remove_cvref_t<decltype(dense.kernel)>::has_grad};
  auto logits = hf::named<"logits">(dense(x));
  auto loss = hf::named<"loss">(hf::sparse_softmax_cross_entropy(y, logits));
  return hf::EstimatorSpec{
      .mode = mode,
      .predictions = hf::predictions(logits),
      .loss = loss,
      .train_op = hf::GradientDescentOptimizer(0.5).minimize(loss, vars.global_step())};
};
}  // namespace

TEST_CASE("Estimator: EVAL and PREDICT models hold their variables without gradient matrices") {
  // A ForwardVariable is its value alone: a [784, 256] float kernel is 784 * 256 * 4 =
  // 802,816 bytes, where a training Variable holds value and gradient, 1,605,632 bytes.
  STATIC_REQUIRE(sizeof(hf::ForwardVariable<"k", float, 784, 256>) == 802816);
  STATIC_REQUIRE(sizeof(hf::Variable<"k", float, 784, 256>) == 1605632);
  STATIC_REQUIRE(sizeof(hf::nn::Dense<"d", float, 784, 256, false>) == (784 * 256 + 256) * 4);

  TempDir dir("estimator_forward_store");
  const float features[8] = {-1.0f, -0.5f, 1.0f, 0.5f, -0.8f, -1.2f, 0.8f, 1.2f};
  const std::int32_t labels[4] = {0, 1, 0, 1};
  g_seen.clear();
  hf::Estimator estimator(recording_fn,
                          hf::RunConfig<hf::FakeClock, hf::NullLogger>{
                              .model_dir = dir.path.string()});
  const auto input = [&] {
    return hf::numpy_input_fn<F2, L2>(features, 4, labels,
                                      {.batch_size = 2, .num_epochs = 1, .shuffle = false})();
  };
  estimator.train(input, {.steps = 2});
  const hf::EvalResult r = estimator.evaluate(input);
  int n = 0;
  for (const auto& p : estimator.predict(input)) n += static_cast<int>(p.get<"logits">().rows);
  CHECK(n == 4);
  // The EVAL model restored the values TRAIN saved: same loss as computed from the checkpoint.
  const auto reader = hf::io::load_checkpoint(dir.path / "model.ckpt-2");
  const auto k = reader.get_tensor<float>("dense/kernel");
  const auto b = reader.get_tensor<float>("dense/bias");
  double total = 0;
  for (int batch = 0; batch < 2; ++batch) {
    double batch_loss = 0;
    for (int i = 2 * batch; i < 2 * batch + 2; ++i) {
      const double z0 = features[2 * i] * k[0] + features[2 * i + 1] * k[2] + b[0];
      const double z1 = features[2 * i] * k[1] + features[2 * i + 1] * k[3] + b[1];
      const double zy = labels[i] == 1 ? z1 : z0;
      batch_loss += std::log(std::exp(z0) + std::exp(z1)) - zy;
    }
    total += batch_loss / 2;
  }
  CHECK(r.loss() == Approx(total / 2).epsilon(1e-5));
  REQUIRE(g_seen.size() == 3);
  CHECK_FALSE(g_seen[hf::Mode::train].forward_store);
  CHECK(g_seen[hf::Mode::train].kernel_has_grad);
  CHECK(g_seen[hf::Mode::eval].forward_store);
  CHECK_FALSE(g_seen[hf::Mode::eval].kernel_has_grad);
  CHECK(g_seen[hf::Mode::predict].forward_store);
  CHECK_FALSE(g_seen[hf::Mode::predict].kernel_has_grad);
}
