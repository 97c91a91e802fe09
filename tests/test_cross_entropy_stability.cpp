// tests/test_cross_entropy_stability.cpp: sparse softmax cross-entropy keeps float's precision
// for logits of any size.
//
// Expected values by hand: for logits (a, a - 1) and label 1 the loss is
// -log(e^(a-1) / (e^a + e^(a-1))) = log(1 + e) = 1.31326169 whatever a; for (a + 2, a) and
// label 0 it is log(1 + e^-2) = 0.12692801. The gradient is softmax - onehot over the batch:
// softmax(a, a - 1) = (1 / (1 + e^-1), e^-1 / (1 + e^-1)) = (0.73105858, 0.26894142).
// Near 1e6 a float's spacing is 0.0625, so a loss formed as (m + log(sum)) - z[label] would be
// 1.3125 (off by 7.6e-4); the check below is 1e-6.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>

#include <hookfuse/autodiff.hpp>

namespace hf = hookfuse;

TEST_CASE("cross-entropy: float logits (1e6, 1e6 - 1), label 1, is log(1 + e) within 1e-6") {
  hf::Placeholder<"y", std::int32_t, 1> y;
  hf::Variable<"z", float, 1, 2> z;
  z.value << 1e6f, 1e6f - 1.0f;
  REQUIRE(z.value(0, 1) == 999999.0f);  // both exactly representable
  auto g = hf::bind(1, hf::sparse_softmax_cross_entropy(y, z));
  const std::int32_t label = 1;
  g.feed<"y">(&label, 1);
  const float loss = g.forward();
  CHECK(std::abs(loss - 1.3132616f) <= 1e-6f);
  CHECK(std::abs(static_cast<double>(loss) - 1.31326169) <= 1e-6);
  g.backward();
  CHECK(std::abs(z.grad(0, 0) - 0.73105858f) <= 1e-6f);
  CHECK(std::abs(z.grad(0, 1) - (0.26894142f - 1.0f)) <= 1e-6f);
}

TEST_CASE("cross-entropy: large positive and negative float logits in one batch") {
  hf::Placeholder<"y", std::int32_t, 1> y;
  hf::Variable<"z", float, 2, 2> z;
  z.value << 1e6f, 1e6f - 1.0f,  //
      -1e6f + 2.0f, -1e6f;
  auto g = hf::bind(2, hf::sparse_softmax_cross_entropy(y, z));
  const std::int32_t labels[2] = {1, 0};
  g.feed<"y">(labels, 2);
  const double expected = (1.31326169 + 0.12692801) / 2;
  CHECK(std::abs(static_cast<double>(g.forward()) - expected) <= 1e-6);
  g.backward();
  // (softmax - onehot) / 2. Row 1: softmax(a + 2, a) = (1 / (1 + e^-2), e^-2 / (1 + e^-2)).
  const float p0 = 0.73105858f, q0 = 0.88079708f;
  CHECK(std::abs(z.grad(0, 0) - p0 / 2) <= 1e-6f);
  CHECK(std::abs(z.grad(0, 1) - (1 - p0 - 1) / 2) <= 1e-6f);
  CHECK(std::abs(z.grad(1, 0) - (q0 - 1) / 2) <= 1e-6f);
  CHECK(std::abs(z.grad(1, 1) - (1 - q0) / 2) <= 1e-6f);
}

TEST_CASE("cross-entropy: double logits near 1e15 keep their precision") {
  // Near 1e15 a double's spacing is 0.125: the same failure in double, one scale up.
  hf::Placeholder<"y", std::int32_t, 1> y;
  hf::Variable<"z", double, 1, 2> z;
  z.value << 1e15, 1e15 - 1.0;
  auto g = hf::bind(1, hf::sparse_softmax_cross_entropy(y, z));
  const std::int32_t label = 1;
  g.feed<"y">(&label, 1);
  CHECK(std::abs(g.forward() - 1.3132616875182228) <= 1e-12);
}
