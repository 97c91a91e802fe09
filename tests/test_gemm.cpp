// tests/test_gemm.cpp: detail::gemm_add, the product behind matmul's forward and backward
// passes, on dynamic-size operands: every path it dispatches to (the tiny products' loop, the
// matrix-vector products, the blocked GEMM with its preallocated workspace), with either
// operand transposed and either storage order, on contiguous operands and on views into larger
// buffers, against a triple loop written here.
//
// The entries are small integers and alpha a power of two, so every product and sum is exact in
// float and double and the results must match bit for bit, whatever the summation order.
#include <Eigen/Core>
#include <catch2/catch.hpp>

#include "hookfuse/autodiff/gemm.hpp"

namespace {

using Eigen::Index;

template <class Scalar, int Order>
using Dyn = Eigen::Matrix<Scalar, Eigen::Dynamic, Eigen::Dynamic, Order>;

/// Entry (i, j) of a test matrix: small integers of both signs, different for each `seed`.
double entry(Index i, Index j, int seed) {
  return static_cast<double>((i * 7 + j * 3 + seed * 5) % 11 - 5);
}

template <class M>
M filled(Index rows, Index cols, int seed) {
  M m(rows, cols);
  for (Index i = 0; i < rows; ++i)
    for (Index j = 0; j < cols; ++j) m(i, j) = static_cast<typename M::Scalar>(entry(i, j, seed));
  return m;
}

/// dst + alpha * a * b, by the definition of the product.
template <class D, class A, class B>
D expected(const D& dst, const A& a, const B& b, double alpha) {
  D out = dst;
  for (Index i = 0; i < out.rows(); ++i)
    for (Index j = 0; j < out.cols(); ++j) {
      double sum = 0;
      for (Index k = 0; k < a.cols(); ++k)
        sum += static_cast<double>(a(i, k)) * static_cast<double>(b(k, j));
      out(i, j) = static_cast<typename D::Scalar>(static_cast<double>(out(i, j)) + alpha * sum);
    }
  return out;
}

/// A [rows, cols] matrix stored as the top-left block of a larger one, `pad` more rows and
/// columns, whose padding holds 1000 (as a view of part of a buffer): the store.
template <class M>
M padded(Index rows, Index cols, Index pad, int seed) {
  M store = M::Constant(rows + pad, cols + pad, typename M::Scalar(1000));
  store.topLeftCorner(rows, cols) = filled<M>(rows, cols, seed);
  return store;
}

/// gemm_add on Maps of run-time size over the matrices (as the graph's buffers are), for
/// [rows, depth] x [depth, cols]; `transpose_lhs` / `transpose_rhs` store that operand
/// transposed and pass its .transpose(), as matmul's backward pass does. With `pad` > 0 every
/// operand and the destination are views into larger buffers (an outer stride larger than the
/// rows or columns, so a row or column of a matrix is not contiguous); the destination's
/// padding must be left as it was.
template <class Scalar, int DstOrder, int LhsOrder, int RhsOrder>
void check_product(Index rows, Index cols, Index depth, bool transpose_lhs, bool transpose_rhs,
                   Index pad = 0) {
  using D = Dyn<Scalar, DstOrder>;
  using L = Dyn<Scalar, LhsOrder>;
  using R = Dyn<Scalar, RhsOrder>;
  const L lhs_store =
      transpose_lhs ? padded<L>(depth, rows, pad, 1) : padded<L>(rows, depth, pad, 1);
  const R rhs_store =
      transpose_rhs ? padded<R>(cols, depth, pad, 2) : padded<R>(depth, cols, pad, 2);
  const D start = padded<D>(rows, cols, pad, 3);
  D dst = start;
  const Scalar alpha = Scalar(0.5);

  using Stride = Eigen::OuterStride<>;
  Eigen::Map<D, Eigen::Unaligned, Stride> dst_map(dst.data(), rows, cols,
                                                  Stride(dst.outerStride()));
  Eigen::Map<const L, Eigen::Unaligned, Stride> lhs_map(lhs_store.data(), lhs_store.rows() - pad,
                                                        lhs_store.cols() - pad,
                                                        Stride(lhs_store.outerStride()));
  Eigen::Map<const R, Eigen::Unaligned, Stride> rhs_map(rhs_store.data(), rhs_store.rows() - pad,
                                                        rhs_store.cols() - pad,
                                                        Stride(rhs_store.outerStride()));
  hookfuse::detail::GemmWorkspace<Scalar, DstOrder> ws;
  const L lhs = transpose_lhs ? L(lhs_map.transpose()) : L(lhs_map);
  const R rhs = transpose_rhs ? R(rhs_map.transpose()) : R(rhs_map);
  if (transpose_lhs && transpose_rhs)
    hookfuse::detail::gemm_add(dst_map, lhs_map.transpose(), rhs_map.transpose(), alpha, ws);
  else if (transpose_lhs)
    hookfuse::detail::gemm_add(dst_map, lhs_map.transpose(), rhs_map, alpha, ws);
  else if (transpose_rhs)
    hookfuse::detail::gemm_add(dst_map, lhs_map, rhs_map.transpose(), alpha, ws);
  else
    hookfuse::detail::gemm_add(dst_map, lhs_map, rhs_map, alpha, ws);

  const D want = expected(D(start.topLeftCorner(rows, cols)), lhs, rhs, 0.5);
  INFO("[" << rows << ", " << depth << "] x [" << depth << ", " << cols << "], lhs "
           << (transpose_lhs ? "transposed" : "plain") << ", rhs "
           << (transpose_rhs ? "transposed" : "plain") << ", padding " << pad);
  for (Index i = 0; i < rows + pad; ++i)
    for (Index j = 0; j < cols + pad; ++j) {
      INFO("element (" << i << ", " << j << ")");
      if (i < rows && j < cols)
        CHECK(dst(i, j) == want(i, j));
      else
        CHECK(dst(i, j) == Scalar(1000));
    }
}

template <class Scalar, int DstOrder, int LhsOrder, int RhsOrder>
void check_all_paths() {
  for (bool tl : {false, true})
    for (bool tr : {false, true}) {
      // rows + cols + depth < 20: the tiny products' loop (Eigen would go coefficient-based).
      check_product<Scalar, DstOrder, LhsOrder, RhsOrder>(2, 3, 4, tl, tr);
      check_product<Scalar, DstOrder, LhsOrder, RhsOrder>(1, 1, 1, tl, tr);
      check_product<Scalar, DstOrder, LhsOrder, RhsOrder>(6, 5, 8, tl, tr);  // sum 19
      // One column, one row: the matrix-vector products.
      check_product<Scalar, DstOrder, LhsOrder, RhsOrder>(23, 1, 17, tl, tr);
      check_product<Scalar, DstOrder, LhsOrder, RhsOrder>(1, 29, 13, tl, tr);
      // The same on views into larger buffers: the matrix-vector kernels with an outer stride,
      // and the plain loop where a kernel would need a contiguous vector and has none.
      check_product<Scalar, DstOrder, LhsOrder, RhsOrder>(23, 1, 17, tl, tr, 3);
      check_product<Scalar, DstOrder, LhsOrder, RhsOrder>(1, 29, 13, tl, tr, 3);
      check_product<Scalar, DstOrder, LhsOrder, RhsOrder>(37, 21, 45, tl, tr, 3);
      // The blocked GEMM with the workspace.
      check_product<Scalar, DstOrder, LhsOrder, RhsOrder>(9, 7, 4, tl, tr);  // sum 20
      check_product<Scalar, DstOrder, LhsOrder, RhsOrder>(37, 21, 45, tl, tr);
    }
}

}  // namespace

TEST_CASE("gemm_add: every path, both operands transposed or not, against a triple loop",
          "[autodiff][gemm]") {
  SECTION("float, row-major everywhere (the graph's buffers)") {
    check_all_paths<float, Eigen::RowMajor, Eigen::RowMajor, Eigen::RowMajor>();
  }
  SECTION("double, row-major everywhere") {
    check_all_paths<double, Eigen::RowMajor, Eigen::RowMajor, Eigen::RowMajor>();
  }
  SECTION("float, column-major destination, mixed operands") {
    check_all_paths<float, Eigen::ColMajor, Eigen::RowMajor, Eigen::ColMajor>();
  }
}

TEST_CASE(
    "gemm_add: a tiny product on strided views accumulates into dst and leaves the rest "
    "of each buffer alone",
    "[autodiff][gemm]") {
  // Each matrix is the top-left block of a larger row-major buffer, as a view of part of a
  // buffer: dst [2, 3] in [4, 5] (outer stride 5), lhs [2, 2] in [2, 3] (outer stride 3), rhs
  // [2, 3] in [2, 4] (outer stride 4). Sizes sum to 7: the tiny products' loop.
  float buffer[4 * 5];
  for (int k = 0; k < 20; ++k) buffer[k] = static_cast<float>(100 + k);
  const float lhs[2 * 3] = {1, 2, 99, 3, 4, 99};         // [[1, 2], [3, 4]], padding 99
  const float rhs[2 * 4] = {1, 0, -1, 99, 2, 1, 0, 99};  // [[1, 0, -1], [2, 1, 0]]
  using RM = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  using View = Eigen::Map<RM, Eigen::Unaligned, Eigen::OuterStride<>>;
  using ConstView = Eigen::Map<const RM, Eigen::Unaligned, Eigen::OuterStride<>>;
  View dst(buffer, 2, 3, Eigen::OuterStride<>(5));
  ConstView a(lhs, 2, 2, Eigen::OuterStride<>(3)), b(rhs, 2, 3, Eigen::OuterStride<>(4));
  hookfuse::detail::GemmWorkspace<float, Eigen::RowMajor> ws;
  hookfuse::detail::gemm_add(dst, a, b, 2.0f, ws);
  // lhs * rhs = [[5, 2, -1], [11, 4, -3]], times 2, added to 100..102 and 105..107.
  const float want[2][3] = {{110, 105, 100}, {127, 114, 101}};
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j) CHECK(buffer[i * 5 + j] == want[i][j]);
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 5; ++j)
      if (i >= 2 || j >= 3) CHECK(buffer[i * 5 + j] == static_cast<float>(100 + i * 5 + j));

  // The same product with lhs given as the transpose of a strided view: lhs_t stores
  // [[1, 3], [2, 4]] (outer stride 3), whose transpose is lhs.
  for (int k = 0; k < 20; ++k) buffer[k] = static_cast<float>(100 + k);
  const float lhs_t[2 * 3] = {1, 3, 99, 2, 4, 99};
  ConstView at(lhs_t, 2, 2, Eigen::OuterStride<>(3));
  hookfuse::detail::gemm_add(dst, at.transpose(), b, 2.0f, ws);
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j) CHECK(buffer[i * 5 + j] == want[i][j]);
}
