// tests/test_unique_names.cpp: one name, one tensor (TensorFlow's "Variable w already exists,
// disallowed."): two different objects under one name are a ValueError at bind time, naming the
// name; one object used twice stays one tensor. (Two different types under one name do not
// compile: tests/compile_fail/duplicate_variable_name.cpp and duplicate_tensor_name.cpp.)
#include <catch2/catch.hpp>

#include "error_of.hpp"
#include <cstdint>
#include <string>
#include <type_traits>

#include "hookfuse/autodiff.hpp"

namespace hf = hookfuse;
using Catch::Matchers::Contains;
using hf::Index;

namespace {

using hookfuse_test::error_of;

}  // namespace

TEST_CASE("names: two distinct Variable objects named w in one loss are a ValueError", "[names]") {
  hf::Placeholder<"x", float, 1> x;
  hf::Variable<"w", float, 1, 1> first;
  hf::Variable<"w", float, 1, 1> second;  // same type and name, another object
  // loss = sum(x * first * second). Without the check the tape keeps only `first` under "w"
  // and `second` is never trained.
  auto loss = hf::named<"loss">(hf::reduce_sum(hf::matmul(hf::matmul(x, first), second)));
  const std::string what = error_of<hf::ValueError>([&] { (void)hf::bind(4, loss); });
  CHECK_THAT(what, Contains("Variable w already exists, disallowed"));
  // ValueError is a std::invalid_argument, as Python's ValueError maps to it.
  CHECK_THROWS_AS(hf::bind(4, loss), std::invalid_argument);
}

TEST_CASE("names: the same Variable used twice is one tensor whose gradient sums both uses",
          "[names]") {
  hf::Placeholder<"x", float, 1> x;
  hf::Variable<"w", float, 1, 1> w;
  w.value(0, 0) = 3.0f;
  // loss = sum(x w w) over the batch; d loss / d w = 2 w sum(x) = 2 * 3 * (1 + 2) = 18.
  auto loss = hf::named<"loss">(hf::reduce_sum(hf::matmul(hf::matmul(x, w), w)));
  auto g = hf::bind(2, loss);
  const float xs[2] = {1.0f, 2.0f};
  g.feed<"x">(xs, 2);
  CHECK(g.forward() == 27.0f);  // 9 * (1 + 2)
  g.backward();
  CHECK(w.grad(0, 0) == 18.0f);
}

TEST_CASE("names: one named expression fetched twice (loss and metric) stays legal", "[names]") {
  hf::Placeholder<"x", float, 1> x;
  hf::Variable<"w", float, 1, 1> w;
  auto h = hf::named<"h">(hf::matmul(x, w));
  auto loss = hf::named<"loss">(hf::reduce_sum(h));
  auto metric = hf::named<"metric">(hf::reduce_mean(h));  // a copy of the same expression
  CHECK_NOTHROW(hf::bind(2, loss, metric, h));
}

TEST_CASE("names: two named expressions of one type over different variables are a ValueError",
          "[names]") {
  hf::Placeholder<"x", float, 1> x;
  hf::Variable<"w", float, 1, 1> a;
  hf::Variable<"w", float, 1, 1> b;
  auto loss = hf::named<"loss">(hf::reduce_sum(hf::named<"h">(hf::matmul(x, a))));
  auto metric = hf::named<"metric">(hf::reduce_mean(hf::named<"h">(hf::matmul(x, b))));
  const std::string what = error_of<hf::ValueError>([&] { (void)hf::bind(2, loss, metric); });
  CHECK_THAT(what, Contains("Tensor h already exists, disallowed"));
}

TEST_CASE("names: two named expressions differing only in a constant are a ValueError",
          "[names]") {
  hf::Placeholder<"x", float, 1> x;
  hf::Variable<"w", float, 1, 1> w;
  auto loss = hf::named<"loss">(hf::reduce_sum(hf::named<"s">(hf::scale(hf::matmul(x, w), 2.0f))));
  auto same = hf::named<"m1">(hf::reduce_mean(hf::named<"s">(hf::scale(hf::matmul(x, w), 2.0f))));
  auto other = hf::named<"m2">(hf::reduce_mean(hf::named<"s">(hf::scale(hf::matmul(x, w), 3.0f))));
  CHECK_NOTHROW(hf::bind(2, loss, same));
  const std::string what = error_of<hf::ValueError>([&] { (void)hf::bind(2, loss, other); });
  CHECK_THAT(what, Contains("Tensor s already exists, disallowed"));
}

TEST_CASE("names: two placeholders x of different widths are a ValueError", "[names]") {
  hf::Placeholder<"x", float, hf::Dynamic> x3{.cols = 3};
  hf::Placeholder<"x", float, hf::Dynamic> x4{.cols = 4};
  auto loss = hf::named<"loss">(hf::reduce_sum(x3));
  auto metric = hf::named<"metric">(hf::reduce_sum(x4));
  const std::string what = error_of<hf::ValueError>([&] { (void)hf::bind(2, loss, metric); });
  CHECK_THAT(what, Contains("Placeholder x already exists, disallowed"));
  hf::Placeholder<"x", float, hf::Dynamic> x3b{.cols = 3};  // the same placeholder, by value
  CHECK_NOTHROW(hf::bind(2, loss, hf::named<"metric">(hf::reduce_sum(x3b))));
}

// Variable, Placeholder and Named carry their name as detail::packed_name_t<Name> (the characters
// eight to a 64-bit word, first character in the lowest byte), which keeps the symbols of a large
// model short. The name must come back unchanged, and two names must give two types exactly when
// their characters differ.
TEST_CASE("names: a name packed into words comes back unchanged, one type per name", "[names]") {
  using hf::detail::packed_name;
  using hf::detail::packed_name_t;
  // By hand: 'a' = 0x61, 'b' = 0x62; "ab" is one word 0x6261. "abcdefgh" fills a word exactly
  // (0x6867666564636261); "abcdefghi" spills 'i' (0x69) into a second word. "" has no word.
  STATIC_REQUIRE(std::is_same_v<packed_name_t<"ab">, packed_name<0x6261>>);
  STATIC_REQUIRE(std::is_same_v<packed_name_t<"abcdefgh">, packed_name<0x6867666564636261>>);
  STATIC_REQUIRE(
      std::is_same_v<packed_name_t<"abcdefghi">, packed_name<0x6867666564636261, 0x69>>);
  STATIC_REQUIRE(std::is_same_v<packed_name_t<"">, packed_name<>>);
  // Round trips, lengths 0 to 17 around the word boundaries, and bytes above 0x7f (UTF-8).
  STATIC_REQUIRE(packed_name_t<"">::value == hf::fixed_string(""));
  STATIC_REQUIRE(packed_name_t<"w">::value == hf::fixed_string("w"));
  STATIC_REQUIRE(packed_name_t<"kernel7">::value == hf::fixed_string("kernel7"));
  STATIC_REQUIRE(packed_name_t<"dense_03">::value == hf::fixed_string("dense_03"));
  STATIC_REQUIRE(packed_name_t<"dense_03/">::value == hf::fixed_string("dense_03/"));
  STATIC_REQUIRE(packed_name_t<"dense_03/kernel">::value == hf::fixed_string("dense_03/kernel"));
  STATIC_REQUIRE(packed_name_t<"dense_03/kernel1">::value ==
                 hf::fixed_string("dense_03/kernel1"));
  STATIC_REQUIRE(packed_name_t<"dense_03/kernel12">::value ==
                 hf::fixed_string("dense_03/kernel12"));
  STATIC_REQUIRE(packed_name_t<"caf\xc3\xa9">::value == hf::fixed_string("caf\xc3\xa9"));
  STATIC_REQUIRE(sizeof(packed_name_t<"dense_03/kernel">::value) == sizeof("dense_03/kernel"));
  // What the model types report.
  STATIC_REQUIRE(hf::Variable<"dense_03/kernel", float, 2, 3>::name.view() == "dense_03/kernel");
  STATIC_REQUIRE(hf::Placeholder<"labels", std::int32_t, 1>::name.view() == "labels");
  STATIC_REQUIRE(hf::Named<"logits", hf::Input<hf::Placeholder<"x", float, 2>>>::name.view() ==
                 "logits");
  // One type per name: a prefix, a name one word longer, one byte changed in the second word.
  STATIC_REQUIRE(!std::is_same_v<hf::Variable<"w", float, 1, 1>, hf::Variable<"ww", float, 1, 1>>);
  STATIC_REQUIRE(!std::is_same_v<hf::Variable<"abcdefgh", float, 1, 1>,
                                 hf::Variable<"abcdefghi", float, 1, 1>>);
  STATIC_REQUIRE(!std::is_same_v<hf::Variable<"dense_01/kernel", float, 1, 1>,
                                 hf::Variable<"dense_01/kernem", float, 1, 1>>);
  STATIC_REQUIRE(std::is_same_v<hf::Variable<"dense_01/kernel", float, 1, 1>,
                                hf::Variable<hf::concat(hf::fixed_string("dense_01"),
                                                        hf::fixed_string("/kernel")),
                                             float, 1, 1>>);
}
