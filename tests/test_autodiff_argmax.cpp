// tests/test_autodiff_argmax.cpp: hf::argmax, tf.argmax(x, axis=1) as float class ids. Expected
// ids are read off the inputs by hand; ties go to the first largest value (tf.argmax's rule).
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <vector>

#include "hookfuse/autodiff.hpp"

namespace hf = hookfuse;

TEST_CASE("argmax: each row's largest column, ties to the first, negatives",
          "[autodiff][argmax]") {
  hf::Placeholder<"x", float, 4> x;
  hf::Placeholder<"y", std::int32_t, 1> y;
  hf::Variable<"w", float, 4, 4> w;
  w.value.setIdentity();
  auto z = hf::named<"logits">(hf::matmul(x, w));
  auto g = hf::bind(5, hf::named<"loss">(hf::sparse_softmax_cross_entropy(y, z)),
                    hf::named<"classes">(hf::argmax(z)));

  const std::vector<float> xd = {0.5f, 3.f, -1.f, 2.f,    // 1
                                 7.f,  7.f, 7.f,  7.f,    // all tie: 0
                                 -4.f, -2.f, -3.f, -9.f,  // all negative: 1
                                 1.f,  2.f, 5.f,  5.f,    // tie between 2 and 3: 2
                                 0.f,  0.f, 0.f,  1e-7f}; // 3
  const std::vector<std::int32_t> yd = {0, 0, 0, 0, 0};
  g.feed<"x">(xd.data(), 5, 4);
  g.feed<"y">(yd.data(), 5);
  g.forward();
  const auto& c = g.compute<"classes">();
  REQUIRE(c.rows() == 5);
  REQUIRE(c.cols() == 1);
  CHECK(c(0, 0) == 1.f);
  CHECK(c(1, 0) == 0.f);
  CHECK(c(2, 0) == 1.f);
  CHECK(c(3, 0) == 2.f);
  CHECK(c(4, 0) == 3.f);

  // A shorter batch afterwards: only its rows.
  const std::vector<float> xs = {0.f, 0.f, 9.f, 0.f,  //
                                 -1.f, 0.f, -1.f, -1.f};
  g.feed<"x">(xs.data(), 2, 4);
  g.feed<"y">(yd.data(), 2);
  g.forward();
  const auto& s = g.compute<"classes">();
  REQUIRE(s.rows() == 2);
  CHECK(s(0, 0) == 2.f);
  CHECK(s(1, 0) == 1.f);
}

TEST_CASE("argmax: no gradient flows through it", "[autodiff][argmax]") {
  // The loss is the cross-entropy alone; a fetched argmax beside it leaves w's gradient as the
  // cross-entropy's: with w = I, x = [1, 0], y = 0, dL/dz = softmax([1, 0]) - [1, 0].
  hf::Placeholder<"x", double, 2> x;
  hf::Placeholder<"y", std::int32_t, 1> y;
  hf::Variable<"w", double, 2, 2> w;
  w.value.setIdentity();
  auto z = hf::named<"logits">(hf::matmul(x, w));
  auto g = hf::bind(1, hf::named<"loss">(hf::sparse_softmax_cross_entropy(y, z)),
                    hf::named<"classes">(hf::argmax(z)));
  const std::vector<double> xd = {1.0, 0.0};
  const std::vector<std::int32_t> yd = {0};
  g.feed<"x">(xd.data(), 1, 2);
  g.feed<"y">(yd.data(), 1);
  g.forward();
  g.backward();
  CHECK(g.compute<"classes">()(0, 0) == 0.0);
  const double p0 = 1.0 / (1.0 + std::exp(-1.0));  // e / (e + 1)
  // dL/dw = x^T (p - onehot): row 0 is [p0 - 1, 1 - p0], row 1 zero.
  CHECK(w.grad(0, 0) == Approx(p0 - 1.0).epsilon(1e-12));
  CHECK(w.grad(0, 1) == Approx(1.0 - p0).epsilon(1e-12));
  CHECK(w.grad(1, 0) == 0.0);
  CHECK(w.grad(1, 1) == 0.0);
}
