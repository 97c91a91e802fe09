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
