// hookfuse/hooks/checkpoint_variables.hpp: the variables a checkpoint holds, with the names,
// dtypes and TensorFlow shapes they are saved under (what tf.train.list_variables reports).
//
// A Saver never sees Variable types: it receives a list of CheckpointVariable descriptors (name,
// dtype, TensorFlow shape, pointer to the values), built without a heap from a bound graph and
// the global step. The list points into the variables themselves, so restoring writes them.
#pragma once

#include <array>
#include <cassert>
#include <cstddef>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>

#include "hookfuse/config.hpp"
#include "hookfuse/detail/format.hpp"
#include "hookfuse/hooks/session_run_hook.hpp"
#include "hookfuse/optim/global_step.hpp"

namespace hookfuse {

/// TensorFlow's name of a dtype as `tf.as_dtype(...).name` prints it: "float32", "float64",
/// "int32", "int64".
constexpr std::string_view dtype_name(DType d) {
  switch (d) {
    case DType::float32: return "float32";
    case DType::float64: return "float64";
    case DType::int32: return "int32";
    case DType::int64: return "int64";
  }
  return "unknown";
}

/// A variable's TensorFlow shape (a tf.TensorShape) of rank 0 to max_rank, held without a heap:
/// `dims()` are the dimension sizes, outermost first; rank 0 (no dims) is a scalar, one element.
/// io::TensorShape (hookfuse/io/tensor_shape.hpp) is the checkpoint layer's heap-backed twin:
/// `io::TensorShape(shape.dims())` converts.
struct VariableShape {
  static constexpr int max_rank = 4;
  int rank = 0;
  std::array<std::int64_t, max_rank> dim_sizes{};

  /// The dimension sizes, [rank] values.
  constexpr std::span<const std::int64_t> dims() const {
    return {dim_sizes.data(), static_cast<std::size_t>(rank)};
  }
  /// The product of the dims (1 for a scalar).
  constexpr std::int64_t num_elements() const {
    std::int64_t n = 1;
    for (std::int64_t d : dims()) n *= d;
    return n;
  }
  constexpr bool operator==(const VariableShape& o) const {
    if (rank != o.rank) return false;
    for (int i = 0; i < rank; ++i)
      if (dim_sizes[static_cast<std::size_t>(i)] != o.dim_sizes[static_cast<std::size_t>(i)])
        return false;
    return true;
  }
};

/// One tensor of a checkpoint, as the session's variables hold it: the checkpoint key (the
/// variable's name, "dense/kernel"), its dtype (float32, float64 or int64), its TensorFlow shape
/// ([In, Out] for a kernel, [n] for a bias stored as [1, n], [] for global_step) and its values,
/// shape.num_elements() of them, contiguous in row-major (C) order, as a tensor bundle stores
/// them. `data` points into the variable itself: writing through it (a restore) changes the
/// model. Valid as long as the variable lives. `optional`: a restore from a checkpoint without
/// this key leaves the value alone instead of failing (hook state, session/hook_state.hpp, which
/// older checkpoints lack); a saved checkpoint always holds it. `conflicting_key`: when not
/// empty, a checkpoint holding that key stores something else under `name`, and a restore
/// refuses it, naming both keys and giving `conflict_reason` (a plain RMSProp's momentum slot
/// "W/RMSProp_1" is a centered RMSProp's mean gradient, and only the centered one saves
/// "W/RMSProp_2"; set by OptimizerSlots). Both point to static storage.
struct CheckpointVariable {
  std::string_view name;
  DType dtype = DType::float32;
  VariableShape shape;
  void* data = nullptr;
  bool optional = false;
  std::string_view conflicting_key = {};
  std::string_view conflict_reason = {};

  std::int64_t num_elements() const { return shape.num_elements(); }

  /// The values as a span of T (T or const T, the variable's element type). Throws
  /// std::invalid_argument naming the variable and both dtypes when T is another type.
  template <class T>
  std::span<T> values() const {
    using U = std::remove_const_t<T>;
    static_assert(std::is_same_v<U, float> || std::is_same_v<U, double> ||
                      std::is_same_v<U, std::int32_t> || std::is_same_v<U, std::int64_t>,
                  "hookfuse: CheckpointVariable::values<T>: T is float, double, std::int32_t or "
                  "std::int64_t");
    if (detail::dtype_of<U>() != dtype)
      detail::fail<std::invalid_argument>(
          (detail::ErrorMessage() << "hookfuse: checkpoint variable '" << name << "' is "
                                  << dtype_name(dtype) << ", not "
                                  << dtype_name(detail::dtype_of<U>()))
              .str());
    return {static_cast<T*>(data), static_cast<std::size_t>(num_elements())};
  }
};

/// The list a Saver receives: every variable to save or restore, each once.
using VariableList = std::span<const CheckpointVariable>;

/// Room for N descriptors, of which the first size() are in use: a session's variable list when
/// some of its hooks may be absent (session/hook_state.hpp: a ConditionalHook left empty saves
/// and restores nothing). Contiguous, so `VariableList(vars.data(), vars.size())` views it. No
/// heap.
template <std::size_t N>
struct VariableArray {
  std::array<CheckpointVariable, N> items{};
  std::size_t count = 0;

  static constexpr std::size_t capacity() { return N; }
  constexpr std::size_t size() const { return count; }
  constexpr bool empty() const { return count == 0; }
  constexpr const CheckpointVariable* data() const { return items.data(); }
  constexpr const CheckpointVariable* begin() const { return items.data(); }
  constexpr const CheckpointVariable* end() const { return items.data() + count; }
  /// Descriptor i, i < size() (checked in debug builds).
  constexpr const CheckpointVariable& operator[](std::size_t i) const {
    assert(i < count);
    return items[i];
  }
  constexpr const CheckpointVariable& front() const { return (*this)[0]; }
  constexpr const CheckpointVariable& back() const { return (*this)[count - 1]; }
  /// Appends one (at most N in all; checked in debug builds).
  constexpr void push_back(const CheckpointVariable& v) {
    assert(count < N);
    items[count++] = v;
  }
};

namespace detail {

/// The descriptor of one Variable (its name, dtype, TensorFlow shape from Variable::tf_rank, and
/// values), written into `d` in place: a list is filled without a temporary per variable.
template <class V>
void assign_checkpoint_variable(CheckpointVariable& d, V& v) {
  d = CheckpointVariable{};
  d.name = V::name.view();
  d.dtype = dtype_of<typename V::scalar>();
  d.shape.rank = V::tf_rank;
  const auto rows = static_cast<std::int64_t>(v.value.rows());
  const auto cols = static_cast<std::int64_t>(v.value.cols());
  if constexpr (V::tf_rank == 2) {
    d.shape.dim_sizes[0] = rows;
    d.shape.dim_sizes[1] = cols;
  } else if constexpr (V::tf_rank == 1) {
    d.shape.dim_sizes[0] = cols;  // stored as one row, [1, cols]
  }
  d.data = static_cast<void*>(v.value.data());
}
/// The descriptor of one Variable, as a value.
template <class V>
CheckpointVariable checkpoint_variable(V& v) {
  CheckpointVariable d;
  assign_checkpoint_variable(d, v);
  return d;
}

/// global_step: int64 of shape [] (rank 0), TensorFlow's global step variable.
inline CheckpointVariable checkpoint_variable(GlobalStep& step) {
  return {"global_step", DType::int64, VariableShape{}, static_cast<void*>(&step.value)};
}

/// The variables a warm start sets: the model's, without the trailing "global_step" of a
/// session's variable list (Estimator warm-starts trainable variables only, so a warm-started
/// run starts at step 0).
inline VariableList warm_start_variables(VariableList vars) {
  if (!vars.empty() && vars.back().name == "global_step") return vars.first(vars.size() - 1);
  return vars;
}

template <class Entries, std::size_t... I>
constexpr std::size_t count_variables(std::index_sequence<I...>) {
  return (std::size_t{requires { typename std::tuple_element_t<I, Entries>::variable_type; }} +
          ... + 0);
}

}  // namespace detail

/// How many Variables a bound graph type holds (each once, whatever its number of uses).
template <class GraphT>
inline constexpr std::size_t num_variables_v = detail::count_variables<typename GraphT::entries_type>(
    std::make_index_sequence<std::tuple_size_v<typename GraphT::entries_type>>{});

/// Every Variable of a bound graph (the loss's graph and the extra fetches bound with it), each
/// once, in tape order (stable for a given model), as checkpoint descriptors. No heap.
template <class GraphT>
std::array<CheckpointVariable, num_variables_v<GraphT>> graph_variables(GraphT& graph) {
  std::array<CheckpointVariable, num_variables_v<GraphT>> out{};
  std::size_t i = 0;
  graph.for_each_variable([&](auto& v) {
    if (i < out.size()) out[i++] = detail::checkpoint_variable(v);
  });
  return out;
}

/// What a session's checkpoint holds (tf.compat.v1.train.Saver's default var_list): every
/// Variable of the graph (graph_variables, in tape order) followed by "global_step" (int64, []).
template <class GraphT>
std::array<CheckpointVariable, num_variables_v<GraphT> + 1> checkpoint_variables(
    GraphT& graph, GlobalStep& global_step) {
  std::array<CheckpointVariable, num_variables_v<GraphT> + 1> out{};
  const auto vars = graph_variables(graph);
  for (std::size_t i = 0; i < vars.size(); ++i) out[i] = vars[i];
  out[vars.size()] = detail::checkpoint_variable(global_step);
  return out;
}

}  // namespace hookfuse
