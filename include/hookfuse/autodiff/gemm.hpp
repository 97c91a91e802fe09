// hookfuse/autodiff/gemm.hpp: matrix products that never touch the heap after binding.
//
// Eigen's `dst.noalias() += a * b` builds a fresh blocking workspace for every product and takes
// it from the heap once it exceeds EIGEN_STACK_ALLOCATION_LIMIT (128 KiB), which happens for the
// 784x256 layer at batch 128. A `GemmWorkspace` owns that workspace: it is sized once, when the
// graph is bound, for the largest product it will serve, and reused by every step. The kernels are
// Eigen's own (general_matrix_matrix_product, general_matrix_vector_product), so the speed is
// Eigen's. With more than one intra-op thread (autodiff/threads.hpp), a large product is cut
// into one part per thread, each computed by Eigen's sequential kernel into packing buffers of
// its own, which the workspace also reserves on first use.
#pragma once

#include "hookfuse/detail/eigen.hpp"

#include "hookfuse/config.hpp"

#include <type_traits>

#ifndef HOOKFUSE_EMBEDDED
#include <algorithm>
#include <memory>

#include "hookfuse/autodiff/thread_pool.hpp"
#else
#include <stdexcept>
#endif

namespace hookfuse::detail {

/// The packing buffers of one product shape, allocated once by `reserve(rows, cols, depth)`.
/// `DestOrder` is the storage order of the destination (Eigen::RowMajor or Eigen::ColMajor).
template <class Scalar, int DestOrder>
class GemmWorkspace {
 public:
  using Blocking = Eigen::internal::gemm_blocking_space<DestOrder, Scalar, Scalar, Eigen::Dynamic,
                                                        Eigen::Dynamic, Eigen::Dynamic, 1, false>;

#ifdef HOOKFUSE_EMBEDDED
  // No heap in an embedded build: fixed-size products never reach a workspace (gemm_add takes
  // the lazy path), and a dynamic-size model does not link (its buffers need malloc). Holding
  // no std::unique_ptr here keeps operator delete out of fixed-size kernels' destructors.
  void reserve(Eigen::Index, Eigen::Index, Eigen::Index) {
    fail<std::logic_error>("hookfuse: a dynamic-size matrix product in an embedded build");
  }
  bool fits(Eigen::Index, Eigen::Index, Eigen::Index) const { return false; }
  Blocking& blocking() {
    fail<std::logic_error>("hookfuse: a dynamic-size matrix product in an embedded build");
  }
#else
  /// Sizes the workspace for a [rows, depth] x [depth, cols] product (the largest to be served).
  /// An empty product (a graph bound for 0 rows) needs none: gemm_add returns before using it,
  /// and Eigen's blocking heuristic would divide by the zero size.
  void reserve(Eigen::Index rows, Eigen::Index cols, Eigen::Index depth) {
    if (rows <= 0 || cols <= 0 || depth <= 0) return;
    blocking_ = std::make_unique<Blocking>(rows, cols, depth, 1, true);
    blocking_->allocateAll();
    parts_.reset();
    part_count_ = 1;
    rows_ = rows;
    cols_ = cols;
    depth_ = depth;
  }
  /// Sizes the blockings of a product split into `parts` parts (one per thread; the first is
  /// blocking()), each with the block sizes of blocking(): reserve() first. Keeps those already
  /// made, so a step at a thread count seen before allocates nothing.
  void reserve_parts(int parts) {
    if (parts <= part_count_) return;
    auto grown = std::make_unique<std::unique_ptr<Blocking>[]>(static_cast<std::size_t>(parts - 1));
    for (int i = 1; i < part_count_; ++i) grown[i - 1] = std::move(parts_[i - 1]);
    for (int i = part_count_; i < parts; ++i) {
      grown[i - 1] = std::make_unique<Blocking>(rows_, cols_, depth_, 1, true);
      grown[i - 1]->allocateAll();
    }
    parts_ = std::move(grown);
    part_count_ = parts;
  }
  /// The blocking of part `i` of a split product (0: blocking()); i < the parts reserved.
  Blocking& part_blocking(int i) { return i == 0 ? *blocking_ : *parts_[i - 1]; }
  /// Blocks sized for a larger product serve a smaller one: Eigen's GEMM clamps its block sizes
  /// to the actual rows, cols and depth (a shorter batch makes the weight gradient's depth
  /// smaller).
  bool fits(Eigen::Index rows, Eigen::Index cols, Eigen::Index depth) const {
    return blocking_ && rows <= rows_ && cols <= cols_ && depth <= depth_;
  }
  Blocking& blocking() { return *blocking_; }

 private:
  std::unique_ptr<Blocking> blocking_;
  std::unique_ptr<std::unique_ptr<Blocking>[]> parts_;  // parts 1, 2, ... of a split product
  int part_count_ = 1;
  Eigen::Index rows_ = 0, cols_ = 0, depth_ = 0;
#endif
};

template <class X>
struct is_transpose : std::false_type {};
template <class X>
struct is_transpose<Eigen::Transpose<X>> : std::true_type {};

/// A dense operand with direct access (a Map or Matrix, or the transpose of one) as a Map of
/// run-time size: its data, shape and outer stride, its storage order and scalar kept (a
/// read-only Map when `x` is const). So the product paths below are instantiated once per
/// scalar and storage orders, not once per compile-time shape of the model's layers.
template <class XRef>
auto dynamic_view(XRef&& x) {
  using X = std::remove_cvref_t<XRef>;
  if constexpr (is_transpose<X>::value) {
    return dynamic_view(x.nestedExpression()).transpose();
  } else {
    using S = typename X::Scalar;
    constexpr int order = (X::Flags & Eigen::RowMajorBit) ? Eigen::RowMajor : Eigen::ColMajor;
    using M = Eigen::Matrix<S, Eigen::Dynamic, Eigen::Dynamic, order>;
    using Target =
        std::conditional_t<std::is_const_v<std::remove_pointer_t<decltype(x.data())>>, const M, M>;
    return Eigen::Map<Target, Eigen::Unaligned, Eigen::OuterStride<>>(
        x.data(), x.rows(), x.cols(), Eigen::OuterStride<>(x.outerStride()));
  }
}

/// dst += alpha * lhs * rhs for the tiny products (rows + cols + depth below Eigen's
/// EIGEN_GEMM_TO_COEFFBASED_THRESHOLD, 20) that Eigen's own dispatch hands to its lazy,
/// coefficient-based product: each coefficient is the dot product over the depth, summed in
/// order, then scaled by alpha. A loop over the operands' data and strides (a Map or the
/// transpose of one). It computes the same product as the lazy product, which vectorises and may
/// use FMA, so a coefficient's last bits can differ from it; the loop compiles to a small fraction
/// of the lazy product's expression templates (which cost 0.2 s at -O0 and 0.3 s at -O3 of the
/// Fashion-MNIST session). No product in bench/ is this small.
template <class Dst, class Lhs, class Rhs>
void small_gemm_add(Dst& dst, const Lhs& lhs, const Rhs& rhs, typename Dst::Scalar alpha) {
  using Scalar = typename Dst::Scalar;
  const Eigen::Index rows = dst.rows(), cols = dst.cols(), depth = lhs.cols();
  const Scalar* a = lhs.data();
  const Scalar* b = rhs.data();
  Scalar* d = dst.data();
  const Eigen::Index a_row = lhs.rowStride(), a_col = lhs.colStride();
  const Eigen::Index b_row = rhs.rowStride(), b_col = rhs.colStride();
  const Eigen::Index d_row = dst.rowStride(), d_col = dst.colStride();
  for (Eigen::Index i = 0; i < rows; ++i)
    for (Eigen::Index j = 0; j < cols; ++j) {
      Scalar sum(0);
      for (Eigen::Index k = 0; k < depth; ++k)
        sum += a[i * a_row + k * a_col] * b[k * b_row + j * b_col];
      d[i * d_row + j * d_col] += alpha * sum;
    }
}

/// y += alpha * m * x through Eigen's matrix-vector kernel (general_matrix_vector_product, what
/// `y.noalias() += alpha * m * x` runs), called directly: m is [rows, depth] with storage order
/// `Order` and outer stride `m_outer`, x a vector of `depth` with stride `x_stride`, y a vector of
/// `rows` with stride `y_stride` (strides in elements). Eigen's own product reaches the same
/// kernel through its expression templates (the product's evaluators, the GEMV selector, a
/// temporary for a strided operand), which cost more to compile than the kernel itself: about
/// 0.4 s at -O0 and 0.5 s at -O3 for each operand combination.
/// The column-major kernel needs y contiguous, the row-major one x; returns false, touching
/// nothing, when that stride is not 1 (a view into a larger buffer), and the caller takes the
/// plain loop instead (the graph's own buffers are contiguous).
template <int Order, class Scalar>
bool gemv_add(Eigen::Index rows, Eigen::Index depth, const Scalar* m, Eigen::Index m_outer,
              const Scalar* x, Eigen::Index x_stride, Scalar* y, Eigen::Index y_stride,
              Scalar alpha) {
  using Eigen::Index;
  using Eigen::internal::const_blas_data_mapper;
  if constexpr (Order == Eigen::ColMajor) {
    if (y_stride != 1) return false;
    using MMapper = const_blas_data_mapper<Scalar, Index, Eigen::ColMajor>;
    using XMapper = const_blas_data_mapper<Scalar, Index, Eigen::RowMajor>;
    using Kernel = Eigen::internal::general_matrix_vector_product<
        Index, Scalar, MMapper, Eigen::ColMajor, false, Scalar, XMapper, false>;
    Kernel::run(rows, depth, MMapper(m, m_outer), XMapper(x, x_stride), y, 1, alpha);
  } else {
    if (x_stride != 1) return false;
    using MMapper = const_blas_data_mapper<Scalar, Index, Eigen::RowMajor>;
    using XMapper = const_blas_data_mapper<Scalar, Index, Eigen::ColMajor>;
    using Kernel = Eigen::internal::general_matrix_vector_product<
        Index, Scalar, MMapper, Eigen::RowMajor, false, Scalar, XMapper, false>;
    Kernel::run(rows, depth, MMapper(m, m_outer), XMapper(x, 1), y, y_stride, alpha);
  }
  return true;
}

#ifndef HOOKFUSE_EMBEDDED
/// Products of at least this many multiply-adds (rows x cols x depth) are split across the
/// intra-op threads. Measured on 2 threads of an AMD EPYC (AVX-512), products back to back: a
/// 32 x 10 x 256 product (81,920) gains nothing beyond noise (0.97x to 1.17x), 48 x 48 x 48
/// (110,592) and larger gain 1.3x to 1.7x.
inline constexpr Eigen::Index kParallelGemmMinMacs = Eigen::Index(1) << 17;

/// A product split into parts along one dimension of the destination, for IntraOpPool: part p
/// is the rows (or columns) [p * chunk, min((p + 1) * chunk, total)), computed by Eigen's
/// sequential GEMM (`Functor`) into the workspace's blocking of part p.
template <class Functor, class Lhs, class Rhs, class Dst, class Workspace, class Scalar>
struct GemmParts {
  const Lhs& lhs;
  const Rhs& rhs;
  Dst& dst;
  Scalar alpha;
  Workspace& ws;
  bool split_rows;
  Eigen::Index chunk, total;

  static void run(void* self, int part) noexcept {
    auto& p = *static_cast<GemmParts*>(self);
    const Eigen::Index begin = part * p.chunk;
    const Eigen::Index size = std::min(p.chunk, p.total - begin);
    const Functor gemm(p.lhs, p.rhs, p.dst, p.alpha, p.ws.part_blocking(part));
    if (p.split_rows)
      gemm(begin, size, 0, p.dst.cols());
    else
      gemm(0, p.dst.rows(), begin, size);
  }
};

/// dst += alpha * lhs * rhs on the intra-op pool: the destination cut along its larger dimension
/// (the other operand is then packed once per part, the smaller duplication) into one part per
/// thread, part boundaries multiples of the kernel's register block in that dimension. Returns
/// false, computing nothing, when the pool is busy or the product too narrow to split.
template <class Functor, class Lhs, class Rhs, class Dst, class Workspace, class Scalar>
bool parallel_gemm(const Lhs& lhs, const Rhs& rhs, Dst& dst, Scalar alpha, Workspace& ws,
                   int threads) {
  using Eigen::Index;
  using Traits = typename Functor::Traits;  // of the column-major problem Eigen solves
  constexpr bool dst_row_major = (Dst::Flags & Eigen::RowMajorBit) != 0;
  const bool split_rows = dst.rows() >= dst.cols();
  // Eigen computes a row-major destination as its transpose: its rows are then the kernel's
  // columns (blocks of nr), its columns the kernel's rows (blocks of one packet).
  const Index align =
      (split_rows != dst_row_major) ? Index(Traits::LhsProgress) : Index(Traits::nr);
  const Index total = split_rows ? dst.rows() : dst.cols();
  const Index chunk = aligned_chunk(total, threads, align);
  const int parts = static_cast<int>((total + chunk - 1) / chunk);
  if (parts < 2) return false;
  ws.reserve_parts(parts);  // first use at this thread count only
  GemmParts<Functor, Lhs, Rhs, Dst, Workspace, Scalar> job{lhs, rhs, dst, alpha, ws,
                                                           split_rows, chunk, total};
  return IntraOpPool::instance().try_run(parts, &decltype(job)::run, &job);
}
#endif

/// gemm_add for operands of which at least one has a run-time size, on their dynamic_views.
template <class Dst, class Lhs, class Rhs, class Workspace>
void gemm_add_dynamic(Dst& dst, const Lhs& a_lhs, const Rhs& a_rhs, typename Dst::Scalar alpha,
                      Workspace& ws) {
  using namespace Eigen;
  using namespace Eigen::internal;
  using Scalar = typename Dst::Scalar;
  const Index rows = dst.rows(), cols = dst.cols(), depth = a_lhs.cols();
  if (rows + cols + depth < EIGEN_GEMM_TO_COEFFBASED_THRESHOLD) {
    small_gemm_add(dst, a_lhs, a_rhs, alpha);
    return;
  }
  if (cols == 1) {
    // dst[:, 0] += alpha * lhs * rhs[:, 0]: the matrix is lhs.
    constexpr int order = (Lhs::Flags & RowMajorBit) ? RowMajor : ColMajor;
    if (!gemv_add<order>(rows, depth, a_lhs.data(), a_lhs.outerStride(), a_rhs.data(),
                         a_rhs.rowStride(), dst.data(), dst.rowStride(), alpha))
      small_gemm_add(dst, a_lhs, a_rhs, alpha);
    return;
  }
  if (rows == 1) {
    // dst[0, :] += alpha * lhs[0, :] * rhs, computed as its transpose: dst[0, :]^T += alpha *
    // rhs^T * lhs[0, :]^T. The matrix is rhs^T: the same data, the other storage order.
    constexpr int order = (Rhs::Flags & RowMajorBit) ? ColMajor : RowMajor;
    if (!gemv_add<order>(cols, depth, a_rhs.data(), a_rhs.outerStride(), a_lhs.data(),
                         a_lhs.colStride(), dst.data(), dst.colStride(), alpha))
      small_gemm_add(dst, a_lhs, a_rhs, alpha);
    return;
  }
  if (!ws.fits(rows, cols, depth)) ws.reserve(rows, cols, depth);  // first use only

  using LhsBlasTraits = blas_traits<Lhs>;
  using ActualLhsType = typename LhsBlasTraits::DirectLinearAccessType;
  using ActualLhsTypeCleaned = typename remove_all<ActualLhsType>::type;
  using RhsBlasTraits = blas_traits<Rhs>;
  using ActualRhsType = typename RhsBlasTraits::DirectLinearAccessType;
  using ActualRhsTypeCleaned = typename remove_all<ActualRhsType>::type;
  typename add_const_on_value_type<ActualLhsType>::type lhs = LhsBlasTraits::extract(a_lhs);
  typename add_const_on_value_type<ActualRhsType>::type rhs = RhsBlasTraits::extract(a_rhs);
  const Scalar actual_alpha =
      alpha * LhsBlasTraits::extractScalarFactor(a_lhs) * RhsBlasTraits::extractScalarFactor(a_rhs);
  constexpr int dst_order = (Dst::Flags & RowMajorBit) ? RowMajor : ColMajor;
  using Blocking = typename Workspace::Blocking;
  static_assert(std::is_same_v<Blocking, gemm_blocking_space<dst_order, Scalar, Scalar, Dynamic,
                                                             Dynamic, Dynamic, 1, false>>,
                "hookfuse: GemmWorkspace storage order does not match the destination");
  using Functor = gemm_functor<
      Scalar, Index,
      general_matrix_matrix_product<
          Index, Scalar, (ActualLhsTypeCleaned::Flags & RowMajorBit) ? RowMajor : ColMajor,
          bool(LhsBlasTraits::NeedToConjugate), Scalar,
          (ActualRhsTypeCleaned::Flags & RowMajorBit) ? RowMajor : ColMajor,
          bool(RhsBlasTraits::NeedToConjugate), dst_order, Dst::InnerStrideAtCompileTime>,
      ActualLhsTypeCleaned, ActualRhsTypeCleaned, Dst, Blocking>;
#ifndef HOOKFUSE_EMBEDDED
  if (const int threads = intra_op_threads.load(std::memory_order_relaxed);
      threads > 1 && rows * cols * depth >= kParallelGemmMinMacs &&
      parallel_gemm<Functor, ActualLhsTypeCleaned, ActualRhsTypeCleaned>(
          lhs, rhs, dst, actual_alpha, ws, threads))
    return;
#endif
  Functor(lhs, rhs, dst, actual_alpha, ws.blocking())(0, rows, 0, cols);
}

/// dst += alpha * lhs * rhs, for dense Eigen operands with direct access (Map, Matrix, their
/// transposes). Tiny products take a plain loop (small_gemm_add; Eigen's lazy product when every
/// size is fixed at compile time), vector-shaped ones (one row or one column) Eigen's GEMV kernel
/// (gemv_add; no workspace, no temporary), the rest Eigen's blocked GEMM with the preallocated
/// workspace.
template <class Dst, class Lhs, class Rhs, class Workspace>
void gemm_add(Dst& dst, const Lhs& a_lhs, const Rhs& a_rhs, typename Dst::Scalar alpha,
              Workspace& ws) {
  using Eigen::Dynamic;
  if (dst.rows() == 0 || dst.cols() == 0 || a_lhs.cols() == 0) return;
  constexpr bool fixed = Dst::SizeAtCompileTime != Dynamic && Lhs::SizeAtCompileTime != Dynamic &&
                         Rhs::SizeAtCompileTime != Dynamic;
  if constexpr (fixed) {
    // Fixed sizes: Eigen keeps any blocking space inside a stack object; small ones go lazy.
    dst.noalias() += alpha * a_lhs.lazyProduct(a_rhs);
  } else {
    auto d = dynamic_view(dst);
    gemm_add_dynamic(d, dynamic_view(a_lhs), dynamic_view(a_rhs), alpha, ws);
  }
}

}  // namespace hookfuse::detail
