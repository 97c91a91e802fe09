// tests/test_data_input_fn.cpp: NumpyInputFn tests (batch sizes, epochs, shuffling, scaling).
//
// Most tests use a synthetic 10-example data set whose label i and features {3i, 3i+1, 3i+2}
// identify the example. The fixture test needs HOOKFUSE_FIXTURES_DIR (the shared fixtures root
// or its idx/ subdirectory) and reports "SKIPPED: <test>" and exits 77
// when it is absent (tests/skip.hpp; "Skipped" in ctest's summary).
#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdint>
#include <filesystem>
#include <numeric>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "hookfuse/data/idx.hpp"
#include "hookfuse/data/input_fn.hpp"
#include "idx_fixtures.hpp"

namespace fs = std::filesystem;
using hookfuse::data::Dataset;
using hookfuse::data::NumpyInputFn;
using hookfuse::data::OutOfRangeError;
using Order = std::vector<std::int64_t>;

// Binding a temporary Dataset would leave a dangling pointer: it does not compile.
static_assert(!std::is_constructible_v<NumpyInputFn<float>, Dataset&&,
                                        const NumpyInputFn<float>::Options&>);
static_assert(std::is_constructible_v<NumpyInputFn<float>, const Dataset&,
                                      const NumpyInputFn<float>::Options&>);
// The options are required (they hold `shuffle`, which has no default).
static_assert(!std::is_constructible_v<NumpyInputFn<float>, const Dataset&>);
static_assert(std::is_base_of_v<std::runtime_error, OutOfRangeError>);

namespace {

constexpr std::int64_t kN = 10;
constexpr std::int64_t kF = 3;

/// 10 examples of 3 features: example i has features 3i, 3i+1, 3i+2 and label i.
struct Synthetic {
  std::vector<std::uint8_t> x, y;
  Synthetic() {
    for (std::int64_t i = 0; i < kN * kF; ++i) x.push_back(static_cast<std::uint8_t>(i));
    for (std::int64_t i = 0; i < kN; ++i) y.push_back(static_cast<std::uint8_t>(i));
  }
};

/// Runs `fn` to the end; returns the example order (labels) of each epoch and checks that
/// every feature row belongs to its label and that the buffers never move.
template <class Scalar>
std::vector<Order> drain(NumpyInputFn<Scalar>& fn, std::vector<std::int64_t>* sizes = nullptr) {
  std::vector<Order> epochs;
  const Scalar* buffer = fn.features_data();
  while (fn.next()) {
    if (sizes != nullptr) sizes->push_back(fn.rows());
    if (static_cast<int>(epochs.size()) <= fn.epoch()) epochs.emplace_back();
    REQUIRE(fn.features().rows() == fn.rows());
    REQUIRE(fn.features().cols() == kF);
    REQUIRE(fn.labels().rows() == fn.rows());
    REQUIRE(fn.features().data() == buffer);  // a view of the preallocated buffer, not a copy
    REQUIRE(fn.features_data() == buffer);
    for (std::int64_t r = 0; r < fn.rows(); ++r) {
      const std::int32_t label = fn.labels()(r);
      for (std::int64_t k = 0; k < kF; ++k) {
        REQUIRE(fn.features()(r, k) == Approx(static_cast<double>(label * kF + k) / 255.0));
      }
      epochs.back().push_back(label);
    }
  }
  return epochs;
}

Order identity(std::int64_t n) {
  Order o(static_cast<std::size_t>(n));
  std::iota(o.begin(), o.end(), std::int64_t{0});
  return o;
}

}  // namespace

TEMPLATE_TEST_CASE("batches of 4 over 10 examples for 2 epochs are 4,4,2,4,4,2", "[data][input_fn]",
                   float, double) {
  Synthetic d;
  const bool shuffle = GENERATE(false, true);
  NumpyInputFn<TestType> fn(d.x.data(), kN, kF, d.y.data(),
                            {.batch_size = 4, .num_epochs = 2, .shuffle = shuffle, .seed = 7});
  CHECK(fn.rows() == 0);
  CHECK(fn.batch_size() == 4);
  CHECK(fn.capacity() == 4);
  CHECK(fn.num_features() == kF);
  std::vector<std::int64_t> sizes;
  const auto epochs = drain(fn, &sizes);
  CHECK(sizes == std::vector<std::int64_t>{4, 4, 2, 4, 4, 2});
  REQUIRE(epochs.size() == 2);
  for (Order order : epochs) {  // every example exactly once per epoch
    std::sort(order.begin(), order.end());
    CHECK(order == identity(kN));
  }
  // End of input is sticky: rows() 0, next() false, get_next() throws.
  CHECK(fn.rows() == 0);
  CHECK(fn.features().rows() == 0);
  CHECK(fn.epoch() == 1);
  CHECK_FALSE(fn.next());
  CHECK_THROWS_MATCHES(fn.get_next(), OutOfRangeError, Catch::Message("End of sequence"));
}

TEST_CASE("shuffle=false keeps file order in every epoch", "[data][input_fn]") {
  Synthetic d;
  NumpyInputFn<float> fn(d.x.data(), kN, kF, d.y.data(),
                         {.batch_size = 3, .num_epochs = 3, .shuffle = false});
  const auto epochs = drain(fn);
  REQUIRE(epochs.size() == 3);
  for (const Order& order : epochs) CHECK(order == identity(kN));
  CHECK(fn.order() == identity(kN));
}

TEST_CASE("shuffled order is a fixed function of the seed", "[data][input_fn]") {
  Synthetic d;
  auto orders = [&](std::uint64_t seed) {
    NumpyInputFn<double> fn(d.x.data(), kN, kF, d.y.data(),
                            {.batch_size = 4, .num_epochs = 2, .shuffle = true, .seed = seed});
    return drain(fn);
  };
  const auto a = orders(42);
  CHECK(orders(42) == a);       // same seed, same batches
  CHECK(orders(43) != a);       // different seed, different order
  CHECK(a[0] != a[1]);          // reshuffled each epoch
  CHECK(a[0] != identity(kN));  // actually shuffled
  // Golden values, the same with every standard library: std::mt19937_64's output is fixed by
  // the standard and the Fisher-Yates/rejection sampling is our own. Computed independently by a
  // Python implementation of mt19937_64 (checked against the standard's 10000th output,
  // 9981545732273789042) running the same algorithm.
  CHECK(a == std::vector<Order>{{1, 7, 9, 0, 3, 8, 4, 2, 5, 6}, {1, 2, 8, 0, 5, 4, 3, 6, 9, 7}});
  CHECK(orders(0) ==
        std::vector<Order>{{7, 2, 0, 8, 3, 9, 6, 1, 5, 4}, {5, 9, 6, 1, 7, 8, 4, 0, 2, 3}});
}

TEST_CASE("reset() replays the same batches from epoch 0", "[data][input_fn]") {
  Synthetic d;
  NumpyInputFn<float> fn(d.x.data(), kN, kF, d.y.data(),
                         {.batch_size = 4, .num_epochs = 2, .shuffle = true, .seed = 3});
  const auto first = drain(fn);
  fn.reset();
  CHECK(fn.epoch() == 0);
  CHECK(fn.rows() == 0);
  CHECK(drain(fn) == first);
}

TEMPLATE_TEST_CASE("pixels are scaled: 255 -> 1 by default", "[data][input_fn]", float, double) {
  const std::vector<std::uint8_t> x = {0, 1, 128, 255};
  const std::vector<std::uint8_t> y = {3};
  NumpyInputFn<TestType> fn(x.data(), 1, 4, y.data(), {.batch_size = 8, .shuffle = false});
  CHECK(fn.capacity() == 1);  // never more rows than examples
  REQUIRE(fn.next());
  REQUIRE(fn.rows() == 1);
  const auto f = fn.features();
  CHECK(f(0, 0) == TestType(0));
  CHECK(f(0, 1) == Approx(1.0 / 255.0));
  CHECK(f(0, 2) == Approx(128.0 / 255.0));
  CHECK(f(0, 3) == Approx(1.0).epsilon(1e-7));
  CHECK(fn.labels()(0) == 3);
  CHECK(fn.labels_data()[0] == 3);
  CHECK_FALSE(fn.next());  // num_epochs defaults to 1

  NumpyInputFn<TestType> raw(x.data(), 1, 4, y.data(), {.shuffle = false, .scale = TestType(2)});
  REQUIRE(raw.next());
  CHECK(raw.features()(0, 3) == TestType(510));
  CHECK(raw.features_data()[2] == TestType(256));
}

TEST_CASE("num_epochs = nullopt repeats forever", "[data][input_fn]") {
  Synthetic d;
  NumpyInputFn<float> fn(d.x.data(), kN, kF, d.y.data(),
                         {.batch_size = 4, .num_epochs = std::nullopt, .shuffle = true, .seed = 1});
  for (int batch = 0; batch < 300; ++batch) {
    REQUIRE(fn.next());
    CHECK(fn.epoch() == batch / 3);
    CHECK(fn.rows() == (batch % 3 == 2 ? 2 : 4));
  }
}

TEST_CASE("labels may be absent (features only, like y=None)", "[data][input_fn]") {
  Synthetic d;
  NumpyInputFn<float> fn(d.x.data(), kN, kF, nullptr, {.batch_size = 6, .shuffle = false});
  CHECK_FALSE(fn.has_labels());
  REQUIRE(fn.next());
  CHECK(fn.rows() == 6);
  CHECK(fn.labels().size() == 0);
  CHECK(fn.features()(5, 2) == Approx(17.0 / 255.0));
  REQUIRE(fn.next());
  CHECK(fn.rows() == 4);
  CHECK_FALSE(fn.next());
}

TEST_CASE("no examples means end of input at once, even repeating forever", "[data][input_fn]") {
  NumpyInputFn<float> fn(static_cast<const std::uint8_t*>(nullptr), 0, 784, nullptr,
                         {.batch_size = 4, .num_epochs = std::nullopt, .shuffle = true});
  CHECK(fn.capacity() == 0);
  CHECK_FALSE(fn.next());
  CHECK(fn.features().rows() == 0);
  CHECK_THROWS_AS(fn.get_next(), OutOfRangeError);
}

TEST_CASE("bad options and inconsistent data are rejected", "[data][input_fn]") {
  Synthetic d;
  using Fn = NumpyInputFn<float>;
  CHECK_THROWS_WITH(Fn(d.x.data(), kN, kF, d.y.data(), {.batch_size = 0, .shuffle = false}),
                    Catch::Contains("batch_size must be > 0, got 0"));
  CHECK_THROWS_WITH(Fn(d.x.data(), kN, kF, d.y.data(), {.num_epochs = 0, .shuffle = false}),
                    Catch::Contains("num_epochs must be > 0"));
  CHECK_THROWS_AS(Fn(d.x.data(), -1, kF, d.y.data(), {.shuffle = false}), std::invalid_argument);
  CHECK_THROWS_AS(Fn(nullptr, kN, kF, d.y.data(), {.shuffle = false}), std::invalid_argument);

  Dataset ds;
  ds.images = {2, 2, 2, std::vector<std::uint8_t>(8, 1)};
  ds.labels.labels = {0, 1, 2};
  CHECK_THROWS_WITH(Fn(ds, {.shuffle = false}), Catch::Contains("2 images but 3 labels"));
  ds.labels.labels = {0, 1};
  ds.images.pixels.pop_back();
  CHECK_THROWS_WITH(Fn(ds, {.shuffle = false}), Catch::Contains("hold 7 bytes, expected 2 x 2 x 2"));
  ds.images.pixels.push_back(1);
  CHECK_NOTHROW(Fn(ds, {.shuffle = false}));
}

TEST_CASE("batches over the Fashion-MNIST fixture", "[data][input_fn]") {
  HF_REQUIRE_FIXTURES(dir);
  const Dataset ds =
      hookfuse::data::load_idx_pair(*dir / (std::string(hookfuse_test::kImages) + ".gz"),
                                    *dir / hookfuse_test::kLabels);

  SECTION("in file order") {
    NumpyInputFn<float> fn(ds, {.batch_size = 32, .num_epochs = 1, .shuffle = false});
    CHECK(fn.num_features() == 784);
    CHECK(fn.num_examples() == 100);
    REQUIRE(fn.next());
    REQUIRE(fn.rows() == 32);
    // Image 0: pixel sum 33456, max 255, pixel 221 = 37 (fixtures/idx/README.md and python3).
    CHECK(fn.features().row(0).sum() * 255.0f == Approx(33456.0));
    CHECK(fn.features().row(0).maxCoeff() == Approx(1.0));
    CHECK(fn.features()(0, 221) == Approx(37.0 / 255.0));
    CHECK(fn.labels().head(5) == (Eigen::Matrix<std::int32_t, 5, 1>() << 9, 2, 1, 1, 6).finished());
    std::vector<std::int64_t> sizes{fn.rows()};
    while (fn.next()) sizes.push_back(fn.rows());
    CHECK(sizes == std::vector<std::int64_t>{32, 32, 32, 4});
  }
  SECTION("shuffled: each epoch has the fixture's label counts") {
    NumpyInputFn<double> fn(ds, {.batch_size = 32, .num_epochs = 2, .shuffle = true, .seed = 9});
    std::vector<std::vector<int>> counts(2, std::vector<int>(10, 0));
    double pixel_sum = 0;
    while (fn.next()) {
      for (auto l : fn.labels())
        ++counts[static_cast<std::size_t>(fn.epoch())][static_cast<std::size_t>(l)];
      pixel_sum += fn.features().sum();
    }
    const std::vector<int> expected{8, 13, 14, 9, 10, 9, 8, 11, 12, 6};
    CHECK(counts[0] == expected);
    CHECK(counts[1] == expected);
    CHECK(pixel_sum * 255.0 == Approx(2 * 5854180.0));  // all pixels, twice
  }
}

TEMPLATE_TEST_CASE("numpy_input_fn over typed arrays copies rows unchanged", "[data][input_fn]",
                   float, double, std::int32_t, std::int64_t) {
  // x[i] = {10 i, 10 i + 1}, y[i] = 100 + i: every value names its example.
  std::vector<TestType> x;
  std::vector<std::int64_t> y;
  for (int i = 0; i < 5; ++i) {
    x.push_back(static_cast<TestType>(10 * i));
    x.push_back(static_cast<TestType>(10 * i + 1));
    y.push_back(100 + i);
  }
  NumpyInputFn<TestType, std::int64_t> fn(x.data(), 5, 2, y.data(),
                                          {.batch_size = 2, .num_epochs = 1, .shuffle = false});
  CHECK(fn.num_tensors() == 2);
  std::vector<std::int64_t> sizes;
  std::vector<std::int64_t> targets;
  while (fn.next()) {
    sizes.push_back(fn.rows());
    for (std::int64_t r = 0; r < fn.rows(); ++r) {
      const std::int64_t t = fn.labels()(r);
      targets.push_back(t);
      CHECK(fn.features()(r, 0) == static_cast<TestType>(10 * (t - 100)));  // no scaling
      CHECK(fn.features()(r, 1) == static_cast<TestType>(10 * (t - 100) + 1));
    }
  }
  CHECK(sizes == std::vector<std::int64_t>{2, 2, 1});
  CHECK(targets == std::vector<std::int64_t>{100, 101, 102, 103, 104});
}

TEST_CASE("float targets and a features-only typed input (y=None)", "[data][input_fn]") {
  const std::vector<double> x{1.5, 2.5, 3.5};
  const std::vector<float> y{0.25f, 0.5f, 0.75f};
  NumpyInputFn<double, float> fn(x.data(), 3, 1, y.data(), {.batch_size = 3, .shuffle = false});
  REQUIRE(fn.next());
  CHECK(fn.labels()(2) == 0.75f);
  CHECK(fn.features()(1, 0) == 2.5);

  NumpyInputFn<double> predict(x.data(), 3, 1, {.batch_size = 2, .shuffle = false});
  CHECK_FALSE(predict.has_labels());
  CHECK(predict.num_tensors() == 1);
  REQUIRE(predict.next());
  CHECK(predict.features()(1, 0) == 2.5);
  CHECK(predict.labels().size() == 0);
}

TEST_CASE("the batch order depends on the seed only, not on the array's type", "[data][input_fn]") {
  Synthetic d;
  std::vector<std::int64_t> labels64(d.y.begin(), d.y.end());
  std::vector<float> xf(d.x.begin(), d.x.end());
  NumpyInputFn<float> pixels(d.x.data(), kN, kF, d.y.data(),
                             {.batch_size = 4, .num_epochs = 2, .shuffle = true, .seed = 42});
  NumpyInputFn<float, std::int64_t> typed(xf.data(), kN, kF, labels64.data(),
                                          {.batch_size = 4, .num_epochs = 2, .shuffle = true,
                                           .seed = 42});
  // The golden order of seed 42 from "shuffled order is a fixed function of the seed".
  const Order expected{1, 7, 9, 0, 3, 8, 4, 2, 5, 6, 1, 2, 8, 0, 5, 4, 3, 6, 9, 7};
  Order a, b;
  while (pixels.next())
    for (std::int64_t r = 0; r < pixels.rows(); ++r) a.push_back(pixels.labels()(r));
  while (typed.next())
    for (std::int64_t r = 0; r < typed.rows(); ++r) b.push_back(typed.labels()(r));
  CHECK(a == expected);
  CHECK(b == expected);
}

TEST_CASE("numpy_input_fn with named feature columns (x as a dict)", "[data][input_fn]") {
  namespace data = hookfuse::data;
  // Example i: x1 = {i, -i} (float), x2 = {1000 + i} (int64), y = 2 i (int32).
  std::vector<float> x1;
  std::vector<std::int64_t> x2;
  std::vector<std::int32_t> y;
  for (int i = 0; i < 7; ++i) {
    x1.push_back(static_cast<float>(i));
    x1.push_back(static_cast<float>(-i));
    x2.push_back(1000 + i);
    y.push_back(2 * i);
  }
  auto input = data::numpy_input_fn(
      7, std::tuple{data::column<"x1">(x1.data(), 2), data::column<"x2">(x2.data(), 1)}, y.data(),
      {.batch_size = 3, .num_epochs = 2, .shuffle = true, .seed = 5});
  CHECK(input.num_tensors() == 3);
  static_assert(decltype(input)::tensor_name<0>() == "x1");
  static_assert(decltype(input)::tensor_name<1>() == "x2");
  static_assert(decltype(input)::tensor_name<2>().empty());
  std::vector<std::int64_t> sizes;
  std::vector<int> seen(7, 0);
  while (input.next()) {
    sizes.push_back(input.rows());
    const float* a = input.column_data<"x1">();
    const std::int64_t* b = input.column_data<"x2">();
    const std::int32_t* t = input.labels_data();
    for (std::int64_t r = 0; r < input.rows(); ++r) {
      const std::int64_t i = b[r] - 1000;  // the example, by its x2 value
      REQUIRE(i >= 0);
      REQUIRE(i < 7);
      CHECK(a[2 * r] == static_cast<float>(i));  // all columns show the same example
      CHECK(a[2 * r + 1] == static_cast<float>(-i));
      CHECK(t[r] == 2 * i);
      ++seen[static_cast<std::size_t>(i)];
    }
  }
  CHECK(sizes == std::vector<std::int64_t>{3, 3, 1, 3, 3, 1});
  CHECK(seen == std::vector<int>(7, 2));  // every example once per epoch

  auto features_only = data::numpy_input_fn(
      7, std::tuple{data::column<"x1">(x1.data(), 2)}, {.batch_size = 8, .shuffle = false});
  CHECK(features_only.num_tensors() == 1);
  CHECK_THROWS_WITH(data::numpy_input_fn(7, std::tuple{data::column<"x1">(x1.data(), -2)},
                                         {.shuffle = false}),
                    Catch::Contains("column 'x1'"));
}

TEST_CASE("sharded input: each shard a contiguous slice of every global batch",
          "[data][input_fn][shard]") {
  // 10 examples, global batch 4: batches of 4, 4, 2 rows per epoch. Shard i of 3 takes rows
  // [i r / 3, (i + 1) r / 3): of 4 rows 1, 1 and 2; of 2 rows 0, 1 and 1.
  Synthetic d;
  const auto batches = [&](std::int64_t shards, std::int64_t index) {
    NumpyInputFn<float> fn(d.x.data(), kN, kF, d.y.data(),
                           {.batch_size = 4, .num_epochs = 2, .shuffle = true, .seed = 5,
                            .num_shards = shards, .shard_index = index});
    std::vector<Order> out;
    while (fn.next()) {
      Order b;
      for (std::int64_t r = 0; r < fn.rows(); ++r) {
        const std::int32_t label = fn.labels()(r);
        CHECK(fn.features()(r, 0) == Approx(static_cast<double>(label * kF) / 255.0));
        b.push_back(label);
      }
      out.push_back(b);
    }
    return out;
  };
  const std::vector<Order> whole = batches(1, 0);
  REQUIRE(whole.size() == 6);
  std::vector<std::vector<Order>> shard(3);
  for (std::int64_t i = 0; i < 3; ++i) shard[static_cast<std::size_t>(i)] = batches(3, i);
  const std::vector<std::vector<std::size_t>> sizes = {
      {1, 1, 0, 1, 1, 0}, {1, 1, 1, 1, 1, 1}, {2, 2, 1, 2, 2, 1}};
  for (std::size_t i = 0; i < 3; ++i) {
    INFO("shard " << i);
    REQUIRE(shard[i].size() == 6);  // as many batches as one input: every shard ends together
    for (std::size_t b = 0; b < 6; ++b) CHECK(shard[i][b].size() == sizes[i][b]);
  }
  for (std::size_t b = 0; b < 6; ++b) {
    Order joined;
    for (std::size_t i = 0; i < 3; ++i)
      joined.insert(joined.end(), shard[i][b].begin(), shard[i][b].end());
    CHECK(joined == whole[b]);
  }
  // Each epoch visits every example once over the shards.
  for (std::size_t e = 0; e < 2; ++e) {
    Order seen;
    for (std::size_t b = 3 * e; b < 3 * e + 3; ++b)
      seen.insert(seen.end(), whole[b].begin(), whole[b].end());
    std::sort(seen.begin(), seen.end());
    Order all(kN);
    std::iota(all.begin(), all.end(), std::int64_t{0});
    CHECK(seen == all);
  }
  NumpyInputFn<float> fn(d.x.data(), kN, kF, d.y.data(),
                         {.batch_size = 4, .shuffle = false, .num_shards = 3, .shard_index = 2});
  CHECK(fn.capacity() == 2);  // ceil(4 / 3)
  CHECK(fn.num_shards() == 3);
  CHECK(fn.shard_index() == 2);
}

TEST_CASE("sharded input: bad num_shards and shard_index are rejected", "[data][input_fn][shard]") {
  Synthetic d;
  using Fn = NumpyInputFn<float>;
  CHECK_THROWS_WITH(Fn(d.x.data(), kN, kF, d.y.data(), {.shuffle = false, .num_shards = 0}),
                    "NumpyInputFn: num_shards must be >= 1, got 0");
  CHECK_THROWS_WITH(
      Fn(d.x.data(), kN, kF, d.y.data(), {.shuffle = false, .num_shards = 2, .shard_index = 2}),
      "NumpyInputFn: shard_index must be in [0, num_shards) = [0, 2), got 2");
  CHECK_THROWS_AS(
      Fn(d.x.data(), kN, kF, d.y.data(), {.shuffle = false, .num_shards = 2, .shard_index = -1}),
      std::invalid_argument);
}
