// tests/test_autodiff_graph.cpp: behaviour of bound graphs: fetch-only tensors, gradient
// overwrite, short batches, too many rows. Split so that each file compiles in under a minute
// with the sanitizer flags: the float model is in test_autodiff_graph_float.cpp, a named node
// used twice in test_autodiff_graph_named.cpp, shape and capacity errors at bind in
// test_autodiff_graph_shapes.cpp, the sparse softmax cross-entropy cases (label errors,
// hand-computed and extreme losses) in test_autodiff_graph_cross_entropy.cpp.
#include "graph_test_mlp.hpp"

// --- (b) fetch-only tensors --------------------------------------------------------------------

TEST_CASE("graph: forward does not compute a fetch-only tensor until compute() asks",
          "[autodiff][graph]") {
  // logits = x . w with w the identity: the arg-max of row i is where x has its largest entry.
  hf::Placeholder<"x", double, 3> x;
  hf::Placeholder<"y", std::int32_t, 1> y;
  hf::Variable<"w", double, 3, 3> w;
  w.value.setIdentity();
  auto z = hf::named<"logits">(hf::matmul(x, w));
  auto g = hf::bind(4, hf::named<"loss">(hf::sparse_softmax_cross_entropy(y, z)),
                    hf::named<"accuracy">(hf::accuracy(y, z)));
  using G = decltype(g);
  STATIC_REQUIRE(G::index_of<"accuracy"> > G::loss_index);

  const std::vector<double> xd = {5, 0, 0,  //
                                  0, 5, 0,  //
                                  0, 0, 5,  //
                                  0, 5, 0};
  std::vector<std::int32_t> yd = {0, 1, 2, 1};  // all four right
  g.feed<"x">(xd.data(), 4, 3);
  g.feed<"y">(yd.data(), 4);

  g.forward();
  g.backward();
  CHECK(g.value<"accuracy">()(0, 0) == 0.0);  // never computed
  CHECK(g.compute<"accuracy">()(0, 0) == 1.0);
  CHECK(g.value<"accuracy">()(0, 0) == 1.0);

  yd.assign({0, 2, 2, 0});  // two right
  g.feed<"y">(yd.data(), 4);
  g.forward();
  CHECK(g.value<"accuracy">()(0, 0) == 1.0);  // still last step's: forward did not touch it
  CHECK(g.compute<"accuracy">()(0, 0) == 0.5);
  CHECK(g.value<"accuracy">()(0, 0) == 0.5);
}

// --- (c) gradients are overwritten -------------------------------------------------------------

TEST_CASE("graph: backward overwrites gradients instead of accumulating them",
          "[autodiff][graph]") {
  Mlp<double> m;
  auto g = m.bind(8);
  const Batch a = random_batch(1, 8), b = random_batch(2, 8);
  // Garbage in every gradient before the first step: backward must not read it.
  m.w1.grad.setConstant(1e3);
  m.b1.grad.setConstant(-1e3);
  m.w2.grad.setConstant(std::numeric_limits<double>::quiet_NaN());
  m.b2.grad.setConstant(1e3);

  feed(g, a.x, a.y, a.rows);
  const double loss1 = g.forward();
  g.backward();
  const auto grads1 = m.grads();
  const Eigen::MatrixXd dlogits1 = g.adjoint<"logits">();
  for (const auto& gr : grads1) REQUIRE(gr.allFinite());
  CHECK(max_relative_error(numeric_gradient(g, m.w2), grads1[2]) < kGradTolerance);
  CHECK(max_relative_error(numeric_gradient(g, m.b1), grads1[1]) < kGradTolerance);

  // The same step again: the same gradients, not twice them.
  CHECK(g.forward() == loss1);
  g.backward();
  CHECK(max_grad_diff(m.grads(), grads1) == 0.0);
  CHECK(max_rel_diff(g.adjoint<"logits">(), dlogits1) == 0.0);

  // Another batch, then the first again: each step's gradient is its own batch's.
  feed(g, b.x, b.y, b.rows);
  g.forward();
  g.backward();
  const auto grads2 = m.grads();
  CHECK(max_grad_diff(grads2, grads1) > 1e-3);
  feed(g, a.x, a.y, a.rows);
  g.forward();
  g.backward();
  CHECK(max_grad_diff(m.grads(), grads1) == 0.0);
}

// --- (d) a short batch after a full one --------------------------------------------------------

TEST_CASE("graph: a batch shorter than the capacity after a full one", "[autodiff][graph]") {
  Mlp<double> m;
  auto g = m.bind(8);
  const Batch full = random_batch(3, 8), part = random_batch(4, 3);

  feed(g, full.x, full.y, full.rows);
  const double full_loss = g.forward();
  g.backward();
  const auto full_grads = m.grads();
  const double full_acc = g.compute<"accuracy">()(0, 0);

  feed(g, part.x, part.y, part.rows);
  const double loss = g.forward();
  g.backward();
  const auto grads = m.grads();
  const double acc = g.compute<"accuracy">()(0, 0);
  const Eigen::MatrixXd logits = g.value<"logits">();
  REQUIRE(logits.rows() == 3);
  REQUIRE(g.adjoint<"logits">().rows() == 3);

  // The same three rows in a graph of another capacity.
  auto fresh = m.bind(5);
  feed(fresh, part.x, part.y, part.rows);
  CHECK(fresh.forward() == Approx(loss).epsilon(1e-13));
  fresh.backward();
  CHECK(max_grad_diff(m.grads(), grads) < 1e-13);
  CHECK(fresh.compute<"accuracy">()(0, 0) == acc);
  CHECK(max_rel_diff(fresh.value<"logits">(), logits) < 1e-14);

  // The loss is the mean over the three rows, by hand from the logits.
  double expected = 0;
  for (Index i = 0; i < 3; ++i) {
    const double mx = logits.row(i).maxCoeff();
    expected += mx + std::log((logits.row(i).array() - mx).exp().sum()) -
                logits(i, part.y[static_cast<std::size_t>(i)]);
  }
  CHECK(loss == Approx(expected / 3).epsilon(1e-13));
  // And the short batch's gradient matches finite differences.
  CHECK(max_relative_error(numeric_gradient(g, m.w1), grads[0]) < kGradTolerance);

  // Back to the full batch: exactly the first step's results.
  feed(g, full.x, full.y, full.rows);
  CHECK(g.forward() == full_loss);
  g.backward();
  CHECK(max_grad_diff(m.grads(), full_grads) == 0.0);
  CHECK(g.compute<"accuracy">()(0, 0) == full_acc);
}

// --- (e), (f) shape errors ---------------------------------------------------------------------

TEST_CASE("graph: feeding more rows than the capacity throws ShapeError", "[autodiff][graph]") {
  Mlp<double> m;
  auto g = m.bind(8);
  const Batch big = random_batch(5, 9);
  const std::string msg =
      error_of<hf::ShapeError>([&] { g.feed<"x">(big.x.data(), 9, Mlp<double>::in); });
  CHECK_THAT(msg, Contains("'x'") && Contains("9 rows") && Contains("8"));
  CHECK_THROWS_AS(g.feed<"y">(big.y.data(), 9), hf::ShapeError);
  // The graph stays usable: a fitting feed works afterwards.
  feed(g, big.x, big.y, 8);
  CHECK(std::isfinite(g.forward()));
}

// --- forward-only binding ------------------------------------------------------------------------

TEST_CASE("graph: bind_forward reserves value buffers and no adjoint buffers",
          "[autodiff][graph]") {
  hookfuse::Placeholder<"x", float, 4> x;  // [batch, 4]
  hookfuse::Variable<"w", float, 4, 3> w;
  auto y = hookfuse::named<"y">(hookfuse::matmul(x, w));  // [batch, 3]
  auto loss = hookfuse::named<"loss">(hookfuse::reduce_mean(y));  // [1, 1], stored in the graph
  auto trained = hookfuse::bind(1000, loss);
  auto forward = hookfuse::bind_forward(1000, loss);
  static_assert(std::is_same_v<decltype(trained), decltype(forward)>);
  // y is the only batched tensor: 1000 x 3 floats of value, and as many of adjoint when the
  // graph trains (w requires a gradient, so y does).
  CHECK(trained.buffer_bytes() == 2 * 1000 * 3 * sizeof(float));
  CHECK(forward.buffer_bytes() == 1000 * 3 * sizeof(float));

  const float xs[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  w.value.setConstant(0.5f);
  forward.feed<"x">(xs, 2, 4);
  forward.forward();
  // every y element: 0.5 * (1+2+3+4) = 5 in row 0, 0.5 * (5+6+7+8) = 13 in row 1; mean 9.
  CHECK(forward.compute<"loss">()(0, 0) == 9.0f);
  const std::string what = error_of<hookfuse::RuntimeError>([&] { forward.backward(); });
  CHECK(what.find("bound forward only") != std::string::npos);
}
