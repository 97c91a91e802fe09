// hookfuse/session/optimizer_slots.hpp: an optimizer's slot variables for a bound graph, and their
// checkpoint names (TensorFlow's slot variables, Optimizer.get_slot).
//
// OptimizerSlots<Opt, GraphT> holds, for every Variable of the graph (in tape order), one matrix
// of the variable's shape per slot name, and the optimizer's non-slot scalars (Adam's
// beta1_power, beta2_power). It is built right after the graph is bound: that is the only
// allocation (none for fixed-size variables); a step allocates nothing. For a stateless
// optimizer (SGD) it is empty and `bind` returns the optimizer itself, so nothing changes.
#pragma once

#include <array>
#include <cstddef>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>

#include "hookfuse/autodiff/storage.hpp"
#include "hookfuse/hooks/checkpoint_variables.hpp"
#include "hookfuse/optim/optimizer.hpp"

#ifndef HOOKFUSE_EMBEDDED
#include <algorithm>
#include <numeric>

#include "hookfuse/autodiff/thread_pool.hpp"
#endif

namespace hookfuse {
namespace detail {

template <class E>
struct variable_of {
  using type = std::tuple<>;
};
template <class E>
  requires requires { typename E::variable_type; }
struct variable_of<E> {
  using type = std::tuple<typename E::variable_type>;
};

template <class Entries, class Seq>
struct variable_types;
template <class Entries, std::size_t... I>
struct variable_types<Entries, std::index_sequence<I...>> {
  using type = decltype(std::tuple_cat(
      std::declval<typename variable_of<std::tuple_element_t<I, Entries>>::type>()...));
};
/// std::tuple<V...>: the Variable types of a bound graph, each once, in tape order.
template <class GraphT>
using graph_variable_types_t =
    typename variable_types<typename GraphT::entries_type,
                            std::make_index_sequence<std::tuple_size_v<typename GraphT::entries_type>>>::type;

/// Position of V in std::tuple<Vs...>.
template <class V, class Tuple>
struct type_index;
template <class V, class... Vs>
struct type_index<V, std::tuple<Vs...>> {
  static constexpr std::size_t value = [] {
    constexpr bool same[] = {std::is_same_v<V, Vs>..., false};
    std::size_t i = 0;
    while (i < sizeof...(Vs) && !same[i]) ++i;
    return i;
  }();
};

/// The checkpoint key of slot K of variable V: "<V::name>/<K-th slot name>" ("dense/kernel/Adam").
template <class V, class Names, std::size_t K>
inline constexpr auto slot_key =
    concat(concat(V::name, fixed_string("/")), std::get<K>(Names::names));
/// The key whose presence in a checkpoint means slot K of variable V was saved with another
/// meaning: "<V::name>/<K-th conflicting_slot_name>", or "" when the optimizer declares none
/// for that slot (see conflicting_slot_names in SlotOptimizer's description, optimizer.hpp).
template <class V, class Opt, std::size_t K>
constexpr std::string_view conflicting_slot_key() {
  if constexpr (requires { typename Opt::conflicting_slot_names; }) {
    using Names = typename Opt::conflicting_slot_names;
    static_assert(Names::size == Opt::slot_names::size,
                  "hookfuse: an optimizer's conflicting_slot_names has one name (or \"\") per "
                  "slot name");
    if constexpr (std::remove_cvref_t<decltype(std::get<K>(Names::names))>::size() > 0)
      return slot_key<V, Names, K>.view();
  }
  return {};
}
template <class Opt>
constexpr std::string_view slot_conflict_reason() {
  if constexpr (requires { Opt::slot_conflict_reason; })
    return Opt::slot_conflict_reason;
  else
    return "the checkpoint was saved by an optimizer with other settings";
}

/// The checkpoint key of non-slot K ("beta1_power").
template <class Names, std::size_t K>
inline constexpr auto non_slot_key = std::get<K>(Names::names);

/// The slots of one variable: K matrices of its shape.
template <class V, std::size_t K>
struct VariableSlots {
  std::array<typename V::matrix_type, K> slot;
};

/// A variable's value, gradient or slot as the optimizer's update sees it: its [R, C] shape at
/// run time, row-major (a column's storage is the same either way). So an optimizer's update is
/// compiled once per scalar type and alignment, not once per variable shape.
template <class V>
using update_map_t =
    Eigen::Map<matrix_t<typename V::scalar, Dynamic, Dynamic>,
               alignment_of<typename V::scalar, V::rows_at_compile_time, V::cols_at_compile_time>>;
template <class V>
update_map_t<V> update_map(typename V::matrix_type& m) {
  return update_map_t<V>(m.data(), m.rows(), m.cols());
}
/// The slots of one variable as update_map_t (what apply_dense, before_backward and
/// apply_fused receive as `slots`).
template <class Map, std::size_t K>
struct SlotMaps {
  std::array<Map, K> slot;
};
template <class V, std::size_t K, std::size_t... I>
SlotMaps<update_map_t<V>, K> slot_maps(VariableSlots<V, K>& slots, std::index_sequence<I...>) {
  return {{update_map<V>(slots.slot[I])...}};
}
/// Rows [begin, begin + rows) of each slot of a variable with `cols` columns, as update_map_t
/// (the caller picks `begin` so that the offset keeps the maps' alignment).
template <class V, std::size_t K, std::size_t... I>
SlotMaps<update_map_t<V>, K> slot_rows(VariableSlots<V, K>& slots, Index begin, Index rows,
                                       Index cols, std::index_sequence<I...>) {
  return {{update_map_t<V>(slots.slot[I].data() + begin * cols, rows, cols)...}};
}

#ifndef HOOKFUSE_EMBEDDED
/// Variables of at least this many elements get an elementwise update (ElementwiseUpdate) split
/// across the intra-op threads: 16,384 elements of Adam's update are about 130,000 instructions,
/// a hundred times what waking a spinning worker costs.
inline constexpr Index kParallelUpdateMinElements = Index(1) << 14;
#endif

/// What the graph applies (Graph::apply_unfused) for an optimizer with slots: each variable's
/// update with its slots. Built for one step by OptimizerSlots::bind.
template <class Opt, class State>
struct SlotUpdate {
  const Opt& optimizer;
  State& state;
  template <class V>
  auto slots(V&) const {
    constexpr std::size_t k = Opt::slot_names::size;
    return slot_maps(state.template slots_of<V>(), std::make_index_sequence<k>{});
  }
  template <class V>
  HOOKFUSE_FLATTEN void apply(V& variable) const {
#ifndef HOOKFUSE_EMBEDDED
    if constexpr (ElementwiseUpdate<Opt>) {
      if (intra_op_threads.load(std::memory_order_relaxed) > 1 &&
          variable.value.size() >= kParallelUpdateMinElements && apply_split(variable))
        return;
    }
#endif
    auto value = update_map<V>(variable.value);
    auto s = slots(variable);
    optimizer.apply_dense(value, update_map<V>(variable.grad), s, state.non_slot);
  }

#ifndef HOOKFUSE_EMBEDDED
  /// One part of a split update: rows [part * chunk, ...) of the value, gradient and slots.
  template <class V>
  struct SplitUpdate {
    const SlotUpdate& update;
    V& variable;
    Index chunk;
    static void run(void* self, int part) noexcept {
      auto& p = *static_cast<SplitUpdate*>(self);
      const Index rows_all = p.variable.value.rows(), cols = p.variable.value.cols();
      const Index begin = part * p.chunk, rows = std::min(p.chunk, rows_all - begin);
      update_map_t<V> value(p.variable.value.data() + begin * cols, rows, cols);
      const update_map_t<V> grad(p.variable.grad.data() + begin * cols, rows, cols);
      constexpr std::size_t k = Opt::slot_names::size;
      auto s = slot_rows(p.update.state.template slots_of<V>(), begin, rows, cols,
                         std::make_index_sequence<k>{});
      p.update.optimizer.apply_dense(value, grad, s, p.update.state.non_slot);
    }
  };
  /// The update of a large variable as row blocks on the intra-op pool, one per thread, each
  /// block starting at the alignment the update's maps declare (so that its elements take the
  /// vectorised path they take on one thread). False, applying nothing, when the pool is busy
  /// or the variable has too few rows to split.
  template <class V>
  HOOKFUSE_NOINLINE bool apply_split(V& variable) const {
    using S = typename V::scalar;
    const Index rows = variable.value.rows(), cols = variable.value.cols();
    const int threads = intra_op_threads.load(std::memory_order_relaxed);
    // Rows per block: a multiple of `step`, so that each block's first element keeps the
    // alignment of the whole (a multiple of `per_align` elements from its start).
    constexpr int align_bytes =
        alignment_of<S, V::rows_at_compile_time, V::cols_at_compile_time>;
    constexpr Index per_align = align_bytes > 0 ? Index(align_bytes / int(sizeof(S))) : 1;
    const Index step = per_align / std::gcd(per_align, cols);
    const Index chunk = aligned_chunk(rows, threads, step);
    const int parts = static_cast<int>((rows + chunk - 1) / chunk);
    if (parts < 2) return false;
    SplitUpdate<V> job{*this, variable, chunk};
    return IntraOpPool::instance().try_run(parts, &SplitUpdate<V>::run, &job);
  }
#endif

  /// An optimizer declaring `accumulation_slot` (Momentum) is a detail::SlotAccumulation
  /// (autodiff/fusion_policy.hpp): its update of a fused variable accumulates the gradient into that slot.
  static constexpr bool fuses_into_slot = requires { Opt::accumulation_slot; };
  template <class V>
  auto& accumulation_slot(V&) const {
    return state.template slots_of<V>().slot[Opt::accumulation_slot];
  }
  template <class V>
  HOOKFUSE_FLATTEN void before_backward(V& variable) const {
    auto s = slots(variable);
    optimizer.before_backward(s);
  }
  template <class V>
  HOOKFUSE_FLATTEN void apply_fused(V& variable) const {
    auto value = update_map<V>(variable.value);
    auto s = slots(variable);
    optimizer.apply_fused(value, s);
  }
};

template <class Opt, class GraphT>
class OptimizerSlots;

/// A stateless optimizer: no slots, nothing saved.
template <class Opt, class GraphT>
  requires(!SlotOptimizer<Opt>)
class OptimizerSlots<Opt, GraphT> {
 public:
  static constexpr std::size_t num_checkpoint_variables = 0;
  static constexpr bool fuses_into_slot = false;
  OptimizerSlots(const Opt&, GraphT&) {}
  bool fuse(const Opt&) const { return false; }
  const Opt& bind(const Opt& optimizer) { return optimizer; }
  void finish(const Opt&) {}
  std::array<CheckpointVariable, 0> checkpoint_variables() { return {}; }
  /// No slots: f is never called.
  template <class V, class F>
  void for_each_slot_of(F&&) {}
};

/// An optimizer with slots (SlotOptimizer): their storage, created from the bound graph.
template <class Opt, class GraphT>
  requires SlotOptimizer<Opt>
class OptimizerSlots<Opt, GraphT> {
  using vars = graph_variable_types_t<GraphT>;
  static constexpr std::size_t num_vars = std::tuple_size_v<vars>;
  static constexpr std::size_t num_slots = Opt::slot_names::size;
  static constexpr std::size_t num_non_slots = Opt::non_slot_names::size;

  template <class T>
  struct slots_tuple;
  template <class... Vs>
  struct slots_tuple<std::tuple<Vs...>> {
    using type = std::tuple<VariableSlots<Vs, num_slots>...>;
  };

 public:
  /// The non-slot scalars' type: the scalar of the loss (TF gives them the first variable's).
  using non_slot_scalar = typename GraphT::scalar;
  /// Slots and non-slot scalars saved in a checkpoint.
  static constexpr std::size_t num_checkpoint_variables = num_vars * num_slots + num_non_slots;

  /// Creates every slot with its variable's shape and the optimizer's initial value, and the
  /// non-slot scalars with theirs (Adam: beta1, beta2).
  OptimizerSlots(const Opt& optimizer, GraphT& graph) {
    graph.for_each_variable([&](auto& v) {
      using V = std::remove_cvref_t<decltype(v)>;
      using S = typename V::scalar;
      auto& s = slots_of<V>();
      for (std::size_t k = 0; k < num_slots; ++k) {
        s.slot[k].resize(v.value.rows(), v.value.cols());
        s.slot[k].setConstant(optimizer.template initial_slot_value<S>(k));
      }
    });
    for (std::size_t k = 0; k < num_non_slots; ++k)
      non_slot[k] = optimizer.template initial_non_slot_value<non_slot_scalar>(k);
  }
  OptimizerSlots(const OptimizerSlots&) = delete;
  OptimizerSlots& operator=(const OptimizerSlots&) = delete;

  /// The slots of variable V.
  template <class V>
  VariableSlots<V, num_slots>& slots_of() {
    static_assert(type_index<V, vars>::value < num_vars,
                  "hookfuse: this variable is not in the optimizer's graph");
    return std::get<type_index<V, vars>::value>(slots_);
  }

  /// f(Eigen::Map<V::matrix_type>& slot, std::string_view key) for each slot of variable V, in
  /// slot_names order; key is its checkpoint key ("dense/kernel/Momentum"). No heap.
  template <class V, class F>
  void for_each_slot_of(F&& f) {
    auto& s = slots_of<V>();
    static constexpr auto keys = []<std::size_t... K>(std::index_sequence<K...>) {
      return std::array<std::string_view, num_slots>{
          slot_key<V, typename Opt::slot_names, K>.view()...};
    }(std::make_index_sequence<num_slots>{});
    for (std::size_t k = 0; k < num_slots; ++k) {
      Eigen::Map<typename V::matrix_type> m(s.slot[k].data(), s.slot[k].rows(), s.slot[k].cols());
      f(m, keys[k]);
    }
  }

  /// What Graph::backward and Graph::apply_unfused apply this step.
  SlotUpdate<Opt, OptimizerSlots> bind(const Opt& optimizer) { return {optimizer, *this}; }
  /// The optimizer can fold its update into the backward pass (SlotAccumulation), when
  /// `fuse(optimizer)` says so at run time (Momentum: not with use_nesterov).
  static constexpr bool fuses_into_slot = SlotUpdate<Opt, OptimizerSlots>::fuses_into_slot;
  bool fuse(const Opt& optimizer) const {
    if constexpr (fuses_into_slot) return optimizer.fusable();
    else return false;
  }
  /// After every variable's update (TF's _finish: Adam's beta powers).
  void finish(const Opt& optimizer) { optimizer.finish(non_slot); }

  /// The slots ("<var>/<slot name>", the variable's dtype and TensorFlow shape), variable by
  /// variable in tape order, then the non-slot scalars (rank 0, non_slot_scalar). A slot with a
  /// conflicting slot name carries its key ("W/RMSProp_2") as CheckpointVariable::
  /// conflicting_key, so a restore refuses a checkpoint where the slot meant something else.
  /// No heap.
  std::array<CheckpointVariable, num_checkpoint_variables> checkpoint_variables() {
    std::array<CheckpointVariable, num_checkpoint_variables> out{};
    std::size_t i = 0;
    append_checkpoint_variables(out, i);
    return out;
  }
  /// The same descriptors written into out[i], out[i + 1], ... (i advanced past them): a
  /// session's list is filled in place, without a second array on the stack.
  template <std::size_t N>
  void append_checkpoint_variables(std::array<CheckpointVariable, N>& out, std::size_t& i) {
    static_assert(N >= num_checkpoint_variables);
    [&]<std::size_t... J>(std::index_sequence<J...>) {
      (add_slots<std::tuple_element_t<J, vars>>(out, i, std::make_index_sequence<num_slots>{}),
       ...);
    }(std::make_index_sequence<num_vars>{});
    [&]<std::size_t... K>(std::index_sequence<K...>) {
      ((out[i++] = CheckpointVariable{non_slot_key<typename Opt::non_slot_names, K>.view(),
                                      dtype_of<non_slot_scalar>(), VariableShape{},
                                      static_cast<void*>(&non_slot[K])}),
       ...);
    }(std::make_index_sequence<num_non_slots>{});
  }

  /// The non-slot scalars, in non_slot_names order.
  std::array<non_slot_scalar, num_non_slots> non_slot{};

 private:
  template <class V, std::size_t N, std::size_t... K>
  void add_slots(std::array<CheckpointVariable, N>& out, std::size_t& i,
                 std::index_sequence<K...>) {
    auto& s = slots_of<V>();
    // A loop over constant tables, not one temporary descriptor per slot: -Os keeps each
    // temporary of a fold in its own stack slot.
    static constexpr std::array<std::string_view, num_slots> keys = {
        slot_key<V, typename Opt::slot_names, K>.view()...};
    static constexpr std::array<std::string_view, num_slots> conflicting = {
        conflicting_slot_key<V, Opt, K>()...};
    for (std::size_t k = 0; k < num_slots; ++k) {
      CheckpointVariable& d = out[i++];
      d.name = keys[k];
      d.dtype = dtype_of<typename V::scalar>();
      d.shape = shape_of<V>(s);
      d.data = static_cast<void*>(s.slot[k].data());
      d.optional = false;
      d.conflicting_key = conflicting[k];
      d.conflict_reason = slot_conflict_reason<Opt>();
    }
  }
  template <class V>
  static VariableShape shape_of(VariableSlots<V, num_slots>& s) {
    VariableShape shape;
    shape.rank = V::tf_rank;
    if constexpr (num_slots > 0) {
      const auto rows = static_cast<std::int64_t>(s.slot[0].rows());
      const auto cols = static_cast<std::int64_t>(s.slot[0].cols());
      if constexpr (V::tf_rank == 2) {
        shape.dim_sizes[0] = rows;
        shape.dim_sizes[1] = cols;
      } else if constexpr (V::tf_rank == 1) {
        shape.dim_sizes[0] = cols;
      }
    }
    return shape;
  }

  typename slots_tuple<vars>::type slots_;
};

}  // namespace detail

/// Every variable of a session's checkpoint with an optimizer's slots written into out[i], ...
/// (i advanced past them): the graph's Variables (tape order), the optimizer's slots and
/// non-slot scalars (OptimizerSlots::checkpoint_variables), then "global_step". Fills a
/// caller's array in place, so a session's list costs one array of stack. No heap.
template <std::size_t N, class GraphT, class Slots>
void append_checkpoint_variables(std::array<CheckpointVariable, N>& out, std::size_t& i,
                                 GraphT& graph, Slots& slots, GlobalStep& global_step) {
  constexpr std::size_t n = num_variables_v<GraphT>;
  constexpr std::size_t m = Slots::num_checkpoint_variables;
  static_assert(N >= n + m + 1);
  const std::size_t first = i;
  graph.for_each_variable([&](auto& v) {
    if (i < first + n) detail::assign_checkpoint_variable(out[i++], v);
  });
  if constexpr (m > 0) slots.append_checkpoint_variables(out, i);
  out[i++] = detail::checkpoint_variable(global_step);
}

/// The same list as an array of its own.
template <class GraphT, class Slots>
auto checkpoint_variables(GraphT& graph, Slots& slots, GlobalStep& global_step) {
  std::array<CheckpointVariable, num_variables_v<GraphT> + Slots::num_checkpoint_variables + 1> out{};
  std::size_t i = 0;
  append_checkpoint_variables(out, i, graph, slots, global_step);
  return out;
}

}  // namespace hookfuse
