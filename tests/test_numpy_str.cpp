// tests/test_numpy_str.cpp: fetched values print as numpy's str() of them, which is what
// TensorFlow's LoggingTensorHook logs ("%s = %s" % (tag, value)).
//
// The expected texts come from numpy itself: HOOKFUSE_FIXTURES_DIR/numpy_str/cases.json holds
// values (exact bits: float32 / float64 as hex IEEE bits, integers as JSON integers, row-major
// with their numpy shape) and the text numpy 1.24 printed for each. Without the file the test
// reports itself as skipped. A few hand-written cases below need no fixture.
#include <bit>
#include <catch2/catch.hpp>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <hookfuse/hookfuse.hpp>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "numpy_cases.hpp"

#if __has_include("skip.hpp")
#include "skip.hpp"
#else
#include <sstream>
#define HOOKFUSE_SKIP(reason)                                                                \
  do {                                                                                       \
    std::ostringstream hookfuse_skip_reason_;                                                \
    hookfuse_skip_reason_ << reason;                                                         \
    std::printf("SKIPPED: %s: %s\n", Catch::getResultCapture().getCurrentTestName().c_str(), \
                hookfuse_skip_reason_.str().c_str());                                        \
    std::fflush(stdout);                                                                     \
    std::exit(77);                                                                           \
  } while (false)
#endif

using namespace hookfuse;

namespace {

using hookfuse_test::decode;
using hookfuse_test::Stored;

std::string numpy_str(const TensorValue& t, int rank) {
  std::vector<char> buf(1 << 16);
  char* out = buf.data();
  detail::append_tensor(out, buf.data() + buf.size(), t, rank);
  return std::string(buf.data(), out);
}

std::string numpy_str(const TensorValue& t) {
  std::vector<char> buf(1 << 16);
  char* out = buf.data();
  detail::append_tensor(out, buf.data() + buf.size(), t);
  return std::string(buf.data(), out);
}

}  // namespace

TEST_CASE("numpy_str: all cases of numpy_str/cases.json print exactly as numpy printed them",
          "[numpy_str]") {
  const std::filesystem::path file =
      std::filesystem::path(HOOKFUSE_FIXTURES_DIR) / "numpy_str" / "cases.json";
  if (!std::filesystem::exists(file)) HOOKFUSE_SKIP("fixture " << file.string() << " not found");
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
    const std::string got = numpy_str(s.value, s.rank);
    CHECK(got == expected);
    // The rank the hook infers from the storage alone is numpy's, except for shape [1] (stored
    // [1, 1], which the hook prints as a scalar; see detail::numpy_rank).
    if (c.at("shape") != nlohmann::json::array({1})) CHECK(numpy_str(s.value) == expected);
    passed += got == expected ? 1 : 0;
  }
  std::printf("numpy_str: %d of %zu cases exact\n", passed, cases.size());
  CHECK(passed == 51);
}

TEST_CASE("numpy_str: hand-computed cases", "[numpy_str]") {
  // 0.1f + 0.2f in float32 is 0.3 rounded: shortest digits "0.3" (float32's own), while its
  // float64 value would print 0.30000001192092896.
  const float f = 0.1f + 0.2f;
  CHECK(numpy_str(TensorValue{&f, 1, 1, 1, 1, DType::float32}) == "0.3");
  const double d = static_cast<double>(f);
  CHECK(numpy_str(TensorValue{&d, 1, 1, 1, 1, DType::float64}) == "0.30000001192092896");
  // Arrays cut at 8 fraction digits: 1/3 in float64 prints 0.33333333.
  const double third[2] = {1.0 / 3.0, 1.0};
  CHECK(numpy_str(TensorValue{third, 1, 2, 2, 1, DType::float64}) == "[0.33333333 1.        ]");
  // All non-finite: "nan" and "-inf" right-aligned to the width of "-inf".
  const float nf[2] = {std::numeric_limits<float>::quiet_NaN(),
                       -std::numeric_limits<float>::infinity()};
  CHECK(numpy_str(TensorValue{nf, 1, 2, 2, 1, DType::float32}) == "[ nan -inf]");
  // A column [3, 1] stays 2-D; an empty batch prints "[]".
  const std::int64_t col[3] = {1, -20, 3};
  CHECK(numpy_str(TensorValue{col, 3, 1, 1, 1, DType::int64}) == "[[  1]\n [-20]\n [  3]]");
  CHECK(numpy_str(TensorValue{col, 0, 1, 1, 1, DType::int64}) == "[]");
  // Exponents share their width: 1e-300 and 1.0 give three exponent digits.
  const double e[2] = {1e-300, 1.0};
  CHECK(numpy_str(TensorValue{e, 1, 2, 2, 1, DType::float64}) == "[1.e-300 1.e+000]");
  // A column-major view (col_stride != 1) prints in row order.
  const float cm[4] = {1.0f, 3.0f, 2.0f, 4.0f};  // [[1, 2], [3, 4]] stored by columns
  CHECK(numpy_str(TensorValue{cm, 2, 2, 1, 2, DType::float32}) == "[[1. 2.]\n [3. 4.]]");
}

TEST_CASE("numpy_str: a full buffer cuts the text and stays NUL-terminated", "[numpy_str]") {
  const float v[20] = {};
  char buf[8];
  char* out = buf;
  detail::append_tensor(out, buf + sizeof buf, TensorValue{v, 1, 20, 20, 1, DType::float32});
  CHECK(out < buf + sizeof buf);
  CHECK(*out == '\0');
  CHECK(std::string(buf) == std::string("[0. 0. 0. 0.").substr(0, 7));
}
