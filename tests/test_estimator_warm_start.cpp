// Estimator(warm_start_from = WarmStartSettings{...}): TensorFlow's warm_start rules
// (warm_starting_util.py warm_start, _get_grouped_variables) over a model trained by another
// Estimator; expected values are read from that model's checkpoint with io::load_checkpoint.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <hookfuse/estimator/estimator.hpp>
#include <hookfuse/estimator/warm_start_settings.hpp>
#include <hookfuse/hookfuse.hpp>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "capturing_logger.hpp"
#include "error_of.hpp"
#include "temp_dir.hpp"

namespace hf = hookfuse;
namespace fs = std::filesystem;
using hookfuse_test::CapturingLogger;
using hookfuse_test::error_of;
using hookfuse_test::Lines;
using hookfuse_test::TempDir;

namespace {

using X = hf::Placeholder<"x", float, 2>;  // [batch, 2]
using Y = hf::Placeholder<"y", float, 1>;  // [batch, 1]

struct Params {
  double learning_rate = 0.05;
};

// predictions = (x dense/kernel + dense/bias) * <Scale>, Momentum(lr, 0.9). Initial values:
// kernel 0.5, bias 0, scale 1.
template <hf::fixed_string Scale>
auto model_fn = [](X x, Y y, auto mode, const Params& params, auto& vars) {
  auto& W = hf::nn::get_variable<"dense/kernel", float, 2, 1, 2>(vars, hf::nn::constant{0.5});
  auto& b = hf::nn::get_variable<"dense/bias", float, 1, 1, 1>(vars, hf::nn::zeros{});
  auto& s = hf::nn::get_variable<Scale, float, 1, 1, 2>(vars, hf::nn::constant{1.0});
  auto predictions = hf::named<"predictions">(hf::matmul(hf::matmul(x, W) + b, s));
  auto loss = hf::named<"loss">(hf::mean_squared_error(y, predictions));
  return hf::EstimatorSpec{
      .mode = mode,
      .predictions = predictions,
      .loss = loss,
      .train_op =
          hf::MomentumOptimizer(params.learning_rate, 0.9).minimize(loss, vars.global_step())};
};

using Config = hf::RunConfig<hf::FakeClock, CapturingLogger>;

Config config(const fs::path& dir, Lines& lines) {
  return Config{.model_dir = dir.string(), .logger = CapturingLogger{&lines}};
}

const float train_xs[8] = {1, 2, 2, 1, 3, 1, 1, 3};
const float train_ys[4] = {4, 5, 7, 5};
// One example at x = (0, 0), y = 1: dense/kernel's gradient is 0.
const float zero_x[2] = {0, 0};
const float one_y[1] = {1};

auto train_input() {
  return hf::numpy_input_fn<X, Y>(train_xs, 4, train_ys,
                                  {.batch_size = 2, .num_epochs = std::nullopt, .shuffle = false});
}
auto zero_input() {
  return hf::numpy_input_fn<X, Y>(zero_x, 1, one_y,
                                  {.batch_size = 1, .num_epochs = std::nullopt, .shuffle = false});
}

std::vector<float> tensor(const fs::path& prefix, const std::string& name) {
  return hf::io::load_checkpoint(prefix).get_tensor<float>(name);
}

// Model A ("out/scale"), trained 20 steps at lr 0.005: every variable and slot moved.
fs::path train_a(const fs::path& dir) {
  Lines lines;
  hf::Estimator a(model_fn<"out/scale">, config(dir, lines), Params{0.005});
  a.train(train_input(), {.steps = 20});
  return dir / "model.ckpt-20";
}

bool has_line(const Lines& lines, const std::string& text) {
  for (const auto& l : lines)
    if (l.text == text) return true;
  return false;
}

bool empty_dir(const fs::path& dir) { return !fs::exists(dir) || fs::is_empty(dir); }

}  // namespace

TEST_CASE("WarmStartSettings dense/.* takes dense/* from A, the rest fresh, step 0, fresh slots") {
  TempDir dir_a("ws_a"), dir_b("ws_b");
  const fs::path a = train_a(dir_a.path);
  const auto a_kernel = tensor(a, "dense/kernel");
  const auto a_bias = tensor(a, "dense/bias");
  REQUIRE(tensor(a, "out/scale")[0] != 1.0f);
  REQUIRE(tensor(a, "dense/kernel/Momentum")[0] != 0.0f);

  // B: learning rate 0 keeps the variables at their starting values through one step.
  Lines lines;
  hf::Estimator b(model_fn<"out/scale">, config(dir_b.path, lines), Params{0.0},
                  hf::WarmStartSettings{dir_a.path.string(), "dense/.*"});
  b.train(zero_input(), {.steps = 1});
  const fs::path ckpt = dir_b.path / "model.ckpt-1";  // global step 0 + 1, not 20 + 1
  REQUIRE(fs::exists(ckpt.string() + ".index"));
  CHECK(hf::io::load_checkpoint(ckpt).get_tensor<std::int64_t>("global_step") ==
        std::vector<std::int64_t>{1});
  CHECK_FALSE(fs::exists(dir_b.path / "model.ckpt-21.index"));
  CHECK(tensor(ckpt, "dense/kernel") == a_kernel);
  CHECK(tensor(ckpt, "dense/bias") == a_bias);
  CHECK(tensor(ckpt, "out/scale") == std::vector<float>{1.0f});
  // Fresh slots: accum = 0 * 0.9 + g; g of dense/kernel is 0 at x = (0, 0), and g of
  // dense/bias is 2 (b * s - y) s with s = 1.
  CHECK(tensor(ckpt, "dense/kernel/Momentum") == std::vector<float>{0.0f, 0.0f});
  CHECK(tensor(ckpt, "dense/bias/Momentum")[0] == Approx(2.0f * (a_bias[0] - 1.0f)));
  CHECK(has_line(lines, "Warm-starting from: " + dir_a.path.string()));
  CHECK(has_line(lines, "Warm-starting variables only in TRAINABLE_VARIABLES."));
  CHECK(has_line(lines, "Warm-started 2 variables."));
}

TEST_CASE("WarmStartSettings with a list of regexes and with a checkpoint prefix") {
  TempDir dir_a("ws_a"), dir_b("ws_b");
  const fs::path a = train_a(dir_a.path);
  Lines lines;
  // A list: each entry a regex matched at the start of the name; "out/" selects out/scale.
  hf::Estimator b(model_fn<"out/scale">, config(dir_b.path, lines), Params{0.0},
                  hf::WarmStartSettings{a.string(), {"dense/kernel", "out/"}});
  b.train(zero_input(), {.steps = 1});
  const fs::path ckpt = dir_b.path / "model.ckpt-1";
  CHECK(tensor(ckpt, "dense/kernel") == tensor(a, "dense/kernel"));
  CHECK(tensor(ckpt, "out/scale") == tensor(a, "out/scale"));
  CHECK(tensor(ckpt, "dense/bias") == std::vector<float>{0.0f});
  CHECK(has_line(lines, "Warm-started 2 variables."));
  CHECK_FALSE(has_line(lines, "Warm-starting variables only in TRAINABLE_VARIABLES."));
}

TEST_CASE("WarmStartSettings selection follows re.match on the tensor name") {
  const std::vector<std::string> names = {"dense/kernel", "dense_1/kernel", "out/scale"};
  using V = std::vector<std::string>;
  CHECK(hf::WarmStartSettings{"d"}.selected(names) == names);
  CHECK(hf::WarmStartSettings{"d", "dense"}.selected(names) == V{"dense/kernel", "dense_1/kernel"});
  CHECK(hf::WarmStartSettings{"d", "kernel"}.selected(names).empty());         // anchored at start
  CHECK(hf::WarmStartSettings{"d", "dense/kernel$"}.selected(names).empty());  // "...:0"
  CHECK(hf::WarmStartSettings{"d", ".*kernel:0$"}.selected(names) ==
        V{"dense/kernel", "dense_1/kernel"});
  CHECK(hf::WarmStartSettings{"d", {"out", "dense/"}}.selected(names) ==
        V{"dense/kernel", "out/scale"});
  // None: every variable is selected (for the rename check) but none is warm-started.
  const hf::WarmStartSettings none{"d", nullptr, {{"out/scale", "old/scale"}}};
  CHECK(none.selected(names) == names);
  CHECK(none.assignment_map(names).empty());
  CHECK(hf::WarmStartSettings{"d", ""}.assignment_map(names).empty());
  CHECK(hf::WarmStartSettings{"d", hf::VarsToWarmStart(std::vector<std::string>{})}
            .assignment_map(names)
            .empty());
  CHECK(hf::WarmStartSettings{"d", "out", {{"out/scale", "old/scale"}}}.assignment_map(names) ==
        hf::io::AssignmentMap{{"old/scale", "out/scale"}});
  const std::string bad = error_of<hf::ValueError>([&] {
    (void)hf::WarmStartSettings{"d", "dense/("}.selected(names);
  });
  CHECK_THAT(bad, Catch::Contains("vars_to_warm_start 'dense/(' is not a regular expression"));
}

TEST_CASE("WarmStartSettings var_name_to_prev_var_name renames, and an unused entry is an error") {
  TempDir dir_a("ws_a"), dir_b("ws_b");
  const fs::path a = train_a(dir_a.path);
  Lines lines;
  {
    hf::Estimator b(
        model_fn<"head/scale">, config(dir_b.path, lines), Params{0.0},
        hf::WarmStartSettings{dir_a.path.string(), ".*", {{"head/scale", "out/scale"}}});
    b.train(zero_input(), {.steps = 1});
    const fs::path ckpt = dir_b.path / "model.ckpt-1";
    CHECK(tensor(ckpt, "head/scale") == tensor(a, "out/scale"));
    CHECK(tensor(ckpt, "dense/kernel") == tensor(a, "dense/kernel"));
    CHECK(tensor(ckpt, "dense/bias") == tensor(a, "dense/bias"));
    CHECK(has_line(lines, "Warm-started 3 variables."));
  }
  fs::remove_all(dir_b.path);
  SECTION("a misspelt entry") {
    hf::Estimator b(model_fn<"head/scale">, config(dir_b.path, lines), Params{0.0},
                    hf::WarmStartSettings{dir_a.path.string(), ".*", {{"head/scal", "out/scale"}}});
    const std::string msg = error_of<hf::ValueError>([&] { b.train(zero_input(), {.steps = 1}); });
    CHECK_THAT(msg, Catch::Contains("You provided the following variables in "
                                    "var_name_to_prev_var_name that were not used: "
                                    "{'head/scal'}.  Perhaps you misspelled them?"));
    CHECK_THAT(msg, Catch::Contains("'dense/kernel', 'dense/bias', 'head/scale'"));
    CHECK(empty_dir(dir_b.path));
  }
  SECTION("an entry for a variable vars_to_warm_start does not select") {
    hf::Estimator b(
        model_fn<"head/scale">, config(dir_b.path, lines), Params{0.0},
        hf::WarmStartSettings{dir_a.path.string(), "dense/", {{"head/scale", "out/scale"}}});
    const std::string msg = error_of<hf::ValueError>([&] { b.train(zero_input(), {.steps = 1}); });
    CHECK_THAT(msg, Catch::Contains("not used: {'head/scale'}"));
    CHECK(empty_dir(dir_b.path));
  }
}

TEST_CASE("WarmStartSettings errors name the variable or the path and write nothing") {
  TempDir dir_a("ws_a"), dir_b("ws_b");
  train_a(dir_a.path);
  Lines lines;
  SECTION("a selected variable missing from the checkpoint") {
    hf::Estimator b(model_fn<"head/scale">, config(dir_b.path, lines), Params{0.0},
                    hf::WarmStartSettings{dir_a.path.string()});
    const std::string msg = error_of<hf::ValueError>([&] { b.train(zero_input(), {.steps = 1}); });
    CHECK_THAT(msg, Catch::Contains("tensor 'head/scale' for variable 'head/scale' (DT_FLOAT "
                                    "[1,1]) is not in the checkpoint"));
    CHECK_THAT(msg, Catch::Contains((dir_a.path / "model.ckpt-20").string()));
    CHECK_THAT(msg, Catch::StartsWith("WarmStartSettings: "));
  }
  SECTION("a shape that differs") {
    hf::Estimator b(
        model_fn<"out/scale">, config(dir_b.path, lines), Params{0.0},
        hf::WarmStartSettings{dir_a.path.string(), ".*", {{"dense/bias", "dense/kernel"}}});
    const std::string msg = error_of<hf::ValueError>([&] { b.train(zero_input(), {.steps = 1}); });
    CHECK_THAT(msg, Catch::Contains("variable 'dense/bias' (DT_FLOAT [1]) does not match tensor "
                                    "'dense/kernel' (DT_FLOAT [2,1])"));
  }
  SECTION("a checkpoint that does not exist") {
    const std::string missing = (dir_a.path / "model.ckpt-99").string();
    hf::Estimator b(model_fn<"out/scale">, config(dir_b.path, lines), Params{0.0},
                    hf::WarmStartSettings{missing});
    const std::string msg =
        error_of<hf::io::NotFoundError>([&] { b.train(zero_input(), {.steps = 1}); });
    CHECK_THAT(msg, Catch::Contains(missing));
  }
  CHECK(empty_dir(dir_b.path));
}

TEST_CASE("Warm start is ignored, errors included, when model_dir already has a checkpoint") {
  TempDir dir_a("ws_a"), dir_b("ws_b");
  const fs::path a = train_a(dir_a.path);
  Lines lines;
  {
    hf::Estimator b(model_fn<"out/scale">, config(dir_b.path, lines), Params{0.0});
    b.train(zero_input(), {.steps = 1});
  }
  const fs::path first = dir_b.path / "model.ckpt-1";
  lines.clear();
  hf::Estimator b(model_fn<"out/scale">, config(dir_b.path, lines), Params{0.0},
                  hf::WarmStartSettings{dir_a.path.string()});
  b.train(zero_input(), {.steps = 1});
  const fs::path second = dir_b.path / "model.ckpt-2";
  CHECK(tensor(second, "dense/kernel") == tensor(first, "dense/kernel"));
  CHECK(tensor(second, "dense/kernel") != tensor(a, "dense/kernel"));
  CHECK(tensor(second, "out/scale") == std::vector<float>{1.0f});
  CHECK_FALSE(has_line(lines, "Warm-starting from: " + dir_a.path.string()));
  // Settings that would fail are not even looked at (TF: warm_start is not called).
  hf::Estimator c(model_fn<"out/scale">, config(dir_b.path, lines), Params{0.0},
                  hf::WarmStartSettings{(dir_a.path / "nowhere").string(), ".*", {{"x", "y"}}});
  c.train(zero_input(), {.steps = 1});
  CHECK(fs::exists(dir_b.path / "model.ckpt-3.index"));
}

TEST_CASE("warm_start_from accepts a path, WarmStartSettings or io::WarmStart") {
  using Opt = std::optional<hf::WarmStartFrom>;
  STATIC_REQUIRE(std::is_convertible_v<const char*, Opt>);
  STATIC_REQUIRE(std::is_convertible_v<std::string, Opt>);
  STATIC_REQUIRE(std::is_convertible_v<hf::WarmStartSettings, Opt>);
  STATIC_REQUIRE(std::is_convertible_v<hf::io::WarmStart, Opt>);
  // Designated initializers: a string is a regex, a braced list of strings a list.
  const hf::WarmStartSettings s{.ckpt_to_initialize_from = "d", .vars_to_warm_start = {"a", "b"}};
  CHECK(s.vars_to_warm_start.is_list());
  CHECK(s.vars_to_warm_start.repr() == "['a', 'b']");
  CHECK(hf::WarmStartSettings{"d", "a"}.vars_to_warm_start.repr() == "'a'");
  CHECK(hf::WarmStartSettings{"d", nullptr}.vars_to_warm_start.repr() == "None");
}

TEST_CASE("warm_start_from as a path string is WarmStartSettings(path), evaluate included") {
  TempDir dir_a("ws_a"), dir_b("ws_b"), dir_c("ws_c");
  const fs::path a = train_a(dir_a.path);
  Lines lines;
  hf::Estimator b(model_fn<"out/scale">, config(dir_b.path, lines), Params{0.0},
                  dir_a.path.string());
  b.train(zero_input(), {.steps = 1});
  const fs::path ckpt = dir_b.path / "model.ckpt-1";
  for (const char* name : {"dense/kernel", "dense/bias", "out/scale"})
    CHECK(tensor(ckpt, name) == tensor(a, name));
  CHECK(tensor(ckpt, "dense/kernel/Momentum") == std::vector<float>{0.0f, 0.0f});
  CHECK(has_line(lines,
                 "Warm-starting with WarmStartSettings: WarmStartSettings("
                 "ckpt_to_initialize_from='" +
                     dir_a.path.string() +
                     "', vars_to_warm_start='.*', var_name_to_vocab_info={}, "
                     "var_name_to_prev_var_name={})"));

  // evaluate on an empty model_dir: the warm start's values at global step 0.
  hf::Estimator c(model_fn<"out/scale">, config(dir_c.path, lines), Params{0.0},
                  hf::WarmStartSettings{dir_a.path.string(), "dense/"});
  const hf::EvalResult r = c.evaluate(hf::numpy_input_fn<X, Y>(
      zero_x, 1, one_y, {.batch_size = 1, .num_epochs = 1, .shuffle = false}));
  CHECK(r.global_step == 0);
  const float bias = tensor(a, "dense/bias")[0];  // prediction (0 W + b) * 1
  CHECK(r.loss() == Approx((bias - 1.0f) * (bias - 1.0f)));

  // io::WarmStart (init_from_checkpoint's assignment map) still works: every variable.
  TempDir dir_d("ws_d");
  hf::Estimator d(model_fn<"out/scale">, config(dir_d.path, lines), Params{0.0},
                  hf::io::WarmStart{dir_a.path.string()});
  d.train(zero_input(), {.steps = 1});
  CHECK(tensor(dir_d.path / "model.ckpt-1", "out/scale") == tensor(a, "out/scale"));
}

TEST_CASE("warm_start_from a directory in the SavedModel variables layout") {
  TempDir dir_a("ws_a"), dir_b("ws_b"), exported("ws_export");
  const fs::path a = train_a(dir_a.path);
  // TF: a string naming a directory with variables/variables.index warm-starts from
  // variables/variables (_get_default_warm_start_settings).
  fs::create_directories(exported.path / "variables");
  fs::copy_file(a.string() + ".index", exported.path / "variables" / "variables.index");
  fs::copy_file(a.string() + ".data-00000-of-00001",
                exported.path / "variables" / "variables.data-00000-of-00001");
  Lines lines;
  hf::Estimator b(model_fn<"out/scale">, config(dir_b.path, lines), Params{0.0},
                  exported.path.string());
  b.train(zero_input(), {.steps = 1});
  CHECK(tensor(dir_b.path / "model.ckpt-1", "dense/kernel") == tensor(a, "dense/kernel"));
  CHECK(has_line(lines,
                 "Warm-starting from: " + (exported.path / "variables" / "variables").string()));
}
