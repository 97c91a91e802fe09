// tests/graph_test_mlp.hpp: the 16 -> 12 ReLU -> 4-class model, batches and comparisons shared
// by test_autodiff_graph.cpp and test_autodiff_graph_float.cpp.
#pragma once

#include <algorithm>
#include <catch2/catch.hpp>

#include "error_of.hpp"
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "gradcheck.hpp"
#include "hookfuse/autodiff.hpp"

namespace hf = hookfuse;
using Catch::Matchers::Contains;
using hf::Dynamic;
using hf::Index;
using hookfuse_test::analytic_gradient;
using hookfuse_test::kGradTolerance;
using hookfuse_test::max_rel_diff;
using hookfuse_test::max_relative_error;
using hookfuse_test::numeric_gradient;
using hookfuse_test::random_values;
using hookfuse_test::randomize;
using hookfuse_test::Rng;

namespace {

using hookfuse_test::error_of;


}  // namespace

// --- shared model for the remaining tests ------------------------------------------------------

namespace {

/// A 16 -> 12 relu -> 4-class network with a fetch-only accuracy, in scalar type S; the products
/// are large enough for the GEMM path at batch 8. Owns its Variables (the graphs refer to them).
template <class S>
struct Mlp {
  static constexpr Index in = 16, hidden = 12, classes = 4;
  hf::Placeholder<"x", S, in> x;
  hf::Placeholder<"y", std::int32_t, 1> y;
  hf::Variable<"w1", S, Dynamic, Dynamic> w1{in, hidden};
  hf::Variable<"b1", S, 1, Dynamic> b1{1, hidden};
  hf::Variable<"w2", S, hidden, classes> w2;
  hf::Variable<"b2", S, 1, classes> b2;

  explicit Mlp(std::uint64_t seed = 0x3141) {
    Rng rng(seed);
    randomize(w1.value, rng, 0.05, 0.5, true);
    randomize(b1.value, rng, 0.0, 0.2, true);
    randomize(w2.value, rng, 0.05, 0.5, true);
    randomize(b2.value, rng, 0.0, 0.2, true);
  }
  auto logits() {
    return hf::named<"logits">(hf::matmul(hf::relu(hf::matmul(x, w1) + b1), w2) + b2);
  }
  auto bind(Index capacity) {
    auto z = logits();
    return hf::bind(capacity, hf::named<"loss">(hf::sparse_softmax_cross_entropy(y, z)),
                    hf::named<"accuracy">(hf::accuracy(y, z)));
  }
  /// The gradients of all Variables, stacked (after backward()).
  std::vector<Eigen::MatrixXd> grads() const {
    return {w1.grad.template cast<double>(), b1.grad.template cast<double>(),
            w2.grad.template cast<double>(), b2.grad.template cast<double>()};
  }
};

struct Batch {
  std::vector<double> x;
  std::vector<std::int32_t> y;
  Index rows;
};

Batch random_batch(std::uint64_t seed, Index rows) {
  Rng rng(seed);
  Batch b{random_values(rng, rows * Mlp<double>::in, 0.0, 2.0, true), {}, rows};
  for (Index i = 0; i < rows; ++i) b.y.push_back(rng.below(Mlp<double>::classes));
  return b;
}

template <class G, class X>
void feed(G& g, const X& x, const std::vector<std::int32_t>& y, Index rows) {
  g.template feed<"x">(x.data(), rows, Mlp<double>::in);
  g.template feed<"y">(y.data(), rows);
}

double max_grad_diff(const std::vector<Eigen::MatrixXd>& a, const std::vector<Eigen::MatrixXd>& b) {
  double worst = 0;
  for (std::size_t i = 0; i < a.size(); ++i) worst = std::max(worst, max_rel_diff(a[i], b[i]));
  return worst;
}

}  // namespace
