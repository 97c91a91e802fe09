// train_and_evaluate (TensorFlow's local executor), TrainSpec / EvalSpec, several evaluation
// sets, LatestExporter and BestExporter. Expected steps, files and values are worked out by
// hand from TensorFlow's rules (training.py, exporter.py); the clock is a FakeClock.
#include <leveldb/env.h>
#include <leveldb/iterator.h>
#include <leveldb/options.h>
#include <leveldb/table.h>

#include <algorithm>
#include <boost/hana/tuple.hpp>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <hookfuse/hookfuse.hpp>
#include <hookfuse/io/event_reader.hpp>
#include <hookfuse/io/safetensors.hpp>
#include <iterator>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <protozero/pbf_reader.hpp>
#include <set>
#include <string>
#include <type_traits>
#include <vector>

#include "bundle_test_util.hpp"
#include "capturing_logger.hpp"
#include "error_of.hpp"

namespace hf = hookfuse;
namespace fs = std::filesystem;
using hookfuse_test::CapturingLogger;
using hookfuse_test::Lines;
using hookfuse_test::read_bytes;
using hookfuse_test::TempDir;

namespace {

using X = hf::Placeholder<"x", float, 1>;  // [batch, 1]
using Y = hf::Placeholder<"y", float, 1>;  // [batch, 1]

// y = W x + b from zeros, SGD 0.01. In EVAL the loss is mean((x - y)^2) of the input alone, so
// that a test scripts each evaluation's loss through the values it feeds.
auto model_fn = [](X x, Y y, auto mode, auto& vars) {
  if constexpr (mode == hf::ModeKeys::EVAL) {
    auto loss = hf::named<"loss">(hf::mean_squared_error(y, x));
    return hf::EstimatorSpec{.mode = mode, .loss = loss};
  } else {
    auto& W = hf::nn::get_variable<"W", float, 1, 1, 2>(vars, hf::nn::zeros{});
    auto& b = hf::nn::get_variable<"b", float, 1, 1, 1>(vars, hf::nn::zeros{});
    auto predictions = hf::named<"predictions">(hf::matmul(x, W) + b);
    auto loss = hf::named<"loss">(hf::mean_squared_error(y, predictions));
    return hf::EstimatorSpec{
        .mode = mode,
        .predictions = predictions,
        .loss = loss,
        .train_op = hf::GradientDescentOptimizer(0.01).minimize(loss, vars.global_step())};
  }
};

using Config = hf::RunConfig<hf::ClockRef<hf::FakeClock>, CapturingLogger>;

Config config(const fs::path& dir, hf::FakeClock& clock, Lines& lines,
              std::optional<std::int64_t> save_steps) {
  return Config{.model_dir = dir.string(),
                .save_checkpoints_steps = save_steps,
                .clock = hf::ClockRef<hf::FakeClock>{&clock},
                .logger = CapturingLogger{&lines}};
}

const float kXs[4] = {1, 2, 3, 4};
const float kYs[4] = {2, 4, 6, 8};
const auto kTrainFn = hf::numpy_input_fn<X, Y>(
    kXs, 4, kYs, {.batch_size = 1, .num_epochs = std::nullopt, .shuffle = false});
const auto kEvalFn =
    hf::numpy_input_fn<X, Y>(kXs, 4, kYs, {.batch_size = 1, .num_epochs = 1, .shuffle = false});

// The global steps evaluated, from Estimator::evaluate's "Saving dict for global step N: ..."
std::vector<long long> evaluated_steps(const Lines& lines) {
  const std::string prefix = "Saving dict for global step ";
  std::vector<long long> out;
  for (const auto& l : lines)
    if (l.text.rfind(prefix, 0) == 0) out.push_back(std::stoll(l.text.substr(prefix.size())));
  return out;
}

int count_lines(const Lines& lines, const std::string& text) {
  int n = 0;
  for (const auto& l : lines) n += l.text == text;
  return n;
}

// The steps of the events with a summary in the event files of `dir`, read back by the
// library's event reader.
std::vector<long long> event_steps(const fs::path& dir) {
  std::vector<long long> out;
  for (const auto& f : hf::io::event_files(dir))
    for (const hf::io::Event& e : hf::io::read_events(f))
      if (!e.summary.value.empty()) out.push_back(static_cast<long long>(e.step));
  return out;
}

std::set<std::string> listing(const fs::path& dir) {
  std::set<std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    out.insert(fs::relative(e.path(), dir).string() + " " +
               (e.is_regular_file() ? std::to_string(e.file_size()) : std::string("dir")));
  return out;
}

// Advances the fake clock one second per training step.
struct AdvanceClock {
  hf::FakeClock* clock;
  template <class V>
  void after_run(hf::SessionRunContext&, const V&) {
    clock->advance(1.0);
  }
};

// Records the feature value of every training batch (batch size 1).
struct RecordX {
  std::vector<float>* seen;
  hf::SessionRunArgs<"x"> before_run(hf::SessionRunContext&) { return {}; }
  void after_run(hf::SessionRunContext&, const hf::SessionRunValues<"x">& v) {
    seen->push_back(static_cast<float>(v.get<"x">().item()));
  }
};

// A float tensor of a TensorFlow V2 checkpoint, decoded without hookfuse: the index table by
// LevelDB, the BundleEntryProto by protozero (dtype = 1, offset = 4, size = 5), the bytes from
// the data file.
struct Decoded {
  int dtype = 0;
  std::vector<unsigned char> bytes;
};
Decoded decode_tensor(const fs::path& prefix, const std::string& key) {
  const fs::path index = prefix.string() + ".index";
  leveldb::RandomAccessFile* raw = nullptr;
  REQUIRE(leveldb::Env::Default()->NewRandomAccessFile(index.string(), &raw).ok());
  std::unique_ptr<leveldb::RandomAccessFile> file(raw);
  leveldb::Table* t = nullptr;
  REQUIRE(leveldb::Table::Open(leveldb::Options(), file.get(), fs::file_size(index), &t).ok());
  std::unique_ptr<leveldb::Table> table(t);
  std::unique_ptr<leveldb::Iterator> it(table->NewIterator(leveldb::ReadOptions()));
  it->Seek(key);
  REQUIRE(it->Valid());
  REQUIRE(it->key().ToString() == key);
  const std::string entry = it->value().ToString();
  Decoded d;
  std::uint64_t offset = 0, size = 0;
  protozero::pbf_reader pb(entry);
  while (pb.next()) {
    switch (pb.tag()) {
      case 1:
        d.dtype = pb.get_enum();
        break;
      case 4:
        offset = static_cast<std::uint64_t>(pb.get_int64());
        break;
      case 5:
        size = static_cast<std::uint64_t>(pb.get_int64());
        break;
      default:
        pb.skip();
    }
  }
  const auto data = read_bytes(prefix.string() + ".data-00000-of-00001");
  REQUIRE(offset + size <= data.size());
  d.bytes.assign(data.begin() + static_cast<long>(offset),
                 data.begin() + static_cast<long>(offset + size));
  return d;
}

float decoded_float(const fs::path& prefix, const std::string& key) {
  const Decoded d = decode_tensor(prefix, key);
  REQUIRE(d.dtype == 1);  // DT_FLOAT
  REQUIRE(d.bytes.size() == 4);
  float v;
  std::memcpy(&v, d.bytes.data(), 4);
  return v;
}

std::int64_t decoded_int64(const fs::path& prefix, const std::string& key) {
  const Decoded d = decode_tensor(prefix, key);
  REQUIRE(d.dtype == 9);  // DT_INT64
  REQUIRE(d.bytes.size() == 8);
  std::int64_t v;
  std::memcpy(&v, d.bytes.data(), 8);
  return v;
}

}  // namespace

TEST_CASE("train_and_evaluate, throttle_secs = 0: evaluations at 100, 200, 300 and 350") {
  TempDir dir;
  hf::FakeClock clock;
  Lines lines;
  hf::Estimator estimator(model_fn, config(dir.path(), clock, lines, 100));
  const auto result = hf::train_and_evaluate(
      estimator, hf::TrainSpec(kTrainFn, 350),
      hf::EvalSpec(kEvalFn, {.steps = 10, .start_delay_secs = 0, .throttle_secs = 0}));
  // Checkpoints at 0 (session created: not evaluated), 100, 200, 300, then 350 at the end;
  // each but the first is evaluated once, and the end() finds 350 already evaluated.
  CHECK(evaluated_steps(lines) == std::vector<long long>{100, 200, 300, 350});
  CHECK(event_steps(dir.path() / "eval") == std::vector<long long>{100, 200, 300, 350});
  REQUIRE(result.eval_result);
  CHECK(result.eval_result->global_step == 350);
  // EVAL's loss is mean((x - y)^2) over x = 1..4, y = 2x: (1 + 4 + 9 + 16) / 4.
  CHECK(result.eval_result->loss() == 7.5f);
  CHECK(result.export_results.empty());
  CHECK(lines.at(0).text == "Running training and evaluation locally (non-distributed).");
  CHECK(lines.at(1).text ==
        "Start train and evaluate loop. The evaluate will happen after every checkpoint. "
        "Checkpoint frequency is determined based on RunConfig arguments: "
        "save_checkpoints_steps 100 or save_checkpoints_secs None.");

  SECTION("a second train_and_evaluate with the same max_steps trains, evaluates, writes nothing") {
    const auto before = listing(dir.path());
    lines.clear();
    const auto again = hf::train_and_evaluate(
        estimator, hf::TrainSpec(kTrainFn, 350),
        hf::EvalSpec(kEvalFn, {.steps = 10, .start_delay_secs = 0, .throttle_secs = 0}));
    CHECK(listing(dir.path()) == before);
    CHECK_FALSE(again.eval_result);
    CHECK(again.export_results.empty());
    CHECK(evaluated_steps(lines).empty());
    CHECK(count_lines(lines, "Skipping training since max_steps has already saved.") == 1);
    CHECK(event_steps(dir.path() / "eval") == std::vector<long long>{100, 200, 300, 350});
  }
}

TEST_CASE("train_and_evaluate, throttle_secs = 600 and 1 s per step: evaluations at 100 and 350") {
  TempDir dir;
  hf::FakeClock clock;
  Lines lines;
  hf::Estimator estimator(model_fn, config(dir.path(), clock, lines, 100));
  const auto train_spec = hf::TrainSpec(kTrainFn, 350, hf::hooks(AdvanceClock{&clock}));
  STATIC_REQUIRE(std::is_same_v<decltype(train_spec.hooks), boost::hana::tuple<AdvanceClock>>);
  (void)hf::train_and_evaluate(
      estimator, train_spec,
      hf::EvalSpec(kEvalFn, {.steps = 10, .start_delay_secs = 0, .throttle_secs = 600}));
  // 100: the first evaluation (the timer has never fired). 200, 300 and the final save at 350
  // come 100, 200 and 250 s later: throttled. end() evaluates 350, not yet evaluated.
  CHECK(evaluated_steps(lines) == std::vector<long long>{100, 350});
  CHECK(event_steps(dir.path() / "eval") == std::vector<long long>{100, 350});
  CHECK(count_lines(lines, "Skip the current checkpoint eval due to throttle secs (600 secs).") ==
        3);
}

TEST_CASE("train_and_evaluate: evaluations do not restart the training input") {
  TempDir dir;
  hf::FakeClock clock;
  Lines lines;
  hf::Estimator estimator(model_fn, config(dir.path(), clock, lines, 2));
  std::vector<float> seen;
  (void)hf::train_and_evaluate(
      estimator, hf::TrainSpec(kTrainFn, 8, hf::hooks(RecordX{&seen})),
      hf::EvalSpec(kEvalFn, {.steps = 10, .start_delay_secs = 0, .throttle_secs = 0}));
  CHECK(evaluated_steps(lines) == std::vector<long long>{2, 4, 6, 8});
  CHECK(seen == std::vector<float>{1, 2, 3, 4, 1, 2, 3, 4});
}

namespace {
// One example per evaluation, x = the scripted value, y = 0: the evaluation's loss is x^2.
struct ScriptedEval {
  const std::vector<float>* script;
  int* calls;
  auto operator()() const {
    static const float zero = 0.0f;
    const float* x = &(*script)[static_cast<std::size_t>((*calls)++)];
    return hf::numpy_input_fn<X, Y>(x, 1, &zero,
                                    {.batch_size = 1, .num_epochs = 1, .shuffle = false})();
  }
};

std::vector<long long> export_dirs(const fs::path& base) {
  std::vector<long long> out;
  for (const auto& e : fs::directory_iterator(base)) out.push_back(std::stoll(e.path().filename()));
  std::sort(out.begin(), out.end());
  return out;
}
}  // namespace

TEST_CASE("BestExporter exports the improving evaluations only, and after a restart") {
  TempDir dir;
  hf::FakeClock clock;
  Lines lines;
  hf::Estimator estimator(model_fn, config(dir.path(), clock, lines, 10));
  // Losses x^2 at steps 10..60: 9, 4, 6.25, 1, 2.25, 0.25; then, restarted, 70..90: 0.5625,
  // 0.0625, 0.25.
  const std::vector<float> script = {3, 2, 2.5f, 1, 1.5f, 0.5f, 0.75f, 0.25f, 0.5f};
  int calls = 0;
  const fs::path base = dir.path() / "export" / "best";
  auto spec = [&] {
    return hf::EvalSpec(ScriptedEval{&script, &calls},
                        {.steps = 1, .start_delay_secs = 0, .throttle_secs = 0}, hf::hooks(),
                        hf::exporters(hf::BestExporter("best", hf::LossSmaller{}, 3)));
  };
  const auto first = hf::train_and_evaluate(estimator, hf::TrainSpec(kTrainFn, 60), spec());
  CHECK(calls == 6);
  // Improving: 10 (the first), 20 (4 < 9), 40 (1 < 4), 60 (0.25 < 1); kept: the newest 3.
  CHECK(count_lines(lines, "Performing best model export.") == 4);
  CHECK(export_dirs(base) == std::vector<long long>{20, 40, 60});
  REQUIRE(first.export_results.size() == 1);
  CHECK(first.export_results[0] == (base / "60").string());

  const std::map<long long, float> loss_at = {{20, 4.0f}, {40, 1.0f}, {60, 0.25f}};
  for (const auto& [step, loss] : loss_at) {
    const fs::path d = base / std::to_string(step);
    // The variables of model.ckpt-<step> (kept: the 5 newest of 0..60), decoded independently.
    const auto ckpt = hf::io::load_checkpoint(dir.path() / ("model.ckpt-" + std::to_string(step)));
    const fs::path prefix = d / "variables" / "variables";
    CHECK(decoded_float(prefix, "W") == ckpt.get_tensor<float>("W")[0]);
    CHECK(decoded_float(prefix, "b") == ckpt.get_tensor<float>("b")[0]);
    CHECK(decoded_int64(prefix, "global_step") == step);
    const auto st = hf::io::safetensors::SafetensorsFile::open(d / "model.safetensors");
    CHECK(st.get_tensor<float>("W") == ckpt.get_tensor<float>("W"));
    CHECK(st.get_tensor<std::int64_t>("global_step") == std::vector<std::int64_t>{step});
    std::ifstream in(d / "eval_result.json");
    const auto j = nlohmann::json::parse(in);
    CHECK(j["global_step"].get<long long>() == step);
    CHECK(j["metrics"]["loss"].get<float>() == loss);
  }

  // A restarted run (a new BestExporter) reads the best, 0.25, back from the exports: 70
  // (0.5625) is not exported, although it is this run's first evaluation; 80 (0.0625) is.
  lines.clear();
  const auto second = hf::train_and_evaluate(estimator, hf::TrainSpec(kTrainFn, 90), spec());
  CHECK(calls == 9);
  CHECK(evaluated_steps(lines) == std::vector<long long>{70, 80, 90});
  CHECK(count_lines(lines, "Performing best model export.") == 1);
  CHECK(export_dirs(base) == std::vector<long long>{40, 60, 80});
  REQUIRE(second.export_results.size() == 1);
  CHECK_FALSE(second.export_results[0]);  // 90 (0.25) is not better than 0.0625
  CHECK(decoded_int64(base / "80" / "variables" / "variables", "global_step") == 80);
}

TEST_CASE("LatestExporter exports every evaluation and keeps exports_to_keep") {
  TempDir dir;
  hf::FakeClock clock;
  Lines lines;
  hf::Estimator estimator(model_fn, config(dir.path(), clock, lines, 10));
  const auto r = hf::train_and_evaluate(
      estimator, hf::TrainSpec(kTrainFn, 30),
      hf::EvalSpec(kEvalFn, {.steps = 4, .start_delay_secs = 0, .throttle_secs = 0}, hf::hooks(),
                   hf::exporters(hf::LatestExporter("latest", 2))));
  CHECK(export_dirs(dir.path() / "export" / "latest") == std::vector<long long>{20, 30});
  REQUIRE(r.export_results.size() == 1);
  CHECK(r.export_results[0] == (dir.path() / "export" / "latest" / "30").string());
}

TEST_CASE("train_and_evaluate over two evaluation sets writes eval_a and eval_b") {
  TempDir dir;
  hf::FakeClock clock;
  Lines lines;
  hf::Estimator estimator(model_fn, config(dir.path(), clock, lines, 10));
  const float ax[1] = {3};  // loss 9
  const float zero[1] = {0};
  const auto a_fn =
      hf::numpy_input_fn<X, Y>(ax, 1, zero, {.batch_size = 1, .num_epochs = 1, .shuffle = false});
  const auto r = hf::train_and_evaluate(
      estimator, hf::TrainSpec(kTrainFn, 20),
      hf::eval_specs(
          hf::EvalSpec(a_fn, {.steps = 1, .name = "a", .start_delay_secs = 0, .throttle_secs = 0}),
          hf::EvalSpec(kEvalFn,
                       {.steps = 4, .name = "b", .start_delay_secs = 0, .throttle_secs = 0})));
  CHECK(event_steps(dir.path() / "eval_a") == std::vector<long long>{10, 20});
  CHECK(event_steps(dir.path() / "eval_b") == std::vector<long long>{10, 20});
  CHECK_FALSE(fs::exists(dir.path() / "eval"));
  REQUIRE(r.per_spec.size() == 2);
  CHECK(r.per_spec[0].name == "a");
  CHECK(r.per_spec[0].eval_result->loss() == 9.0f);
  CHECK(r.per_spec[1].name == "b");
  CHECK(r.per_spec[1].eval_result->loss() == 7.5f);
  CHECK(r.eval_result->loss() == 9.0f);  // the first spec's
}

TEST_CASE("train_and_evaluate: bad input is TensorFlow's errors, nothing written") {
  TempDir dir;
  hf::FakeClock clock;
  Lines lines;
  const auto eval_spec =
      hf::EvalSpec(kEvalFn, {.steps = 4, .start_delay_secs = 0, .throttle_secs = 0});

  SECTION("no checkpoint cadence") {
    hf::Estimator estimator(model_fn, config(dir.path(), clock, lines, 0));
    const std::string expected =
        "Estimator.train: There should be a CheckpointSaverHook to use saving_listeners. Please "
        "set one of the RunConfig.save_checkpoints_steps or RunConfig.save_checkpoints_secs.";
    CHECK(hookfuse_test::error_of<hf::ValueError>([&] {
            (void)hf::train_and_evaluate(estimator, hf::TrainSpec(kTrainFn, 10), eval_spec);
          }) == expected);
    struct Listener {
      void begin() {}
    };
    CHECK(hookfuse_test::error_of<hf::ValueError>([&] {
            estimator.train(kTrainFn, {.steps = 1}, hf::hooks(), hf::listeners(Listener{}));
          }) == expected);
    CHECK(fs::is_empty(dir.path()));
  }
  SECTION("an empty list of EvalSpecs, or two of one name") {
    hf::Estimator estimator(model_fn, config(dir.path(), clock, lines, 10));
    using Spec = std::remove_cvref_t<decltype(eval_spec)>;
    CHECK(hookfuse_test::error_of<hf::ValueError>([&] {
            (void)hf::train_and_evaluate(estimator, hf::TrainSpec(kTrainFn, 10),
                                         std::vector<Spec>{});
          }) == "train_and_evaluate: eval_spec is an empty list of EvalSpecs");
    CHECK(hookfuse_test::error_of<hf::ValueError>([&] {
            (void)hf::train_and_evaluate(estimator, hf::TrainSpec(kTrainFn, 10),
                                         std::vector<Spec>{eval_spec, eval_spec});
          }) ==
          "train_and_evaluate: two EvalSpecs named '' would both evaluate into "
          "model_dir/eval");
    CHECK(fs::is_empty(dir.path()));
  }
  SECTION("bad exports_to_keep, spec values and exporter names") {
    CHECK(hookfuse_test::error_of<hf::ValueError>([] {
            (void)hf::BestExporter("b", hf::LossSmaller{}, 0);
          }) == "BestExporter: `exports_to_keep`, if provided, must be a positive number. Got 0");
    CHECK(hookfuse_test::error_of<hf::ValueError>([] { (void)hf::LatestExporter("l", -1); }) ==
          "LatestExporter: `exports_to_keep`, if provided, must be positive number. Got -1");
    CHECK(hookfuse_test::error_of<hf::ValueError>([] { (void)hf::TrainSpec(kTrainFn, 0); }) ==
          "TrainSpec: Must specify max_steps > 0, given: 0");
    CHECK(hookfuse_test::error_of<hf::ValueError>([] {
            (void)hf::EvalSpec(kEvalFn, {.steps = 0});
          }) == "EvalSpec: Must specify steps > 0, given: 0");
    CHECK(hookfuse_test::error_of<hf::ValueError>([] {
            (void)hf::EvalSpec(kEvalFn, {.throttle_secs = -1});
          }) == "EvalSpec: Must specify throttle_secs >= 0, given: -1");
    CHECK(hookfuse_test::error_of<hf::ValueError>([] {
            (void)hf::EvalSpec(kEvalFn, {}, hf::hooks(),
                               hf::exporters(hf::LatestExporter("e"), hf::BestExporter("e")));
          }) ==
          "EvalSpec: `exporters` must have unique names. Such a name cannot be `None`. All "
          "exporter names: ['e', 'e']");
    CHECK(fs::is_empty(dir.path()));
  }
}
