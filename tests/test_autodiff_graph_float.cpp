// tests/test_autodiff_graph_float.cpp: a float model matches the double one (split from
// test_autodiff_graph.cpp to keep each file's compile time under a minute).
#include "graph_test_mlp.hpp"

namespace {
std::vector<double> to_double(const std::vector<float>& v) { return {v.begin(), v.end()}; }
}  // namespace

// --- (g) float ---------------------------------------------------------------------------------

TEST_CASE("graph: a float model matches the double one", "[autodiff][graph]") {
  Mlp<double> md;
  Mlp<float> mf;
  mf.w1.value = md.w1.value.cast<float>();
  mf.b1.value = md.b1.value.cast<float>();
  mf.w2.value = md.w2.value.cast<float>();
  mf.b2.value = md.b2.value.cast<float>();
  auto gd = md.bind(8);
  auto gf = mf.bind(8);
  const Batch b = random_batch(6, 7);
  std::vector<float> xf(b.x.size());
  for (std::size_t i = 0; i < xf.size(); ++i) xf[i] = static_cast<float>(b.x[i]);

  const std::vector<double> xd = to_double(xf);  // the same (float-rounded) inputs
  feed(gd, xd, b.y, b.rows);
  feed(gf, xf, b.y, b.rows);
  const double ld = gd.forward();
  const float lf = gf.forward();
  STATIC_REQUIRE(std::is_same_v<decltype(gf)::scalar, float>);
  CHECK(std::isfinite(lf));
  CHECK(static_cast<double>(lf) == Approx(ld).epsilon(1e-5));
  gd.backward();
  gf.backward();
  CHECK(max_grad_diff(mf.grads(), md.grads()) < 1e-4);
  CHECK(gf.compute<"accuracy">()(0, 0) == static_cast<float>(gd.compute<"accuracy">()(0, 0)));
}

// --- (h) relu's gradient at its edges ----------------------------------------------------------

TEMPLATE_TEST_CASE("graph: relu passes the upstream gradient where relu(v) > 0 and 0 elsewhere",
                   "[autodiff][graph]", float, double) {
  // loss = reduce_sum(relu(v) * c), so d loss / d v = c where v > 0, else 0 (TF's ReluGrad:
  // gradients * (features > 0); a NaN feature is not > 0). 3 x 11 = 33 elements: whole SIMD
  // packets and a scalar tail, with the edge values in both.
  using S = TestType;
  constexpr S inf = std::numeric_limits<S>::infinity();
  constexpr S nan = std::numeric_limits<S>::quiet_NaN();
  hf::Variable<"v", S, 3, 11> v;
  hf::Variable<"c", S, 3, 11> c;
  const S edges[] = {S(0), S(-0.0), S(-2), nan, inf, -inf, S(1e-6), S(3)};
  const int n = 33;
  for (int i = 0; i < n; ++i) {
    v.value(i / 11, i % 11) = (i < 8) ? edges[i] : (i >= 25 ? edges[i - 25] : S(i % 3) - S(1));
    c.value(i / 11, i % 11) = S(i + 1);
  }
  auto g = hf::bind(1, hf::named<"loss">(hf::reduce_sum(hf::relu(v) * c)));
  g.forward();
  g.backward();
  for (int i = 0; i < n; ++i) {
    const S x = v.value(i / 11, i % 11);
    INFO("element " << i << ", v = " << x);
    const S want = (x > S(0)) ? S(i + 1) : S(0);  // by hand: 1 * c where v > 0
    CHECK(v.grad(i / 11, i % 11) == want);
    CHECK(!std::signbit(v.grad(i / 11, i % 11)));
  }
}
