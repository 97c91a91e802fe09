// tests/test_threads.cpp: hookfuse's intra-op thread pool (autodiff/threads.hpp,
// autodiff/thread_pool.hpp) and the products it splits (detail::gemm_add).
//
// A product split across threads is computed part by part with Eigen's sequential kernel and
// the same block sizes as on one thread. Cut along the kernel's column dimension (the rows of a
// row-major destination, the columns of a column-major one; part edges multiples of its nr
// columns) every element goes through the same register block and the same depth blocks as on
// one thread: the results must match bit for bit. Cut along the kernel's row dimension, the rows
// at a part's edge can take another register-block path (a narrower block whose loop sums the
// depth in another order), so an element may differ in its last bits; the bound is the standard
// one for two orders of one float sum of `depth` products: |difference| <= 2 * depth * eps *
// sum_k |a_ik| |b_kj|. Both are also checked against a product computed in double here.
#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "alloc_fixtures.hpp"  // RandomExamples, PreallocatedInput
#include "hookfuse/hookfuse.hpp"

namespace hf = hookfuse;
using Eigen::Index;

namespace {

template <class Scalar, int Order>
using Dyn = Eigen::Matrix<Scalar, Eigen::Dynamic, Eigen::Dynamic, Order>;

/// Sets the intra-op thread count for its lifetime, 1 again after.
struct ThreadsScope {
  explicit ThreadsScope(int n) { hf::set_intra_op_parallelism_threads(n); }
  ~ThreadsScope() { hf::set_intra_op_parallelism_threads(1); }
};

template <class M>
M random_matrix(Index rows, Index cols, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  M m(rows, cols);
  for (Index i = 0; i < rows; ++i)
    for (Index j = 0; j < cols; ++j) m(i, j) = static_cast<typename M::Scalar>(u(rng));
  return m;
}

/// dst (starting as `start`) += 0.5 * lhs * rhs through gemm_add on Maps of run-time size, with
/// the operands stored transposed and passed as .transpose() when asked (as matmul's backward
/// pass does), on the current intra-op thread count.
template <class D, class L, class R>
D product(const D& start, const L& lhs_store, bool tl, const R& rhs_store, bool tr) {
  D dst = start;
  Eigen::Map<D> d(dst.data(), dst.rows(), dst.cols());
  Eigen::Map<const L> l(lhs_store.data(), lhs_store.rows(), lhs_store.cols());
  Eigen::Map<const R> r(rhs_store.data(), rhs_store.rows(), rhs_store.cols());
  hf::detail::GemmWorkspace<typename D::Scalar, (D::Flags & Eigen::RowMajorBit) ? Eigen::RowMajor
                                                                                 : Eigen::ColMajor>
      ws;
  const typename D::Scalar alpha(0.5);
  if (tl && tr)
    hf::detail::gemm_add(d, l.transpose(), r.transpose(), alpha, ws);
  else if (tl)
    hf::detail::gemm_add(d, l.transpose(), r, alpha, ws);
  else if (tr)
    hf::detail::gemm_add(d, l, r.transpose(), alpha, ws);
  else
    hf::detail::gemm_add(d, l, r, alpha, ws);
  return dst;
}

/// [rows, depth] x [depth, cols] on one thread and on `threads`, compared as the file's header
/// says.
template <class Scalar, int DstOrder, int LhsOrder, int RhsOrder>
void check_split(Index rows, Index cols, Index depth, bool tl, bool tr, int threads) {
  using D = Dyn<Scalar, DstOrder>;
  using L = Dyn<Scalar, LhsOrder>;
  using R = Dyn<Scalar, RhsOrder>;
  const L lhs_store = tl ? random_matrix<L>(depth, rows, 1) : random_matrix<L>(rows, depth, 1);
  const R rhs_store = tr ? random_matrix<R>(cols, depth, 2) : random_matrix<R>(depth, cols, 2);
  const D start = random_matrix<D>(rows, cols, 3);
  const Eigen::MatrixXd a = tl ? Eigen::MatrixXd(lhs_store.template cast<double>().transpose())
                               : Eigen::MatrixXd(lhs_store.template cast<double>());
  const Eigen::MatrixXd b = tr ? Eigen::MatrixXd(rhs_store.template cast<double>().transpose())
                               : Eigen::MatrixXd(rhs_store.template cast<double>());

  const D one = product(start, lhs_store, tl, rhs_store, tr);
  D split;
  {
    const ThreadsScope scope(threads);
    split = product(start, lhs_store, tl, rhs_store, tr);
  }
  const bool kernel_columns = (rows >= cols) == (DstOrder == Eigen::RowMajor);
  INFO("[" << rows << ", " << depth << "] x [" << depth << ", " << cols << "], "
           << (DstOrder == Eigen::RowMajor ? "row" : "column") << "-major destination, lhs "
           << (tl ? "transposed" : "plain") << ", rhs " << (tr ? "transposed" : "plain") << ", "
           << threads << " threads");
  const Eigen::MatrixXd exact = start.template cast<double>() + 0.5 * a * b;
  const Eigen::MatrixXd magnitude = 0.5 * a.cwiseAbs() * b.cwiseAbs();
  const double eps = std::numeric_limits<Scalar>::epsilon();
  Index different = 0, outside = 0;
  for (Index i = 0; i < rows; ++i)
    for (Index j = 0; j < cols; ++j) {
      const double s = static_cast<double>(split(i, j)), o = static_cast<double>(one(i, j));
      if (s != o) ++different;
      const double bound = 2.0 * static_cast<double>(depth + 1) * eps *
                           (magnitude(i, j) + std::abs(exact(i, j)));
      if (std::abs(s - o) > bound || std::abs(s - exact(i, j)) > bound) ++outside;
    }
  CHECK(outside == 0);
  if (kernel_columns) CHECK(different == 0);
}

template <class Scalar, int DstOrder, int LhsOrder, int RhsOrder>
void check_splits(int threads) {
  for (bool tl : {false, true})
    for (bool tr : {false, true}) {
      // Sizes that are no multiple of a register block, cut along rows and along columns.
      check_split<Scalar, DstOrder, LhsOrder, RhsOrder>(101, 77, 130, tl, tr, threads);
      check_split<Scalar, DstOrder, LhsOrder, RhsOrder>(77, 101, 130, tl, tr, threads);
      check_split<Scalar, DstOrder, LhsOrder, RhsOrder>(301, 257, 31, tl, tr, threads);
      // Narrow destinations: 5 rows into parts of nr = 4 rows, 3 columns of a tall product.
      check_split<Scalar, DstOrder, LhsOrder, RhsOrder>(5, 4, 20011, tl, tr, threads);
      check_split<Scalar, DstOrder, LhsOrder, RhsOrder>(1001, 3, 103, tl, tr, threads);
    }
}

}  // namespace

TEST_CASE("threads: a product split across threads equals the one-thread product",
          "[threads]") {
  for (int threads : {2, 3}) {
    check_splits<float, Eigen::RowMajor, Eigen::RowMajor, Eigen::RowMajor>(threads);
    check_splits<float, Eigen::ColMajor, Eigen::ColMajor, Eigen::ColMajor>(threads);
    check_splits<float, Eigen::RowMajor, Eigen::ColMajor, Eigen::RowMajor>(threads);
    check_splits<double, Eigen::ColMajor, Eigen::RowMajor, Eigen::ColMajor>(threads);
  }
}

TEST_CASE("threads: set_intra_op_parallelism_threads checks n and resizes the pool",
          "[threads]") {
  CHECK(hf::intra_op_parallelism_threads() == 1);  // the default
  CHECK_THROWS_WITH(hf::set_intra_op_parallelism_threads(0),
                    "hookfuse: set_intra_op_parallelism_threads: n must be >= 1, got 0");
  CHECK_THROWS_AS(hf::set_intra_op_parallelism_threads(-3), std::invalid_argument);
  CHECK_THROWS_WITH(hf::set_intra_op_parallelism_threads(-3), Catch::Contains("got -3"));
  CHECK(hf::intra_op_parallelism_threads() == 1);

  for (int n : {3, 2, 4, 1, 2}) {
    hf::set_intra_op_parallelism_threads(n);
    CHECK(hf::intra_op_parallelism_threads() == n);
    // Every pool size computes the product (the 77 x 101 destination: every part is used).
    check_split<float, Eigen::RowMajor, Eigen::RowMajor, Eigen::RowMajor>(77, 101, 130, false,
                                                                          false, n);
    hf::set_intra_op_parallelism_threads(n);  // check_split restored 1
  }
  hf::set_intra_op_parallelism_threads(1);
  CHECK(hf::intra_op_parallelism_threads() == 1);
}

TEST_CASE("threads: products on two user threads share the pool without waiting for each other",
          "[threads]") {
  // Two callers at once: one gets the pool, the other, finding it busy, computes alone. Both
  // results are right, bit for bit (each destination is cut along the kernel's columns), and
  // neither caller blocks: the test ends.
  using M = Dyn<float, Eigen::RowMajor>;
  const M a = random_matrix<M>(300, 200, 4), b = random_matrix<M>(200, 64, 5);
  const M zero = M::Zero(300, 64);
  const M want = product(zero, a, false, b, false);
  const ThreadsScope scope(2);
  constexpr int kProducts = 200;
  std::atomic<int> wrong{0};
  auto caller = [&] {
    for (int i = 0; i < kProducts; ++i)
      if (product(zero, a, false, b, false) != want) wrong.fetch_add(1);
  };
  std::thread first(caller), second(caller);
  first.join();
  second.join();
  CHECK(wrong.load() == 0);
}

namespace {

constexpr Index kFeatures = 64, kHidden = 96, kClasses = 10, kBatch = 64;

/// A 64 -> 96 relu -> 10 classifier trained by plain SGD for `steps` steps on fixed random data,
/// on `threads` intra-op threads: its final weights, w1 then w2. The [64, 64] x [64, 96] forward
/// product and its weight gradient (393,216 multiply-adds) are split; the small ones are not.
std::vector<float> train(int threads, int steps) {
  const ThreadsScope scope(threads);
  hf::Placeholder<"x", float, kFeatures> x;
  hf::Placeholder<"y", std::int32_t, 1> y;
  hf::Variable<"w1", float, Eigen::Dynamic, Eigen::Dynamic> w1{kFeatures, kHidden};
  hf::Variable<"b1", float, 1, Eigen::Dynamic> b1{1, kHidden};
  hf::Variable<"w2", float, Eigen::Dynamic, Eigen::Dynamic> w2{kHidden, kClasses};
  hf::Variable<"b2", float, 1, Eigen::Dynamic> b2{1, kClasses};
  using RowMajor = Dyn<float, Eigen::RowMajor>;
  w1.value = random_matrix<RowMajor>(kFeatures, kHidden, 6) * 0.15f;
  w2.value = random_matrix<RowMajor>(kHidden, kClasses, 7) * 0.2f;
  b1.value.setZero();
  b2.value.setZero();
  const RowMajor features = random_matrix<RowMajor>(kBatch, kFeatures, 8);
  std::vector<std::int32_t> labels;
  for (Index i = 0; i < kBatch; ++i) labels.push_back(static_cast<std::int32_t>((i * 7) % 10));

  auto logits = hf::matmul(hf::relu(hf::matmul(x, w1) + b1), w2) + b2;
  auto g = hf::bind(kBatch, hf::named<"loss">(hf::sparse_softmax_cross_entropy(y, logits)));
  for (int s = 0; s < steps; ++s) {
    g.template feed<"x">(features.data(), kBatch, kFeatures);
    g.template feed<"y">(labels.data(), kBatch);
    g.forward();
    g.backward();
    g.for_each_variable([](auto& v) { v.value.noalias() -= 0.1f * v.grad; });
  }
  std::vector<float> out(w1.value.data(), w1.value.data() + w1.value.size());
  out.insert(out.end(), w2.value.data(), w2.value.data() + w2.value.size());
  return out;
}

}  // namespace

TEST_CASE("threads: training on 2 threads agrees with training on one", "[threads]") {
  // Each split product may differ from the one-thread product in its last bits (see the file's
  // header), and 30 steps carry such differences on: the weights must agree to 1e-5 relative
  // (1e-5 absolute for weights below 1), far above float's 6e-8 and far below what training
  // changes (checked: some weight moves by more than 1e-2).
  const std::vector<float> start = train(1, 0);
  const std::vector<float> one = train(1, 30);
  const std::vector<float> two = train(2, 30);
  REQUIRE(one.size() == two.size());
  double moved = 0, worst = 0;
  for (std::size_t i = 0; i < one.size(); ++i) {
    moved = std::max(moved, static_cast<double>(std::abs(one[i] - start[i])));
    worst = std::max(worst, std::abs(static_cast<double>(two[i]) - one[i]) /
                                std::max(1.0, std::abs(static_cast<double>(one[i]))));
  }
  CHECK(moved > 1e-2);
  CHECK(worst <= 1e-5);
}

namespace {

/// The 784 -> 256 relu -> 10 classifier of the allocation tests in a MonitoredTrainingSession
/// with `optimizer`, `steps` steps of batch 32 on `threads` intra-op threads: the hidden kernel
/// after.
template <class Opt>
std::vector<float> train_session(const Opt& optimizer, int threads, int steps = 20) {
  constexpr int kIn = 784, kOut = 256, kLabels = 10;
  constexpr Index kSessionBatch = 32, kExamples = 4 * kSessionBatch;
  const ThreadsScope scope(threads);
  const hookfuse_test::RandomExamples data(11, kExamples, kIn, kLabels);
  hf::Placeholder<"x", float, kIn> x;
  hf::Placeholder<"labels", std::int32_t, 1> y;
  hf::nn::Dense<"dense", float> hidden(kIn, kOut, hf::nn::glorot_uniform{1});
  hf::nn::Dense<"logits", float> out(kOut, kLabels, hf::nn::glorot_uniform{2});
  auto loss =
      hf::named<"loss">(hf::sparse_softmax_cross_entropy(y, out(hf::relu(hidden(x)))));
  hf::GlobalStep gs;
  hf::MonitoredTrainingSession session(
      optimizer.minimize(loss, gs),
      hookfuse_test::PreallocatedInput<kSessionBatch, kExamples, kIn>{&data.features,
                                                                      &data.labels},
      hf::hooks());
  for (int i = 0; i < steps; ++i) session.run();
  const auto& k = hidden.kernel.value;
  return std::vector<float>(k.data(), k.data() + k.size());
}

/// The largest difference between `a` and `b`, relative to max(1, |a|), element by element.
double worst_relative(const std::vector<float>& a, const std::vector<float>& b) {
  double worst = 0;
  for (std::size_t i = 0; i < a.size(); ++i)
    worst = std::max(worst, std::abs(static_cast<double>(b[i]) - a[i]) /
                                std::max(1.0, std::abs(static_cast<double>(a[i]))));
  return worst;
}

}  // namespace

TEST_CASE("threads: optimizers with slots train on 2 threads as on one", "[threads]") {
  // The 784 x 256 kernel's elementwise update runs as row blocks on both threads (each block
  // computed as on one thread); the products may differ in their last bits (see the file's
  // header): the kernels after 20 steps agree to 1e-5 relative, and training moved them.
  const std::vector<float> start = train_session(hf::AdamOptimizer(0.001), 1, 0);
  const auto check = [&](const auto& optimizer) {
    const std::vector<float> one = train_session(optimizer, 1);
    const std::vector<float> two = train_session(optimizer, 2);
    REQUIRE(one.size() == two.size());
    CHECK(worst_relative(start, one) > 1e-3);
    CHECK(worst_relative(one, two) <= 1e-5);
  };
  check(hf::AdamOptimizer(0.001));
  check(hf::RMSPropOptimizer(0.001, 0.9, 0.5));
  check(hf::AdagradOptimizer(0.01));
  check(hf::MomentumOptimizer(0.01, 0.9, true));  // Nesterov: the unfused update
}
