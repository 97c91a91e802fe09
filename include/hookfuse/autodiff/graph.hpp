// hookfuse/autodiff/graph.hpp: a model bound to memory: forward, backward, fetch by name.
//
// `bind(capacity, loss, fetches...)` lays out a value buffer for every tensor of the tape and an
// adjoint buffer for every tensor the loss's gradient reaches, all sized for `capacity` rows.
// After that, forward() and backward() allocate nothing.
//
// The fused update (backward<Pin>, apply_unfused<Pin>) is described in fusion_policy.hpp.
#pragma once

#include <array>
#include <cstddef>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>

#include "hookfuse/autodiff/errors.hpp"
#include "hookfuse/autodiff/feed_check.hpp"
#include "hookfuse/autodiff/fusion_policy.hpp"
#include "hookfuse/autodiff/graph_slots.hpp"
#include "hookfuse/autodiff/graph_traits.hpp"
#include "hookfuse/autodiff/op_dispatch.hpp"
#include "hookfuse/autodiff/tape.hpp"
#include "hookfuse/autodiff/tape_tables.hpp"
#include "hookfuse/config.hpp"
#include "hookfuse/detail/compile_error.hpp"
#include "hookfuse/detail/format.hpp"
#include "hookfuse/errors.hpp"

namespace hookfuse {

/// A model bound to buffers. `Loss` is the position of the loss on the tape; every tensor at or
/// below it is computed by forward(), the rest only when fetched.
template <class TapeT, std::size_t Loss>
class Graph : public GraphTraits<TapeT, Loss> {
  // The compile-time queries (graph_traits.hpp): a dependent base, so its member templates are
  // spelled Traits::template name<...> here.
  using Traits = GraphTraits<TapeT, Loss>;
  using typename Traits::placeholders;
  using typename Traits::variables;
  using Traits::names_;
  using Traits::operands_;

 public:
  using typename Traits::entries_type;
  using typename Traits::names_type;
  using typename Traits::read_set;
  using typename Traits::scalar;
  using Traits::size;

  /// Lays out every buffer for batches of up to `capacity` rows. Throws ValueError naming the
  /// value when capacity < 0, or when a tensor's [rows, cols] for it holds more values than
  /// memory can be indexed with (rows * cols * sizeof(scalar) past the index type's range).
  /// `adjoints` false lays out values only (bind_forward): backward() then throws RuntimeError.
  Graph(const TapeT& tape, Index capacity, bool adjoints = true)
      : slots_(detail::make_slots(tape.entries, std::make_index_sequence<size>{})),
        kernels_(detail::make_kernels(tape.entries, std::make_index_sequence<size>{})),
        capacity_(capacity),
        adjoints_(adjoints) {
    if (capacity < 0)
      detail::fail<ValueError>((detail::ErrorMessage()
                                << "hookfuse: bind: capacity (the most rows a batch can have) "
                                   "must be >= 0, got "
                                << static_cast<long long>(capacity))
                                   .str());
    // The placeholders, then the ops in tape order (each after its operands).
    [this]<std::size_t... P>(std::index_sequence<P...>) {
      (detail::reserve_placeholder(detail::get<P>(slots_), capacity_, P, names_[P]), ...);
    }(detail::position_sequence<placeholders>{});
    using ops = detail::position_list<entries_type, detail::EntryKind::op, size - 1>;
    [this]<std::size_t... P>(std::index_sequence<P...>) {
      (detail::reserve_op<typename Traits::template op_t<P>,
                          Traits::template op_arity<P>::value>(
           detail::get<P>(kernels_), detail::get<P>(slots_), capacity_, adjoints_, P, names_[P],
           detail::get<operands_[P][0]>(slots_), detail::get<operands_[P][1]>(slots_),
           detail::get<operands_[P][2]>(slots_)),
       ...);
    }(detail::position_sequence<ops>{});
  }
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;
  Graph(Graph&&) = default;

  /// Points the placeholder `Name` at `rows` x `cols` values of its scalar type, row-major (one
  /// example per row; a [rows] vector for a one-column placeholder), like one entry of
  /// TensorFlow's feed_dict. The data is not copied: it must stay valid and unchanged until the
  /// step's fetches are read. Marks the placeholder fed (see clear_feeds()) and every computed
  /// value stale.
  ///
  /// Checks, before anything is read: `T` is the placeholder's scalar type (a compile error
  /// naming the placeholder and both types otherwise: no conversion, no reinterpretation);
  /// `cols` is the placeholder's column count, `rows` >= 0, at most the bound capacity (and
  /// equal to R for a placeholder with compile-time rows), and `data` non-null when rows * cols
  /// > 0; otherwise throws ShapeError naming the placeholder and both shapes.
  template <fixed_string Name, class T>
  void feed(const T* data, Index rows, Index cols) {
    constexpr std::size_t i = Traits::template index_of<Name>;
    static_assert(i != detail::npos, "hookfuse: the model has no placeholder with this name");
    if constexpr (i != detail::npos) {
      static_assert(Traits::template is_placeholder_at<i>(),
                    "hookfuse: feed: this name is not a placeholder of the model");
      using Sl = std::remove_cvref_t<decltype(detail::get<i>(slots_))>;
      if constexpr (detail::check_feed_scalar<Name, typename Sl::S, std::remove_cv_t<T>>())
        feed_checked<Name>(data, rows, cols);
    }
  }

  /// feed<Name>(data, rows, 1): a [rows] vector, for a placeholder with exactly one column
  /// (labels, targets). A compile error naming the placeholder for a wider one (or one whose
  /// width is set at run time): its width would be trusted, and a shorter buffer read past its
  /// end; give the columns (three arguments) or feed a matrix, whose size is checked.
  template <fixed_string Name, class T>
  void feed(const T* data, Index rows) {
    constexpr std::size_t i = Traits::template index_of<Name>;
    static_assert(i != detail::npos, "hookfuse: the model has no placeholder with this name");
    if constexpr (i != detail::npos) {
      if constexpr (detail::check_rows_only_feed<Name, Traits::template dims_of<Name>.cols>())
        feed<Name>(data, rows, 1);
    }
  }

  /// Feeds an Eigen matrix or vector: its rows and columns are the batch's; a matrix with more
  /// than one column must be row-major and contiguous. A compile-time column count is checked
  /// against the placeholder's at compile time. The matrix must outlive the step's fetches.
  template <fixed_string Name, class Derived>
  void feed(const Eigen::MatrixBase<Derived>& m) {
    constexpr std::size_t i = Traits::template index_of<Name>;
    static_assert(i != detail::npos, "hookfuse: the model has no placeholder with this name");
    if constexpr (i != detail::npos) {
      static_assert(Derived::ColsAtCompileTime == 1 || Derived::IsRowMajor,
                    "hookfuse: feed: a matrix with several columns must be row-major "
                    "(rows are the batch, one example contiguous)");
      using Sl = std::remove_cvref_t<decltype(detail::get<i>(slots_))>;
      if constexpr (detail::check_feed_cols<Name, Sl::D.cols, Derived::ColsAtCompileTime>()) {
        const auto& d = m.derived();
        if (d.innerStride() != 1 || (d.rows() > 1 && d.cols() > 1 && d.outerStride() != d.cols()))
          detail::fail<ShapeError>((detail::ErrorMessage()
                                    << "hookfuse: feed '" << Name.view()
                                    << "': the matrix is not contiguous (strided view)")
                                       .str());
        feed<Name>(d.data(), d.rows(), d.cols());
      }
    }
  }
  /// A temporary matrix (any Eigen type but an Eigen::Map, which only views memory) would be
  /// destroyed while the graph still points into it: feed a named variable.
  template <fixed_string Name, class Derived>
    requires(!std::is_reference_v<Derived> &&
             std::is_base_of_v<Eigen::MatrixBase<std::remove_cv_t<Derived>>, Derived> &&
             !detail::eigen_map_v<std::remove_cv_t<Derived>>)
  void feed(Derived&& temporary) = delete;

  /// Checks, without feeding, that data of scalar `T` with `cols` columns fits the placeholder
  /// `Name`: the type at compile time, the columns at run time (ShapeError naming the
  /// placeholder and both shapes). What an input's feeds check when a session is built.
  template <fixed_string Name, class T>
  void check_feed(Index cols) const {
    constexpr std::size_t i = Traits::template index_of<Name>;
    static_assert(i != detail::npos, "hookfuse: the model has no placeholder with this name");
    if constexpr (i != detail::npos) {
      static_assert(Traits::template is_placeholder_at<i>(),
                    "hookfuse: feed: this name is not a placeholder of the model");
      using Sl = std::remove_cvref_t<decltype(detail::get<i>(slots_))>;
      if constexpr (detail::check_feed_scalar<Name, typename Sl::S, std::remove_cv_t<T>>()) {
        if (cols != placeholder_cols<Name>()) {
          detail::ErrorMessage m;
          m << "hookfuse: feed '" << Name.view() << "': the data has "
            << static_cast<long long>(cols) << " columns, the placeholder is ";
          detail::describe_placeholder(m, detail::get<i>(slots_));
          detail::fail<ShapeError>(m.str());
        }
      }
    }
  }

  /// Marks every placeholder unfed: a forward pass (or a fetch) that reads a placeholder not fed
  /// after this throws ShapeError. A session calls it before each step's feeds, so that every
  /// step feeds every placeholder it reads, as TensorFlow's feed_dict.
  void clear_feeds() {
    detail::flat_apply([](auto&... s) { (detail::clear_fed(s), ...); }, slots_);
    computed_.fill(false);
  }

  /// Marks every placeholder unfed but keeps the values computed so far: a later compute() of a
  /// tensor not computed yet that reads a placeholder throws ShapeError instead of reading the
  /// fed memory, which its owner may have freed. A session calls it when a run or evaluation
  /// fed by the caller returns (TensorFlow's feed_dict lasts one session.run).
  void release_feeds() {
    detail::flat_apply([](auto&... s) { (detail::clear_fed(s), ...); }, slots_);
  }

  /// Whether the placeholder `Name` was fed since the last clear_feeds().
  template <fixed_string Name>
  bool fed() const {
    constexpr std::size_t i = Traits::template index_of<Name>;
    static_assert(Traits::template has<Name> && Traits::template is_placeholder_at<i>(),
                  "hookfuse: the model has no placeholder with this name");
    return detail::get<i>(slots_).fed;
  }

  /// Before a step reads anything: throws ShapeError naming the reader and the placeholders
  /// unless every placeholder the loss (Name empty, the forward pass) or the tensor `Name`
  /// reads was fed, with one row count; marks those placeholders in `reads`.
  template <fixed_string Name = "">
  void check_fed(read_set& reads) const {
    constexpr std::size_t target = Name.view().empty() ? Loss : Traits::template index_of<Name>;
    static_assert(target != detail::npos, "hookfuse: the model has no tensor with this name");
    if constexpr (target != detail::npos) {
      check_feeds<target>(Name.view());
      mark_read(reads, typename Traits::template placeholders_read<target>{});
    }
  }
  /// Throws ShapeError naming the placeholders and their rows unless the batched placeholders
  /// marked in `reads` were all fed the same number of rows (every placeholder of a step gets
  /// the same batch).
  void check_same_rows(const read_set& reads) const {
    detail::check_same_rows_of(slots_, names_, reads, detail::position_sequence<placeholders>{});
  }

  /// The rows (examples) of the batch the loss reads, as last fed: the row count of its batched
  /// placeholders (one count, checked by forward()), or a fixed-rows placeholder's R when none is
  /// batched, or 1 when the loss reads no placeholder. 0 for an empty batch.
  Index batch_rows() const {
    return detail::batch_rows_of(slots_, typename Traits::template placeholders_read<Loss>{});
  }

  /// Computes every tensor up to the loss; returns the loss. Throws ShapeError, before reading
  /// any input, when a placeholder the loss reads was not fed or the batched placeholders were
  /// fed different row counts.
  scalar forward() {
    check_feeds<Loss>({});
    computed_.fill(false);
    using ops = detail::position_list<entries_type, detail::EntryKind::op, Loss>;
    [this]<std::size_t... P>(std::index_sequence<P...>) {
      (detail::forward_op<typename Traits::template op_t<P>,
                          Traits::template op_arity<P>::value>(
           detail::get<P>(kernels_), detail::get<P>(slots_), detail::get<operands_[P][0]>(slots_),
           detail::get<operands_[P][1]>(slots_), detail::get<operands_[P][2]>(slots_)),
       ...);
    }(detail::position_sequence<ops>{});
    [this]<std::size_t... I>(std::index_sequence<I...>) {
      ((computed_[I] = true), ...);
    }(std::make_index_sequence<Loss + 1>{});
    return detail::get<Loss>(slots_).value()(0, 0);
  }

  /// Heap bytes of the graph's value and adjoint buffers (tensors of dynamic size, the batched
  /// ones; fixed sizes live inside the graph): what bind() reserved for `capacity` rows.
  std::size_t buffer_bytes() {
    std::size_t n = 0;
    detail::flat_apply(
        [&n](auto&... s) {
          ((n += [](auto& slot) -> std::size_t {
              if constexpr (requires { slot.heap_bytes(); }) return slot.heap_bytes();
              else return 0;
            }(s)),
           ...);
        },
        slots_);
    return n;
  }

  /// Writes d loss / d x into the adjoint of every tensor the loss reaches, and into `grad` of
  /// every Variable (overwriting the previous step's gradient).
  void backward() { backward<detail::FuseNone>(detail::NoOptimizer{}); }

  /// The backward pass with the optimizer's update folded in for every variable for which
  /// update_fused_at<Pin, I>() holds (their `grad` is not written; their value is updated);
  /// the other variables get their gradient in `grad` as with backward(). Follow it with
  /// apply_unfused<Pin>(optimizer). With an optimizer that is neither LinearUpdate nor
  /// SlotAccumulation, nothing is fused.
  template <class Pin, class Optimizer>
  void backward(const Optimizer& optimizer) {
    using P = std::conditional_t<detail::fusable_update<Optimizer>, Pin, detail::FuseNone>;
    if (!adjoints_) [[unlikely]]
      detail::fail<RuntimeError>(
          "hookfuse: backward() on a graph bound forward only (bind_forward): it has no "
          "adjoint buffers; bind it with bind() to train");
    if constexpr (detail::SlotAccumulation<Optimizer>)
      step_variables<detail::VariableStep::before_backward, P, true>(optimizer);
    detail::get<Loss>(slots_).adjoint().setConstant(scalar(1));
    using ops = detail::position_list<entries_type, detail::EntryKind::op, Loss>;
    [&]<std::size_t... I>(std::index_sequence<I...>) {  // from the loss down
      (detail::backward_op<detail::backward_plans<entries_type, names_type, Loss, P>[I]>(
           optimizer, detail::get<I>(kernels_), detail::get<I>(slots_),
           detail::get<operands_[I][0]>(slots_), detail::get<operands_[I][1]>(slots_),
           detail::get<operands_[I][2]>(slots_)),
       ...);
    }(detail::position_sequence<ops, true>{});
  }

  /// optimizer.apply(variable) for every variable whose update backward<Pin> did not fold in.
  template <class Pin, class Optimizer>
  void apply_unfused(const Optimizer& optimizer) {
    using P = std::conditional_t<detail::fusable_update<Optimizer>, Pin, detail::FuseNone>;
    step_variables<detail::VariableStep::apply, P, false>(optimizer);
  }

  /// For a SlotAccumulation optimizer, right after backward<Pin>: optimizer.apply_fused(variable)
  /// for every variable whose gradient backward<Pin> accumulated into its slot, so the slot and
  /// the value change together, before anything else (a fetch) can throw. No-op otherwise.
  template <class Pin, class Optimizer>
  void apply_fused_slots(const Optimizer& optimizer) {
    if constexpr (detail::SlotAccumulation<Optimizer>)
      step_variables<detail::VariableStep::apply_fused, Pin, true>(optimizer);
  }

  /// Returns the value of the named tensor, computing it (and what it reads) unless forward() or
  /// an earlier compute() did since the last feed: a tensor outside the loss's graph, or any
  /// tensor before the first forward pass. Throws ShapeError naming the tensor and the
  /// placeholder when it reads a placeholder that was not fed (never reads unfed input).
  template <fixed_string Name>
  auto compute() {
    constexpr bool known = Traits::template has<Name>;
    static_assert(
        detail::check_tensor_name<"graph.compute<name>() asks for", Name, known, names_type>());
    constexpr std::size_t i = known ? Traits::template index_of<Name> : 0;  // 0: no second error
    if (!computed_[i]) {
      check_feeds<i>(Name.view());
      using ops = detail::position_list<entries_type, detail::EntryKind::reached_op, i>;
      [this]<std::size_t... P>(std::index_sequence<P...>) {
        ((computed_[P] ||
          (detail::forward_op<typename Traits::template op_t<P>,
                              Traits::template op_arity<P>::value>(
               detail::get<P>(kernels_), detail::get<P>(slots_),
               detail::get<operands_[P][0]>(slots_), detail::get<operands_[P][1]>(slots_),
               detail::get<operands_[P][2]>(slots_)),
           computed_[P] = true)),
         ...);
      }(detail::position_sequence<ops>{});
    }
    return detail::get<i>(slots_).value();
  }

  /// The current value of a named tensor (valid after forward(), or compute() beyond the loss).
  template <fixed_string Name>
  auto value() {
    constexpr bool known = Traits::template has<Name>;
    static_assert(
        detail::check_tensor_name<"graph.value<name>() asks for", Name, known, names_type>());
    return detail::get<known ? Traits::template index_of<Name> : 0>(slots_).value();
  }
  /// The adjoint d loss / d tensor of a named tensor after backward().
  template <fixed_string Name>
  auto adjoint() {
    constexpr bool known = Traits::template has<Name>;
    static_assert(
        detail::check_tensor_name<"graph.adjoint<name>() asks for", Name, known, names_type>());
    return detail::get<known ? Traits::template index_of<Name> : 0>(slots_).adjoint();
  }

  /// Calls f(variable) for every Variable of the model, in tape order.
  template <class F>
  void for_each_variable(F&& f) {
    detail::flat_apply([&](auto&... s) { (detail::visit_variable(s, f), ...); }, slots_);
  }

  /// The column count of placeholder `Name` (its compile-time one, or the one given to the
  /// Placeholder at run time); 0 for a tensor that is not a placeholder.
  template <fixed_string Name>
  Index placeholder_cols() const {
    constexpr std::size_t i = Traits::template index_of<Name>;
    static_assert(i != detail::npos, "hookfuse: the model has no placeholder with this name");
    if constexpr (Traits::template is_placeholder_at<i>())
      return detail::get<i>(slots_).current.cols;
    else
      return 0;
  }

  /// The most rows a batch can have: what the graph was bound for.
  Index capacity() const { return capacity_; }

 private:
  template <fixed_string Name, class T>
  void feed_checked(const T* data, Index rows, Index cols) {
    detail::feed_slot<Name>(detail::get<Traits::template index_of<Name>>(slots_), data, rows, cols,
                            capacity_);
    computed_.fill(false);
  }

  /// Throws ShapeError unless every placeholder entry `Target` reads was fed, and all the
  /// batched ones with the same row count (detail::check_feeds_of). `what` names the tensor
  /// fetched (empty: the forward pass).
  template <std::size_t Target>
  void check_feeds(std::string_view what) const {
    detail::check_feeds_of(slots_, names_, what,
                           typename Traits::template placeholders_read<Target>{});
  }

  template <std::size_t... I>
  static void mark_read(read_set& reads, std::index_sequence<I...>) {
    ((reads[I] = true), ...);
  }

  /// The optimizer's Step for every Variable whose update is fused (Fused) or not (!Fused).
  template <detail::VariableStep Step, class Pin, bool Fused, class Optimizer>
  void step_variables(const Optimizer& optimizer) {
    [&]<std::size_t... P>(std::index_sequence<P...>) {
      (detail::step_variable<
           Step, detail::fused_variables<entries_type, names_type, Loss, Pin>[P] == Fused>(
           optimizer, *detail::get<P>(slots_).var),
       ...);
    }(detail::position_sequence<variables>{});
  }

  using slots_type = decltype(detail::make_slots(std::declval<entries_type>(),
                                                 std::make_index_sequence<size>{}));
  using kernels_type = decltype(detail::make_kernels(std::declval<entries_type>(),
                                                     std::make_index_sequence<size>{}));
  slots_type slots_;
  kernels_type kernels_;
  Index capacity_;
  bool adjoints_;
  std::array<bool, size> computed_{};  // tensors computed since the last feed
};

/// Binds a loss (a [1, 1] tensor) and any further tensors to fetch by name (metrics) to buffers
/// for batches of up to `capacity` rows. Like building a tf.Graph and creating a session for it.
/// Throws ShapeError when the runtime shapes do not fit, and ValueError naming the name when two
/// different objects of one type share a name (two Variable objects "w"); two different types
/// under one name do not compile (detail::check_unique_name). One object used twice is one tensor.
template <Operand L, Operand... Fs>
auto bind(Index capacity, L&& loss, Fs&&... fetches) {
  auto [tape, loss_idx] =
      detail::bind_tape(as_expr(std::forward<L>(loss)), as_expr(std::forward<Fs>(fetches))...);
  static_assert(decltype(loss_idx)::value != detail::npos);
  return Graph<decltype(tape), decltype(loss_idx)::value>(tape, capacity);
}

/// bind() for forward passes only (evaluation, prediction): the same graph type, with a value
/// buffer for every tensor and no adjoint buffer, so a batch of 1000 rows pays nothing for
/// gradients. The first tensor plays the loss's part in the type; backward() throws
/// RuntimeError. Errors otherwise as bind().
template <Operand L, Operand... Fs>
auto bind_forward(Index capacity, L&& first, Fs&&... fetches) {
  auto [tape, loss_idx] =
      detail::bind_tape(as_expr(std::forward<L>(first)), as_expr(std::forward<Fs>(fetches))...);
  static_assert(decltype(loss_idx)::value != detail::npos);
  return Graph<decltype(tape), decltype(loss_idx)::value>(tape, capacity, false);
}

}  // namespace hookfuse
