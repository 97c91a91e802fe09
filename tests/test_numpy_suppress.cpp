// tests/test_numpy_suppress.cpp: LoggingTensorHook prints values as TensorFlow's hook does,
// inside np.set_printoptions(suppress=True) (basic_session_run_hooks.py, _log_tensors); every
// other use of the numpy formatter keeps numpy's default print options.
//
// The expected texts come from numpy itself: tests/numpy_suppress/cases.json, written by
// tests/numpy_suppress/make_cases.py (numpy 1.24 under np.printoptions(suppress=True); ctest's
// numpy_suppress.cases_current checks the file is still what numpy prints). Values are stored
// exactly: float32 / float64 as hex IEEE bits, integers as JSON integers, row-major with their
// numpy shape. The hand-written cases below need no file.
#include <bit>
#include <catch2/catch.hpp>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <hookfuse/hookfuse.hpp>
#include <limits>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "capturing_logger.hpp"
#include "numpy_cases.hpp"
#include "skip.hpp"

using namespace hookfuse;

namespace {

using hookfuse_test::decode;
using hookfuse_test::Stored;

/// numpy's str() of `t` at numpy rank `rank`, under suppress=True or numpy's defaults.
std::string numpy_str(const TensorValue& t, int rank, bool suppress) {
  std::vector<char> buf(1 << 16);
  char* out = buf.data();
  detail::append_tensor(out, buf.data() + buf.size(), t, rank, suppress);
  return std::string(buf.data(), out);
}

std::string suppressed(const float* v, Eigen::Index n) {
  return numpy_str(TensorValue{v, 1, n, n, 1, DType::float32}, 1, true);
}
std::string suppressed(const double* v, Eigen::Index n) {
  return numpy_str(TensorValue{v, 1, n, n, 1, DType::float64}, 1, true);
}

}  // namespace

TEST_CASE("numpy suppress: every case of numpy_suppress/cases.json prints as numpy printed it",
          "[numpy_str][numpy_suppress]") {
  const std::filesystem::path file =
      std::filesystem::path(__FILE__).parent_path() / "numpy_suppress" / "cases.json";
  if (!std::filesystem::exists(file))
    HOOKFUSE_SKIP("expected cases " << file.string() << " not found");
  std::ifstream in(file);
  const nlohmann::json doc = nlohmann::json::parse(in);
  const auto& cases = doc.at("cases");
  REQUIRE(cases.size() == 51);
  int passed = 0;
  for (const auto& c : cases) {
    const std::string name = c.at("name");
    const std::string expected = c.at("str");
    INFO("case: " << name);
    const Stored s = decode(c);
    const std::string got = numpy_str(s.value, s.rank, true);
    CHECK(got == expected);
    passed += got == expected ? 1 : 0;
  }
  std::printf("numpy suppress: %d of %zu cases exact\n", passed, cases.size());
  CHECK(passed == 51);
}

TEST_CASE("numpy suppress: hand-computed cases", "[numpy_str][numpy_suppress]") {
  // TensorFlow's example: 1e-5 has 5 fraction digits, 1 none; both padded to 5 with spaces.
  const float tf_example[2] = {1e-5f, 1.0f};
  CHECK(suppressed(tf_example, 2) == "[0.00001 1.     ]");
  // Below 8 fraction digits the exact value rounds to zero, keeping its sign.
  const double tiny[2] = {-1e-9, 1.0};
  CHECK(suppressed(tiny, 2) == "[-0.  1.]");
  // 5e-9 is stored as 5.0000000000000001e-09, above the half-way point: up to 0.00000001.
  const double half[2] = {5e-9, 1.0};
  CHECK(suppressed(half, 2) == "[0.00000001 1.        ]");
  // A magnitude >= 1e8 still switches the whole array to scientific notation.
  const double huge[2] = {1e8, 1.0};
  CHECK(suppressed(huge, 2) == "[1.e+08 1.e+00]");
  // Just below 1e8 with a ratio of 1e14: positional, integer width 8.
  const double wide[2] = {1e7, 1e-7};
  CHECK(suppressed(wide, 2) == "[10000000.               0.0000001]");
  // nan and inf take the shared width ("0." is 2 wide; "-inf" needs pad_left 3).
  const double nonfinite[3] = {std::numeric_limits<double>::quiet_NaN(),
                               -std::numeric_limits<double>::infinity(), 1e-9};
  CHECK(suppressed(nonfinite, 3) == "[ nan -inf   0.]");
  // Scalars ignore suppress (numpy scalars' str()): 1e-5 stays scientific.
  const float scalar = 1e-5f;
  CHECK(numpy_str(TensorValue{&scalar, 1, 1, 1, 1, DType::float32}, 0, true) == "1e-05");
  // Integers are the same either way.
  const std::int32_t ints[3] = {1, 22, 333};
  CHECK(numpy_str(TensorValue{ints, 1, 3, 3, 1, DType::int32}, 1, true) == "[  1  22 333]");
}

TEST_CASE("numpy suppress: off unless asked for, numpy's default str() elsewhere",
          "[numpy_str][numpy_suppress]") {
  const float v[2] = {1e-5f, 1.0f};
  const TensorValue t{v, 1, 2, 2, 1, DType::float32};
  // numpy's defaults: min 1e-5 < 1e-4, scientific.
  CHECK(numpy_str(t, 1, false) == "[1.e-05 1.e+00]");
  std::vector<char> buf(256);
  char* out = buf.data();
  detail::append_tensor(out, buf.data() + buf.size(), t);
  CHECK(std::string(buf.data(), out) == "[1.e-05 1.e+00]");
  out = buf.data();
  detail::append_tensor(out, buf.data() + buf.size(), t, 1);
  CHECK(std::string(buf.data(), out) == "[1.e-05 1.e+00]");
}

TEST_CASE("numpy arrays print a float32 above 2^24 with its exact integer part",
          "[numpy_str][numpy_suppress]") {
  // float32 99999992 (= 1e8 - 8, exactly representable; spacing 8 there): its shortest digits
  // are 9.999999e7, so str() of the scalar is "99999990.0", but numpy's array printer asks
  // Dragon4 for at least the units digit (min_digits = 0) and prints the value exactly. With
  // numpy's default options too: max / min = 2 and min >= 1e-4 keep [99999992, 5e7] positional.
  const float v[2] = {99999992.0f, 5e7f};
  const TensorValue t{v, 1, 2, 2, 1, DType::float32};
  CHECK(numpy_str(t, 1, false) == "[99999992. 50000000.]");
  CHECK(numpy_str(t, 1, true) == "[99999992. 50000000.]");
  CHECK(numpy_str(TensorValue{v, 1, 1, 1, 1, DType::float32}, 0, true) == "99999990.0");
}

namespace {
using hookfuse_test::CapturingLogger;
using hookfuse_test::Line;
using hookfuse_test::Lines;
}  // namespace

TEST_CASE("numpy suppress: LoggingTensorHook's default line prints arrays under suppress",
          "[numpy_suppress][logging_tensor]") {
  FakeClock clock;
  std::vector<Line> lines;
  using Fake = ClockRef<FakeClock>;
  using Hook = BasicLoggingTensorHook<LoggingPolicies<Fake, CapturingLogger>, "grad", "w">;
  // On the heap, as in test_log_format: GCC 12 misreads the hook's std::optional timer on the
  // stack as maybe uninitialized.
  auto hook = std::make_unique<Hook>(Hook::Options{.every_n_iter = 1}, DefaultTensorFormatter{},
                                     Fake{&clock}, CapturingLogger{&lines});
  std::int64_t gs = 0;
  SessionRunContext ctx(&gs);
  const float grad[3] = {2e-6f, -0.5f, 1e-10f};   // [3], stored [1, 3]
  const double w[4] = {1e-5, 2.0, 1000.0, -3.0};  // [2, 2]
  SessionRunValues<"grad", "w"> values{};
  values.results[0] = TensorValue{grad, 1, 3, 3, 1, DType::float32};
  values.results[1] = TensorValue{w, 2, 2, 2, 1, DType::float64};
  hook->begin();
  (void)hook->before_run(ctx);
  hook->after_run(ctx, values);
  // numpy under suppress (hand-computed): grad's fractions "000002", "5", "" (1e-10 rounds to
  // 0 at 8 digits): 6 digits, integer width 2 ("-0"); w: integer width 4 ("1000"), fractions
  // "00001", "", "", "": 5 digits.
  REQUIRE(lines.size() == 1);
  CHECK(lines[0].text ==
        "grad = [ 0.000002 -0.5       0.      ], w = [[   0.00001    2.     ]\n"
        " [1000.        -3.     ]]");
}
