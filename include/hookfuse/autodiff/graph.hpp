// hookfuse/autodiff/graph.hpp: a model bound to memory: forward, backward, fetch by name.
//
// `bind(capacity, loss, fetches...)` lays out a value buffer for every tensor of the tape and an
// adjoint buffer for every tensor the loss's gradient reaches, all sized for `capacity` rows.
// After that, forward() and backward() allocate nothing.
//
// The fused update: backward<Pin>(optimizer) folds an optimizer whose update is linear in the
// gradient (SGD) into the backward pass for every variable that has exactly one consumer and is
// not pinned (a hook reads its gradient): its gradient contributions go straight into
// its value, so the gradient is never stored; apply_unfused<Pin>(optimizer) then updates the
// rest from their stored gradients. Which variables are fused is decided at compile time.
// An optimizer that accumulates into a slot (Momentum, SlotAccumulation) fuses the same way,
// with the slot as the target.
#pragma once

#include <array>
#include <concepts>
#include <limits>
#include <stdexcept>
#include <string_view>
#include <tuple>
#include <utility>

#include "hookfuse/autodiff/feed_check.hpp"
#include "hookfuse/autodiff/tape.hpp"
#include "hookfuse/autodiff/tape_tables.hpp"
#include "hookfuse/autodiff/target.hpp"
#include "hookfuse/config.hpp"
#include "hookfuse/detail/format.hpp"
#include "hookfuse/errors.hpp"

namespace hookfuse {

/// Thrown at bind time when runtime shapes do not fit an operation, by `feed` when an input does
/// not fit its placeholder, and before a forward pass (or a fetch) that would read a placeholder
/// no one fed, or placeholders fed with different row counts (TensorFlow's InvalidArgumentError
/// "You must feed a value for placeholder tensor ..."). The message names the op or placeholders
/// and the shapes.
struct ShapeError : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

namespace detail {

inline ErrorMessage& operator<<(ErrorMessage& m, Shape s) {
  return m << "[" << s.rows << ", " << s.cols << "]";
}

template <class E>
struct Slot;

template <class V>
struct Slot<VarEntry<V>> {
  using S = typename V::scalar;
  static constexpr Dims D = VarEntry<V>::dims;
  V* var;
  explicit Slot(const VarEntry<V>& e) : var(e.var) {}
  Shape shape() const { return {var->value.rows(), var->value.cols()}; }
  auto value() { return map_t<S, D.rows, D.cols>(var->value.data(), var->value.rows(),
                                                 var->value.cols()); }
  auto adjoint() {
    static_assert(V::has_grad,
                  "hookfuse: a graph that runs backward (a training step) reaches a "
                  "ForwardVariable, which has no gradient matrix: make the model's variables "
                  "Variables (nn::VariableStore), or bind it with bind_forward");
    return map_t<S, D.rows, D.cols>(var->grad.data(), var->grad.rows(), var->grad.cols());
  }
};

template <class P>
struct Slot<InputEntry<P>> {
  using S = typename P::scalar;
  static constexpr Dims D = InputEntry<P>::dims;
  P placeholder;
  const S* data = nullptr;
  bool fed = false;  // since the last Graph::clear_feeds()
  Shape current{D.rows == Dynamic ? 0 : D.rows, D.cols == Dynamic ? 0 : D.cols};
  explicit Slot(const InputEntry<P>& e) : placeholder(e.placeholder) {
    if constexpr (D.cols == Dynamic) current.cols = placeholder.cols;
  }
  Shape shape() const { return current; }
  auto value() {
    return Eigen::Map<const matrix_t<S, D.rows, D.cols>>(data, current.rows, current.cols);
  }
};

/// The slot of an op's entry: its value, and its adjoint when it requires a gradient (RG). Its
/// type depends on the scalar, dims and RG only, not on the op or its operands' positions, so
/// that the per-entry functions below are instantiated once for like layers, with short symbols.
template <class S_, Dims D_, bool RG>
struct OpSlot {
  using S = S_;
  static constexpr Dims D = D_;
  static constexpr bool requires_grad = RG;
  Buffer<S, D.rows, D.cols> val;
  struct NoAdjoint {};
  std::conditional_t<RG, Buffer<S, D.rows, D.cols>, NoAdjoint> adj;
  template <class E>
  explicit OpSlot(const E&) : OpSlot() {}
  /// Out of line (HOOKFUSE_NOINLINE): one function per scalar, dims and RG, to which the
  /// constructor from an entry delegates, so Graph::make_slots makes one call per op slot
  /// instead of inlining its stores (see there).
  HOOKFUSE_NOINLINE OpSlot() {}
  Shape shape() const { return val.shape(); }
  auto value() { return val.view(); }
  auto adjoint() { return adj.view(); }
  /// Heap bytes of the value and (when it has one) adjoint buffer.
  std::size_t heap_bytes() const {
    if constexpr (RG) return val.heap_bytes() + adj.heap_bytes();
    else return val.heap_bytes();
  }
};

template <class E>
struct slot_of {
  using type = Slot<E>;
};
template <class Op, class S, Dims D, bool RG, std::size_t... Cs>
struct slot_of<OpEntry<Op, S, D, RG, Cs...>> {
  using type = OpSlot<S, D, RG>;
};
/// The slot type of tape entry E.
template <class E>
using slot_t = typename slot_of<E>::type;

/// An optimizer whose update is `value += update_scale * gradient` (plain SGD): it can be folded
/// into the backward pass.
template <class Opt>
concept LinearUpdate = requires(const Opt& o) {
  { o.template update_scale<float>() } -> std::same_as<float>;
  { o.template update_scale<double>() } -> std::same_as<double>;
};

/// An optimizer whose update of a fused variable accumulates the gradient into one of its slots
/// (Momentum without Nesterov: accum = accum * momentum + g, then value -= lr * accum): before
/// the backward pass before_backward(var) scales the slot, the pass adds every gradient
/// contribution into accumulation_slot(var) (alpha 1), and apply_fused(var) (Graph::
/// apply_fused_slots, right after the backward pass) updates the value
/// from it. The slot holds exactly what the unfused update would put there.
template <class Opt>
concept SlotAccumulation = requires { requires Opt::fuses_into_slot; };

/// An optimizer that the backward pass can fold in (LinearUpdate or SlotAccumulation).
template <class Opt>
inline constexpr bool fusable_update = LinearUpdate<Opt> || SlotAccumulation<Opt>;

/// Fusion policies (which variables keep a stored gradient): Pin::pinned(variable name).
struct FuseNone {
  static constexpr bool pinned(std::string_view) { return true; }
};
struct FuseAll {
  static constexpr bool pinned(std::string_view) { return false; }
};
struct NoOptimizer {};

/// The kernel of a tape entry that has none (a Variable or a Placeholder). Graph's helpers that
/// are instantiated once per entry live here, outside the class: a member's symbol spells the
/// whole tape (see position_list).
struct NoKernel {
  template <class T>
  explicit NoKernel(const T&) {}
};
/// What an entry's kernel is built from: its op, or the entry itself.
template <class E>
const auto& op_of(const E& e) {
  if constexpr (requires { e.op; }) return e.op;
  else return e;
}
/// f(variable) for a Variable's slot; no-op for the other slots.
template <class Sl, class F>
HOOKFUSE_PER_ENTRY_INLINE inline void visit_variable(Sl& s, F& f) {
  if constexpr (requires { s.var; }) f(*s.var);
}
/// Marks a placeholder's slot unfed; no-op for the other slots.
template <class Sl>
HOOKFUSE_PER_ENTRY_INLINE inline void clear_fed(Sl& s) {
  if constexpr (requires { s.fed; }) s.fed = false;
}

/// check_size's ValueError: at bind, the tensor at tape `position` (named `name`, or
/// unnamed when empty) would be `shape`, more values than an Index can count. Out of line and
/// not a member, so compiled once, not once per entry.
HOOKFUSE_COLD inline void fail_capacity_too_large(Index capacity, std::string_view name,
                                                  std::size_t position, Shape shape) {
  ErrorMessage m;
  m << "hookfuse: bind: capacity " << static_cast<long long>(capacity)
    << " is too large: the tensor ";
  if (!name.empty()) m << "'" << name << "' ";
  m << "at tape position " << position << " would be " << shape
    << ", more values than memory can be indexed with";
  fail<ValueError>(m.str());
}

/// reserve_op's ShapeError: the operands' shapes do not fit the op at tape `position`.
template <class... Sh>
HOOKFUSE_COLD void fail_operand_shapes(std::size_t position, Sh... shapes) {
  ErrorMessage msg;
  msg << "hookfuse: operand shapes do not fit the operation at tape position " << position << ":";
  ((msg << " " << shapes), ...);
  fail<ShapeError>(msg.str());
}

// The graph's work on one entry. Free functions whose template arguments are that entry's own
// types (its op, kernel and slots, and its operands' slots), not the graph's: the graph calls
// them from one fold per pass, over the tape positions of a position_list, with the operand
// slots given by operand_triples. A member of Graph instantiated once per entry has a symbol
// that spells the whole tape, so the compiler's work would grow with the square of the model's
// size (bench/README.md, "Growth with hooks and layers").

/// f applied to the first N of the three operand slots.
template <std::size_t N, class F, class C0, class C1, class C2>
HOOKFUSE_PER_ENTRY_INLINE inline decltype(auto) with_operands(F&& f, C0& c0, C1& c1, C2& c2) {
  if constexpr (N == 0) return f();
  else if constexpr (N == 1) return f(c0);
  else if constexpr (N == 2) return f(c0, c1);
  else return f(c0, c1, c2);
}
/// Operand slot K of three.
template <std::size_t K, class C0, class C1, class C2>
HOOKFUSE_PER_ENTRY_INLINE constexpr auto& pick_operand(C0& c0, C1& c1, C2& c2) {
  if constexpr (K == 0) return c0;
  else if constexpr (K == 1) return c1;
  else return c2;
}

/// ValueError unless a tensor of scalar S and `shape` can be allocated and indexed: rows * cols
/// values of S within the index type (no overflow in any size product). `position` and `name`
/// are the entry's, for the message.
template <class S>
HOOKFUSE_PER_ENTRY_INLINE inline void check_size(Shape shape, Index capacity,
                                                 std::size_t position, std::string_view name) {
  constexpr Index max_values = std::numeric_limits<Index>::max() / Index{sizeof(S)};
  if (shape.rows > 0 && shape.cols > 0 && shape.rows > max_values / shape.cols)
    fail_capacity_too_large(capacity, name, position, shape);
}

/// At bind: a placeholder's rows become the capacity when they are the batch's.
template <class Sl>
HOOKFUSE_PER_ENTRY_INLINE inline void reserve_placeholder(Sl& slot, Index capacity,
                                                          std::size_t position,
                                                          std::string_view name) {
  if constexpr (Sl::D.rows == Dynamic) slot.current.rows = capacity;
  check_size<typename Sl::S>(slot.current, capacity, position, name);
}

/// At bind: checks an op's operand shapes (ShapeError) and its size (ValueError), and reserves
/// its buffers and its kernel's workspace for them.
template <class Op, std::size_t N, class Kernel, class Sl, class C0, class C1, class C2>
HOOKFUSE_PER_ENTRY_INLINE inline void reserve_op(Kernel& kernel, Sl& slot, Index capacity,
                                                 bool adjoints, std::size_t position,
                                                 std::string_view name, C0& c0, C1& c1, C2& c2) {
  with_operands<N>(
      [&](auto&... cs) HOOKFUSE_PER_ENTRY_INLINE {
        const Shape shape = Op::shape(cs.shape()...);
        bool ok = true;
        if constexpr (requires { Op::valid_shape(cs.shape()...); })
          ok = Op::valid_shape(cs.shape()...);
        // Rules that depend on the operands' compile-time dims (broadcasting) live in the kernel.
        if constexpr (requires { Kernel::valid_shape(cs.shape()...); })
          ok = ok && Kernel::valid_shape(cs.shape()...);
        if (!ok) fail_operand_shapes(position, cs.shape()...);
        check_size<typename Sl::S>(shape, capacity, position, name);
        slot.val.reserve(shape);
        if constexpr (Sl::requires_grad)
          if (adjoints) slot.adj.reserve(shape);
        kernel.reserve(shape, cs.shape()...);
      },
      c0, c1, c2);
}

/// An op's forward pass: its value from its operands' values.
template <class Op, std::size_t N, class Kernel, class Sl, class C0, class C1, class C2>
HOOKFUSE_PER_ENTRY_INLINE inline void forward_op(Kernel& kernel, Sl& slot, C0& c0, C1& c1,
                                                 C2& c2) {
  with_operands<N>(
      [&](auto&... cs) HOOKFUSE_PER_ENTRY_INLINE {
        const Shape shape = Op::shape(cs.shape()...);
        slot.val.set_shape(shape);
        if constexpr (Sl::requires_grad) slot.adj.set_shape(shape);
        auto out = slot.value();
        kernel.forward(out, cs.value()...);
      },
      c0, c1, c2);
}

/// Where the backward pass of an op writes one operand's gradient.
enum class OperandRole : unsigned char {
  none,    // the operand requires no gradient
  assign,  // its adjoint, first contribution (overwrites)
  add,     // its adjoint, a later contribution
  update   // a Variable whose update is fused: its value (LinearUpdate) or its optimizer slot
};
/// What the backward pass of one op does: per operand, where its gradient goes.
struct BackwardPlan {
  std::size_t operands = 0;
  std::array<OperandRole, max_operands> role{};
};

/// The role in backward_op's first round (every operand but the fused ones) and second.
constexpr OperandRole unfused_role(OperandRole r) {
  return r == OperandRole::update ? OperandRole::none : r;
}
constexpr OperandRole fused_role(OperandRole r) {
  return r == OperandRole::update ? r : OperandRole::none;
}

/// Operand K's share of an op's backward pass, written where `Role` says.
template <std::size_t K, OperandRole Role, class Optimizer, class Kernel, class Sl, class C,
          class... Vals>
HOOKFUSE_PER_ENTRY_INLINE inline void backward_operand(const Optimizer& optimizer, Kernel& kernel,
                                                       Sl& slot, C& operand,
                                                       const Vals&... vals) {
  if constexpr (Role == OperandRole::assign || Role == OperandRole::add) {
    auto adj = operand.adjoint();
    GradTarget<decltype(adj), Role == OperandRole::assign> t{adj};
    kernel.template backward<K>(t, slot.adjoint(), slot.value(), vals...);
  } else if constexpr (Role == OperandRole::update) {
    using S = typename C::S;
    if constexpr (LinearUpdate<Optimizer>) {
      auto value = operand.value();
      UpdateTarget<decltype(value)> t{value, optimizer.template update_scale<S>()};
      kernel.template backward<K>(t, slot.adjoint(), slot.value(), vals...);
    } else if constexpr (SlotAccumulation<Optimizer>) {
      auto& acc = optimizer.accumulation_slot(*operand.var);
      map_t<S, C::D.rows, C::D.cols> view(acc.data(), acc.rows(), acc.cols());
      UpdateTarget<decltype(view)> t{view, S(1)};
      kernel.template backward<K>(t, slot.adjoint(), slot.value(), vals...);
    }
  }
}

/// An op's backward pass: each operand's gradient, where Plan says. Operands whose update is
/// fused come last: the others' backward may still read the variable's value (dX = dY W^T
/// before W changes).
template <BackwardPlan Plan, class Optimizer, class Kernel, class Sl, class C0, class C1,
          class C2>
HOOKFUSE_PER_ENTRY_INLINE inline void backward_op(const Optimizer& optimizer, Kernel& kernel,
                                                  Sl& slot, C0& c0, C1& c1, C2& c2) {
  with_operands<Plan.operands>(
      [&](auto&... cs) HOOKFUSE_PER_ENTRY_INLINE {
        [&]<std::size_t... K>(std::index_sequence<K...>) HOOKFUSE_PER_ENTRY_INLINE {
          (backward_operand<K, unfused_role(Plan.role[K])>(
               optimizer, kernel, slot, pick_operand<K>(c0, c1, c2), cs.value()...),
           ...);
          (backward_operand<K, fused_role(Plan.role[K])>(
               optimizer, kernel, slot, pick_operand<K>(c0, c1, c2), cs.value()...),
           ...);
        }(std::make_index_sequence<Plan.operands>{});
      },
      c0, c1, c2);
}

/// What the optimizer does to one Variable around the backward pass.
enum class VariableStep { before_backward, apply, apply_fused };
/// optimizer.before_backward / apply / apply_fused (Step) of one variable when `Do`.
template <VariableStep Step, bool Do, class Optimizer, class V>
HOOKFUSE_PER_ENTRY_INLINE inline void step_variable(const Optimizer& optimizer, V& variable) {
  if constexpr (Do) {
    if constexpr (Step == VariableStep::before_backward) optimizer.before_backward(variable);
    else if constexpr (Step == VariableStep::apply) optimizer.apply(variable);
    else optimizer.apply_fused(variable);
  }
}

}  // namespace detail

/// A model bound to buffers. `Loss` is the position of the loss on the tape; every tensor at or
/// below it is computed by forward(), the rest only when fetched.
template <class TapeT, std::size_t Loss>
class Graph {
 public:
  using entries_type = typename TapeT::entries_type;
  using names_type = typename TapeT::names_type;
  static constexpr std::size_t size = std::tuple_size_v<entries_type>;
  static constexpr std::size_t loss_index = Loss;
  using scalar = typename std::tuple_element_t<Loss, entries_type>::scalar;

  /// Lays out every buffer for batches of up to `capacity` rows. Throws ValueError naming the
  /// value when capacity < 0, or when a tensor's [rows, cols] for it holds more values than
  /// memory can be indexed with (rows * cols * sizeof(scalar) past the index type's range).
  /// `adjoints` false lays out values only (bind_forward): backward() then throws RuntimeError.
  Graph(const TapeT& tape, Index capacity, bool adjoints = true)
      : slots_(make_slots(tape.entries, std::make_index_sequence<size>{})),
        kernels_(make_kernels(tape.entries, std::make_index_sequence<size>{})),
        capacity_(capacity),
        adjoints_(adjoints) {
    if (capacity < 0)
      detail::fail<ValueError>((detail::ErrorMessage()
                                << "hookfuse: bind: capacity (the most rows a batch can have) "
                                   "must be >= 0, got "
                                << static_cast<long long>(capacity))
                                   .str());
    // The placeholders, then the ops in tape order (each after its operands).
    using placeholders =
        detail::position_list<entries_type, detail::EntryKind::placeholder, size - 1>;
    [this]<std::size_t... P>(std::index_sequence<P...>) {
      (detail::reserve_placeholder(detail::get<P>(slots_), capacity_, P, names_[P]), ...);
    }(detail::position_sequence<placeholders>{});
    using ops = detail::position_list<entries_type, detail::EntryKind::op, size - 1>;
    [this]<std::size_t... P>(std::index_sequence<P...>) {
      (detail::reserve_op<op_t<P>, op_arity<P>::value>(
           detail::get<P>(kernels_), detail::get<P>(slots_), capacity_, adjoints_, P, names_[P],
           detail::get<operands_[P][0]>(slots_), detail::get<operands_[P][1]>(slots_),
           detail::get<operands_[P][2]>(slots_)),
       ...);
    }(detail::position_sequence<ops>{});
  }
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;
  Graph(Graph&&) = default;

  /// Position of a named tensor on the tape, or detail::npos.
  template <fixed_string Name>
  static constexpr std::size_t index_of = detail::name_index<Name, names_type>::value;
  template <fixed_string Name>
  static constexpr bool has = index_of<Name> != detail::npos;
  /// Compile-time dims of a named tensor (Name must exist).
  template <fixed_string Name>
  static constexpr Dims dims_of = std::tuple_element_t<index_of<Name>, entries_type>::dims;
  /// The named tensor has an adjoint after backward(): the loss depends on it and it depends
  /// on a Variable.
  template <fixed_string Name>
  static constexpr bool has_adjoint = [] {
    if constexpr (has<Name>)
      return index_of<Name> <= Loss &&
             std::tuple_element_t<index_of<Name>, entries_type>::requires_grad;
    else
      return false;
  }();

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
    static_assert(has<Name>, "hookfuse: the model has no placeholder with this name");
    if constexpr (has<Name>) {
      static_assert(is_placeholder_at<index_of<Name>>(),
                    "hookfuse: feed: this name is not a placeholder of the model");
      using Sl = std::remove_cvref_t<decltype(detail::get<index_of<Name>>(slots_))>;
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
    static_assert(has<Name>, "hookfuse: the model has no placeholder with this name");
    if constexpr (has<Name>) {
      if constexpr (detail::check_rows_only_feed<Name, dims_of<Name>.cols>())
        feed<Name>(data, rows, 1);
    }
  }

  /// Feeds an Eigen matrix or vector: its rows and columns are the batch's; a matrix with more
  /// than one column must be row-major and contiguous. A compile-time column count is checked
  /// against the placeholder's at compile time. The matrix must outlive the step's fetches.
  template <fixed_string Name, class Derived>
  void feed(const Eigen::MatrixBase<Derived>& m) {
    static_assert(has<Name>, "hookfuse: the model has no placeholder with this name");
    if constexpr (has<Name>) {
      static_assert(Derived::ColsAtCompileTime == 1 || Derived::IsRowMajor,
                    "hookfuse: feed: a matrix with several columns must be row-major "
                    "(rows are the batch, one example contiguous)");
      using Sl = std::remove_cvref_t<decltype(detail::get<index_of<Name>>(slots_))>;
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
    static_assert(has<Name>, "hookfuse: the model has no placeholder with this name");
    if constexpr (has<Name>) {
      static_assert(is_placeholder_at<index_of<Name>>(),
                    "hookfuse: feed: this name is not a placeholder of the model");
      using Sl = std::remove_cvref_t<decltype(detail::get<index_of<Name>>(slots_))>;
      if constexpr (detail::check_feed_scalar<Name, typename Sl::S, std::remove_cv_t<T>>()) {
        if (cols != placeholder_cols<Name>()) {
          detail::ErrorMessage m;
          m << "hookfuse: feed '" << Name.view() << "': the data has "
            << static_cast<long long>(cols) << " columns, the placeholder is ";
          detail::describe_placeholder(m, detail::get<index_of<Name>>(slots_));
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
    static_assert(has<Name> && is_placeholder_at<index_of<Name>>(),
                  "hookfuse: the model has no placeholder with this name");
    return detail::get<index_of<Name>>(slots_).fed;
  }

  /// The placeholders a step reads, by tape position: filled by check_fed() for the loss and
  /// each tensor the step fetches, then checked as a whole by check_same_rows().
  using read_set = std::array<bool, size>;

  /// Before a step reads anything: throws ShapeError naming the reader and the placeholders
  /// unless every placeholder the loss (Name empty, the forward pass) or the tensor `Name`
  /// reads was fed, with one row count; marks those placeholders in `reads`.
  template <fixed_string Name = "">
  void check_fed(read_set& reads) const {
    constexpr std::size_t target = Name.view().empty() ? Loss : index_of<Name>;
    static_assert(target != detail::npos, "hookfuse: the model has no tensor with this name");
    if constexpr (target != detail::npos) {
      check_feeds<target>(Name.view());
      mark_read(reads, placeholders_read<target>{});
    }
  }
  /// Throws ShapeError naming the placeholders and their rows unless the batched placeholders
  /// marked in `reads` were all fed the same number of rows (every placeholder of a step gets
  /// the same batch).
  void check_same_rows(const read_set& reads) const {
    check_same_rows_of(reads, detail::position_sequence<placeholders>{});
  }

  /// Computes every tensor up to the loss; returns the loss. Throws ShapeError, before reading
  /// any input, when a placeholder the loss reads was not fed or the batched placeholders were
  /// fed different row counts.
  scalar forward() {
    check_feeds<Loss>({});
    computed_.fill(false);
    using ops = detail::position_list<entries_type, detail::EntryKind::op, Loss>;
    [this]<std::size_t... P>(std::index_sequence<P...>) {
      (detail::forward_op<op_t<P>, op_arity<P>::value>(
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
      (detail::backward_op<backward_plans<P>[I]>(
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

  /// True when the update of the Variable at tape position I is folded into the backward pass
  /// under policy Pin: the variable is not pinned under any of its names (its own or a
  /// `named` alias), is an operand exactly once on the whole tape, that use lies in the loss's
  /// graph, and no other operand of that op is a Variable (whose backward could read this one
  /// after its update), except for an addition, whose backward reads no operand. (A second use
  /// would read the value after the update, or contribute a second gradient term after it.)
  template <class Pin, std::size_t I>
  static constexpr bool update_fused_at() {
    return fused_variables<Pin>[I];
  }

  /// update_fused_at for a Variable by name (false for an unknown name or a non-variable).
  template <class Pin, fixed_string Name>
  static constexpr bool update_fused() {
    if constexpr (has<Name>) return update_fused_at<Pin, index_of<Name>>();
    else return false;
  }

  /// Returns the value of the named tensor, computing it (and what it reads) unless forward() or
  /// an earlier compute() did since the last feed: a tensor outside the loss's graph, or any
  /// tensor before the first forward pass. Throws ShapeError naming the tensor and the
  /// placeholder when it reads a placeholder that was not fed (never reads unfed input).
  template <fixed_string Name>
  auto compute() {
    static_assert(has<Name>, "hookfuse: the model has no tensor with this name");
    constexpr std::size_t i = index_of<Name>;
    if (!computed_[i]) {
      check_feeds<i>(Name.view());
      using ops = detail::position_list<entries_type, detail::EntryKind::reached_op, i>;
      [this]<std::size_t... P>(std::index_sequence<P...>) {
        ((computed_[P] ||
          (detail::forward_op<op_t<P>, op_arity<P>::value>(
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
    static_assert(has<Name>, "hookfuse: the model has no tensor with this name");
    return detail::get<index_of<Name>>(slots_).value();
  }
  /// The adjoint d loss / d tensor of a named tensor after backward().
  template <fixed_string Name>
  auto adjoint() {
    static_assert(has<Name>, "hookfuse: the model has no tensor with this name");
    return detail::get<index_of<Name>>(slots_).adjoint();
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
    static_assert(has<Name>, "hookfuse: the model has no placeholder with this name");
    if constexpr (is_placeholder_at<index_of<Name>>())
      return detail::get<index_of<Name>>(slots_).current.cols;
    else
      return 0;
  }

  /// The most rows a batch can have: what the graph was bound for.
  Index capacity() const { return capacity_; }

 private:
  /// The tape positions of the Variables (detail::position_list).
  using variables = detail::position_list<entries_type, detail::EntryKind::variable, size - 1>;

  template <std::size_t I>
  static constexpr bool is_placeholder_at() {
    return requires { typename std::tuple_element_t<I, entries_type>::placeholder_type; };
  }
  template <fixed_string Name, class T>
  void feed_checked(const T* data, Index rows, Index cols) {
    constexpr std::size_t i = index_of<Name>;
    auto& slot = detail::get<i>(slots_);
    using Sl = std::remove_cvref_t<decltype(slot)>;
    Index max_rows = capacity_;
    if constexpr (Sl::D.rows != Dynamic) max_rows = Sl::D.rows;
    const bool rows_ok = Sl::D.rows == Dynamic ? rows >= 0 && rows <= capacity_ : rows == max_rows;
    if (!rows_ok || cols != slot.current.cols) {
      detail::ErrorMessage m;
      m << "hookfuse: feed '" << Name.view() << "': ";
      if (cols != slot.current.cols) {
        m << "the data is [" << static_cast<long long>(rows) << ", "
          << static_cast<long long>(cols) << "], the placeholder is ";
      } else if constexpr (Sl::D.rows == Dynamic) {
        m << static_cast<long long>(rows) << " rows, but the graph was bound for batches of "
          << (rows < 0 ? "0 to " : "up to ") << static_cast<long long>(capacity_)
          << " rows; the placeholder is ";
      } else {
        m << static_cast<long long>(rows) << " rows, but the placeholder has " << Sl::D.rows
          << ": ";
      }
      detail::describe_placeholder(m, slot);
      detail::fail<ShapeError>(m.str());
    }
    if (data == nullptr && rows * cols > 0)
      detail::fail<ShapeError>((detail::ErrorMessage() << "hookfuse: feed '" << Name.view()
                                                       << "': the data is null")
                                   .str());
    slot.current.rows = rows;
    slot.data = data;
    slot.fed = true;
    computed_.fill(false);
  }

  /// Throws ShapeError unless every placeholder entry `Target` reads was fed, and all the
  /// batched ones with the same row count (detail::check_feeds). `what` names the tensor
  /// fetched (empty: the forward pass).
  template <std::size_t Target>
  void check_feeds(std::string_view what) const {
    check_feeds_of(what, placeholders_read<Target>{});
  }

  // The feed checks are folds over the placeholders' positions in member functions, one per
  // reader, with no lambda and no helper per placeholder: each such function is a symbol that
  // spells the Graph's whole tape, and the compiler's work to name one grows with the square of
  // the tape's length. The messages are built by one function shared by every tape
  // (detail::fail_feeds), and only when a check fails.

  /// The placeholders entry Target reads (tape positions, in tape order).
  template <std::size_t Target>
  using placeholders_read = detail::position_sequence<
      detail::position_list<entries_type, detail::EntryKind::reached_placeholder, Target>>;
  using placeholders =
      detail::position_list<entries_type, detail::EntryKind::placeholder, size - 1>;

  template <std::size_t... I>
  static void mark_read(read_set& reads, std::index_sequence<I...>) {
    ((reads[I] = true), ...);
  }
  template <std::size_t... I>
  void check_feeds_of(std::string_view what, std::index_sequence<I...>) const {
    const bool fed = (detail::get<I>(slots_).fed && ... && true);
    [[maybe_unused]] Index rows = -1;  // (no placeholder read: unused)
    bool same = true;
    ((std::tuple_element_t<I, entries_type>::dims.rows == Dynamic
          ? detail::note_rows(detail::get<I>(slots_).current.rows, rows, same)
          : void()),
     ...);
    if (!fed || !same) [[unlikely]] {
      const std::array<detail::FeedState, sizeof...(I)> states{
          detail::feed_state(detail::get<I>(slots_), names_[I])...};
      detail::fail_feeds<ShapeError>(states.data(), states.size(), nullptr, what, false);
    }
  }
  template <std::size_t... I>
  void check_same_rows_of(const read_set& reads, std::index_sequence<I...>) const {
    [[maybe_unused]] Index rows = -1;  // (no placeholder read: unused)
    bool same = true;
    ((std::tuple_element_t<I, entries_type>::dims.rows == Dynamic && reads[I]
          ? detail::note_rows(detail::get<I>(slots_).current.rows, rows, same)
          : void()),
     ...);
    if (!same) [[unlikely]] {
      const std::array<detail::FeedState, sizeof...(I)> states{
          detail::feed_state(detail::get<I>(slots_), names_[I])...};
      const std::array<bool, sizeof...(I)> in_set{reads[I]...};
      detail::fail_feeds<ShapeError>(states.data(), states.size(), in_set.data(), {}, true);
    }
  }
  // make_slots and make_kernels run once, at bind, and write one slot or kernel per tape entry into
  // the Graph: a few stores each, a thousand for a 32-layer model. Inlined into the constructor,
  // with every op slot's stores inlined into them, they would make one function whose value
  // numbering and alias walks (each load checked against the stores before it) grow faster than
  // the model. So both are out of line (HOOKFUSE_NOINLINE) and each op slot is built by a call to
  // OpSlot's out-of-line default constructor; the training step's code is the same either way.
  // Not HOOKFUSE_COLD: that would also make the compiler treat the code around bind as rarely
  // run, and Adam's step costs more instructions then.
  template <class Entries, std::size_t... I>
  HOOKFUSE_NOINLINE static auto make_slots(const Entries& e, std::index_sequence<I...>) {
    // Each slot is constructed in place from its entry: no temporary copy of its buffers (on a
    // microcontroller the stack would need room for a second graph).
    return detail::FlatTupleImpl<std::index_sequence<I...>,
                                 detail::slot_t<std::tuple_element_t<I, Entries>>...>{
        detail::FlatLeaf<I, detail::slot_t<std::tuple_element_t<I, Entries>>>{
            detail::slot_t<std::tuple_element_t<I, Entries>>(detail::get<I>(e))}...};
  }
  template <class E>
  struct kernel_of {
    using type = detail::NoKernel;
  };
  template <class Op, class S, Dims D, bool RG, std::size_t... Cs>
  struct kernel_of<detail::OpEntry<Op, S, D, RG, Cs...>> {
    using type = typename Op::template kernel<S, D, std::tuple_element_t<Cs, entries_type>::dims...>;
  };
  template <class Entries, std::size_t... I>
  HOOKFUSE_NOINLINE static auto make_kernels(const Entries& e, std::index_sequence<I...>) {
    return detail::FlatTupleImpl<std::index_sequence<I...>,
                                 typename kernel_of<std::tuple_element_t<I, Entries>>::type...>{
        detail::FlatLeaf<I, typename kernel_of<std::tuple_element_t<I, Entries>>::type>{
            typename kernel_of<std::tuple_element_t<I, Entries>>::type(
                detail::op_of(detail::get<I>(e)))}...};
  }

  /// The op of tape entry I, and its operand count.
  template <std::size_t I>
  using op_t = typename std::tuple_element_t<I, entries_type>::op_type;
  /// (A type, not a static member variable: a member variable of the Graph is a symbol that
  /// spells the Graph's whole tape, one per entry, and the compiler names each of them.)
  template <std::size_t I>
  using op_arity = std::integral_constant<std::size_t,
                                          std::tuple_element_t<I, entries_type>::children.size()>;
  /// Each entry's operands (detail::operand_triples) and name (for bind's messages).
  static constexpr auto operands_ = detail::operand_triples<entries_type>;
  static constexpr auto names_ = detail::position_names<names_type, size>;

  /// fused_variables<Pin>[I]: the update of the Variable at position I is folded into the
  /// backward pass under policy Pin (see update_fused_at).
  template <class Pin>
  static constexpr std::array<bool, size> fused_variables = [] {
    const auto& s = detail::tape_shape<entries_type>;
    std::array<bool, size> fused{};
    for (std::size_t i = 0; i < size; ++i) {
      if (!s.is_variable[i]) continue;
      bool pinned = false;
      for (const detail::NameAt& n : detail::name_table<names_type>::names)
        pinned = pinned || (n.index == i && Pin::pinned(n.name));
      fused[i] = detail::operand_count<entries_type, size - 1>[i] == 1 &&
                 detail::operand_count<entries_type, Loss>[i] == 1 && !pinned &&
                 detail::consumers_allow_fusion<entries_type>[i];
    }
    return fused;
  }();
  /// backward_plans<Pin>[I]: where the backward pass of entry I (up to the loss) writes each
  /// operand's gradient; no operands for an entry that requires no gradient.
  template <class Pin>
  static constexpr std::array<detail::BackwardPlan, size> backward_plans = [] {
    const auto& s = detail::tape_shape<entries_type>;
    const auto& first = detail::first_write_table<entries_type, Loss>;
    std::array<detail::BackwardPlan, size> plans{};
    for (std::size_t i = 0; i <= Loss; ++i) {
      if (!s.requires_grad[i] || s.is_variable[i] || s.is_placeholder[i]) continue;
      plans[i].operands = s.first_operand[i + 1] - s.first_operand[i];
      for (std::size_t p = s.first_operand[i]; p < s.first_operand[i + 1]; ++p) {
        const std::size_t c = s.operands[p];
        plans[i].role[p - s.first_operand[i]] =
            fused_variables<Pin>[c]  ? detail::OperandRole::update
            : !s.requires_grad[c]    ? detail::OperandRole::none
            : first[p]               ? detail::OperandRole::assign
                                     : detail::OperandRole::add;
      }
    }
    return plans;
  }();

  /// The optimizer's Step for every Variable whose update is fused (Fused) or not (!Fused).
  template <detail::VariableStep Step, class Pin, bool Fused, class Optimizer>
  void step_variables(const Optimizer& optimizer) {
    [&]<std::size_t... P>(std::index_sequence<P...>) {
      (detail::step_variable<Step, fused_variables<Pin>[P] == Fused>(
           optimizer, *detail::get<P>(slots_).var),
       ...);
    }(detail::position_sequence<variables>{});
  }

  using slots_type = decltype(make_slots(std::declval<entries_type>(),
                                         std::make_index_sequence<size>{}));
  using kernels_type = decltype(make_kernels(std::declval<entries_type>(),
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
