// tests/test_zero_alloc.cpp: training steps of a bound autodiff graph allocate nothing.
//
// A Fashion-MNIST-shaped classifier (784 -> 256 relu -> 10, sparse softmax cross-entropy, float,
// dynamic batch, capacity 128) is bound once; after one warm-up step at the full batch, further
// steps (forward, backward, the fetch-only accuracy, and an SGD update
// `w.value.noalias() -= lr * w.grad`) at batch 1, 32 and 128, and in a mixed order, on one
// thread and on 2 and 3 intra-op threads, must neither call operator new nor make Eigen allocate
// (alloc_counter.hpp counts both). Controls show that
// each counter sees the allocations it is meant to see.
//
// This file replaces the global operator new (HOOKFUSE_DEFINE_ALLOC_COUNTER); every
// tests/test_*.cpp is its own executable, so this is the only definition in its program.
// clang-format off: alloc_counter.hpp must come before anything that includes Eigen.
#define HOOKFUSE_DEFINE_ALLOC_COUNTER
#include "alloc_counter.hpp"
// clang-format on

#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <memory>
#include <vector>

#include "gradcheck.hpp"  // Rng
#include "hookfuse/autodiff.hpp"

namespace hf = hookfuse;
using hf::Dynamic;
using hf::Index;
using hookfuse_test::NoAllocScope;

namespace {

/// Keeps a pointer observable, so the compiler cannot drop the allocation behind it.
void* volatile g_sink = nullptr;

constexpr Index kFeatures = 784, kHidden = 256, kClasses = 10, kCapacity = 128;
constexpr int kSteps = 5;

/// The classifier, its bound graph and random inputs for a full batch.
struct Classifier {
  hf::Placeholder<"x", float, kFeatures> x;
  hf::Placeholder<"y", std::int32_t, 1> y;
  // Run-time sizes: a fixed 784 x 256 matrix is too big for an Eigen fixed-size object.
  hf::Variable<"w1", float, Dynamic, Dynamic> w1{kFeatures, kHidden};
  hf::Variable<"b1", float, 1, Dynamic> b1{1, kHidden};
  hf::Variable<"w2", float, Dynamic, Dynamic> w2{kHidden, kClasses};
  hf::Variable<"b2", float, 1, Dynamic> b2{1, kClasses};
  std::vector<float> features;
  std::vector<std::int32_t> labels;

  Classifier() {
    hookfuse_test::Rng rng(784256);
    hookfuse_test::randomize(w1.value, rng, -0.08, 0.08);
    hookfuse_test::randomize(w2.value, rng, -0.15, 0.15);
    features.resize(static_cast<std::size_t>(kCapacity * kFeatures));
    for (float& f : features) f = static_cast<float>(rng.uniform(0.0, 1.0));
    for (Index i = 0; i < kCapacity; ++i) labels.push_back(rng.below(kClasses));
  }
  auto bind() {
    auto logits = hf::named<"logits">(hf::matmul(hf::relu(hf::matmul(x, w1) + b1), w2) + b2);
    return hf::bind(kCapacity, hf::named<"loss">(hf::sparse_softmax_cross_entropy(y, logits)),
                    hf::named<"accuracy">(hf::accuracy(y, logits)));
  }
};

/// One training step on the first `rows` examples; returns loss + accuracy (to be checked
/// outside the measured region).
template <class G>
float step(G& g, Classifier& m, Index rows) {
  g.template feed<"x">(m.features.data(), rows, kFeatures);
  g.template feed<"y">(m.labels.data(), rows);
  const float loss = g.forward();
  g.backward();
  const float acc = g.template compute<"accuracy">()(0, 0);
  const float lr = 0.01f;
  g.for_each_variable([lr](auto& v) { v.value.noalias() -= lr * v.grad; });
  return loss + acc;
}

struct Counts {
  std::size_t news = 0;
  std::size_t eigen_mallocs = 0;
  float result = 0;
};

/// Sets the intra-op thread count for its lifetime, 1 again after.
struct ThreadsScope {
  explicit ThreadsScope(int n) { hf::set_intra_op_parallelism_threads(n); }
  ~ThreadsScope() { hf::set_intra_op_parallelism_threads(1); }
};

/// Binds, warms up with one full-batch step, then measures kSteps steps at each batch size of
/// `batches` in turn, with `threads` intra-op threads (their pool started before the warm-up).
Counts measure(std::initializer_list<Index> batches, int threads = 1) {
  const ThreadsScope threads_scope(threads);
  auto m = std::make_unique<Classifier>();
  auto g = m->bind();
  step(g, *m, kCapacity);  // warm-up
  Counts c;
  {
    NoAllocScope scope;
    for (const Index batch : batches)
      for (int i = 0; i < kSteps; ++i) c.result += step(g, *m, batch);
    c.news = scope.news();
    c.eigen_mallocs = scope.eigen_mallocs();
  }
  return c;
}

}  // namespace

TEST_CASE("zero alloc: training steps of a 784-256-10 float classifier allocate nothing",
          "[autodiff][alloc]") {
  SECTION("batch 1") {
    const Counts c = measure({1});
    CHECK(std::isfinite(c.result));
    CHECK(c.news == 0);
    CHECK(c.eigen_mallocs == 0);
  }
  SECTION("batch 32") {
    const Counts c = measure({32});
    CHECK(std::isfinite(c.result));
    CHECK(c.news == 0);
    CHECK(c.eigen_mallocs == 0);
  }
  SECTION("batch 128 (the capacity)") {
    const Counts c = measure({128});
    CHECK(std::isfinite(c.result));
    CHECK(c.news == 0);
    CHECK(c.eigen_mallocs == 0);
  }
  SECTION("batches of changing size, as with a short last batch") {
    const Counts c = measure({1, 128, 32, 77, 1, 128});
    CHECK(std::isfinite(c.result));
    CHECK(c.news == 0);
    CHECK(c.eigen_mallocs == 0);
  }
}

TEST_CASE("zero alloc: training steps on 2 intra-op threads allocate nothing",
          "[autodiff][alloc][threads]") {
  // The large products (784 x 256 at every batch here) are split across the pool: each part
  // packs into the blocking the workspace reserved in the warm-up step.
  SECTION("batch 32") {
    const Counts c = measure({32}, 2);
    CHECK(std::isfinite(c.result));
    CHECK(c.news == 0);
    CHECK(c.eigen_mallocs == 0);
  }
  SECTION("batch 128 (the capacity)") {
    const Counts c = measure({128}, 2);
    CHECK(std::isfinite(c.result));
    CHECK(c.news == 0);
    CHECK(c.eigen_mallocs == 0);
  }
  SECTION("batches of changing size, on 3 threads") {
    const Counts c = measure({1, 128, 32, 77, 1, 128}, 3);
    CHECK(std::isfinite(c.result));
    CHECK(c.news == 0);
    CHECK(c.eigen_mallocs == 0);
  }
}

// --- controls: the counters are wired in --------------------------------------------------------

TEST_CASE("zero alloc: operator new is counted in every form", "[alloc]") {
  struct alignas(64) Overaligned {
    char bytes[64];
  };
  std::size_t plain = 0, array = 0, nothrow = 0, aligned = 0, vec = 0;
  {
    NoAllocScope scope;
    auto* p = new int(1);
    g_sink = p;
    delete p;
    plain = scope.news();
    auto* a = new int[16];
    g_sink = a;
    delete[] a;
    array = scope.news() - plain;
    auto* n = new (std::nothrow) double(2.0);
    g_sink = n;
    delete n;
    nothrow = scope.news() - plain - array;
    auto* o = new Overaligned;
    g_sink = o;
    delete o;
    aligned = scope.news() - plain - array - nothrow;
    {
      std::vector<int> v(100);
      g_sink = v.data();
    }
    vec = scope.news() - plain - array - nothrow - aligned;
  }
  CHECK(plain == 1);
  CHECK(array == 1);
  CHECK(nothrow == 1);
  CHECK(aligned == 1);
  CHECK(vec == 1);
}

TEST_CASE("zero alloc: Eigen heap allocations are flagged", "[alloc]") {
  // Eigen allocates with std::malloc, not operator new: the malloc check sees what the operator
  // new counter cannot.
  Eigen::MatrixXf a = Eigen::MatrixXf::Constant(kCapacity, kFeatures, 0.5f);
  Eigen::MatrixXf b = Eigen::MatrixXf::Constant(kFeatures, kHidden, 0.25f);
  Eigen::MatrixXf c(kCapacity, kHidden);
  std::size_t product_mallocs = 0, product_news = 0, copy_mallocs = 0;
  {
    NoAllocScope scope;
    // The GEMM blocking workspace of this product exceeds EIGEN_STACK_ALLOCATION_LIMIT.
    c.noalias() = a * b;
    product_mallocs = scope.eigen_mallocs();
    product_news = scope.news();
    const Eigen::MatrixXf copy = c;  // a new dynamic matrix
    g_sink = const_cast<float*>(copy.data());
    copy_mallocs = scope.eigen_mallocs() - product_mallocs;
  }
  CHECK(product_mallocs > 0);
  CHECK(product_news == 0);
  CHECK(copy_mallocs == 1);
  CHECK(c(0, 0) == Approx(784 * 0.125f));
  // Outside a NoAllocScope, Eigen may allocate freely.
  const std::size_t before = hookfuse_test::eigen_malloc_count();
  c.noalias() = a * b;
  CHECK(hookfuse_test::eigen_malloc_count() == before);
}
