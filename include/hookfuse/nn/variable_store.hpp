// hookfuse/nn/variable_store.hpp: VariableStore, the owner of the variables and layers a model
// function creates (TensorFlow 1.x's variable store behind tf.compat.v1.get_variable).
//
// A model's expressions refer to its Variables by address (autodiff/expr.hpp: VarRef), so a
// function that builds a model and returns it (an Estimator's model_fn) cannot declare them as
// locals: they would be gone when the expressions are used. It creates them in a store instead,
// which keeps each at one address for the store's lifetime and hands out references.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <string_view>
#include <typeinfo>
#include <utility>
#include <vector>

#include "hookfuse/autodiff/variable.hpp"
#include "hookfuse/detail/check.hpp"
#include "hookfuse/errors.hpp"
#include "hookfuse/fixed_string.hpp"
#include "hookfuse/nn/initializers.hpp"
#include "hookfuse/optim/global_step.hpp"

namespace hookfuse::nn {

/// What every variable store has, whatever kind of variables it makes: the objects it owns at
/// fixed addresses, the global step, the seed, and owns(). Not copyable or movable:
/// expressions hold the addresses of what it owns.
class VariableStoreBase {
 public:
  VariableStoreBase() = default;
  VariableStoreBase(const VariableStoreBase&) = delete;
  VariableStoreBase& operator=(const VariableStoreBase&) = delete;

  /// The graph-level seed (TF: tf_random_seed, RunConfig's): when set, a random initializer
  /// without its own seed in variable() draws from seed_from_name(name) mixed with it, so a
  /// new seed gives new initial values; unset, from seed_from_name(name) alone.
  std::optional<std::uint64_t> seed;

  /// The model's global step (TF: tf.compat.v1.train.get_or_create_global_step()), created
  /// with the store at 0.
  GlobalStep& global_step() { return global_step_; }
  const GlobalStep& global_step() const { return global_step_; }

  /// True when `p` points into an object this store owns (or its global step): how the
  /// Estimator refuses a model whose expressions refer to a variable that lives elsewhere.
  bool owns(const void* p) const {
    const std::less<const void*> before;
    const auto inside = [&](const void* first, std::size_t size) {
      const void* last = static_cast<const char*>(first) + size;
      return !before(p, first) && before(p, last);
    };
    if (inside(&global_step_, sizeof global_step_)) return true;
    for (const Entry& e : entries_)
      if (inside(e.object.get(), e.size)) return true;
    return false;
  }

  /// Names of the objects created, in creation order.
  std::vector<std::string> names() const {
    std::vector<std::string> out;
    out.reserve(entries_.size());
    for (const Entry& e : entries_) out.push_back(e.name);
    return out;
  }

 protected:
  ~VariableStoreBase() = default;

  template <class T>
  T* find(std::string_view name) {
    for (Entry& e : entries_) {
      if (e.name != name) continue;
      if (*e.type != typeid(T))
        hookfuse::detail::fail<ValueError>(
            (hookfuse::detail::ErrorMessage()
             << "VariableStore: '" << name
             << "' already names an object of another type (a variable or layer of another "
                "scalar type, shape or kind); expected one name per object")
                .str());
      return static_cast<T*>(e.object.get());
    }
    return nullptr;
  }

  template <class T, class... Args>
  T& emplace(std::string_view name, Args&&... args) {
    std::unique_ptr<void, void (*)(void*)> object(new T(std::forward<Args>(args)...),
                                                  [](void* q) { delete static_cast<T*>(q); });
    T* typed = static_cast<T*>(object.get());
    entries_.push_back(Entry{std::string(name), &typeid(T), std::move(object), sizeof(T)});
    return *typed;
  }

 private:
  struct Entry {
    std::string name;
    const std::type_info* type;
    std::unique_ptr<void, void (*)(void*)> object;
    std::size_t size;
  };

  GlobalStep global_step_{};
  std::vector<Entry> entries_;
};

namespace detail {
/// T as a store of kind `Grad` holds it: T::with_gradients<Grad> when T has one (nn::Dense),
/// else T (a metric, any object without variables).
template <class T, bool Grad>
struct store_object {
  using type = T;
};
template <class T, bool Grad>
  requires requires { typename T::template with_gradients<Grad>; }
struct store_object<T, Grad> {
  using type = typename T::template with_gradients<Grad>;
};
}  // namespace detail

/// Owns the variables, layers and global step of one model, at addresses that stay fixed until
/// the store is destroyed (like the variable store of a TensorFlow 1.x graph: get_variable
/// creates a variable there once and returns it again under the same name).
///
///     nn::VariableStore vars;
///     auto& W = vars.variable<"W", float, 1, 1>();      // tf.compat.v1.get_variable("W", [1, 1])
///     auto& hidden = vars.layer<nn::Dense<"dense", float, 784, 256>>();  // tf.layers.Dense(256)
///     auto y = hidden(x);                               // refers to the store's variables
///
/// `Grad` is the kind of variables it makes: VariableStore (true) makes Variables, with a
/// gradient matrix each, for a model that trains; ForwardVariableStore (false) makes
/// ForwardVariables, without one, for a model that only evaluates or predicts (what an
/// Estimator hands a model_fn in EVAL and PREDICT when it takes the store as `auto& vars`).
/// The same calls give the same names, shapes, initial values and checkpoint keys in both.
/// Creating an object allocates (once, when the model is built; a training step never does).
template <bool Grad>
class BasicVariableStore : public VariableStoreBase {
 public:
  /// The variable type variable<Name, Scalar, R, C, Rank>() returns.
  template <fixed_string Name, class Scalar, int R, int C, int Rank = 2>
  using variable_type =
      BasicVariable<hookfuse::detail::packed_name_t<Name>, Scalar, R, C, Rank, Grad>;

  /// The variable `Name`, [R, C] of Scalar with TensorFlow rank Rank (autodiff/variable.hpp),
  /// created on first use with `init` (TensorFlow's default for get_variable: glorot_uniform,
  /// seeded from the name; nn/initializers.hpp) and returned again by later calls with the
  /// same name (TF: reuse=AUTO_REUSE). Throws ValueError when `Name` already names an object of
  /// another type (TF: "Trying to share variable W, but specified shape ...").
  template <fixed_string Name, class Scalar, int R, int C, int Rank = 2,
            class Init = glorot_uniform>
    requires(R != Dynamic && C != Dynamic)
  variable_type<Name, Scalar, R, C, Rank>& variable(Init init = {}) {
    using V = variable_type<Name, Scalar, R, C, Rank>;
    if (V* found = find<V>(Name.view())) return *found;
    V& v = emplace<V>(Name.view());
    if constexpr (requires { init.seed; }) {
      if (!init.seed && seed)
        init.seed = seed_from_name(Name.view()) ^ (*seed * 0x9E3779B97F4A7C15ULL);
    }
    hookfuse::nn::detail::initialize(init, v.value, Name.view());
    return v;
  }

  /// The variable type variable<Name, Scalar, Rank>(rows, cols) returns: [Dynamic, Dynamic] for
  /// rank 2, [1, Dynamic] for rank 1 (a bias, TF shape [cols]).
  template <fixed_string Name, class Scalar, int Rank = 2>
  using dynamic_variable_type =
      BasicVariable<hookfuse::detail::packed_name_t<Name>, Scalar, Rank == 2 ? Dynamic : 1,
                    Dynamic, Rank, Grad>;

  /// The variable `Name` with a shape known at run time, [rows, cols] of Scalar
  /// (tf.compat.v1.get_variable(name, shape=[rows, cols], initializer=init)); Rank 1 is TF shape
  /// [cols], kept as one row (`rows` must be 1). Created on first use with `init` (default
  /// glorot_uniform seeded from the name, mixed with the store's seed as in the fixed-shape
  /// form) and returned again by later calls with the same name and shape (TF: reuse=AUTO_REUSE;
  /// `init` is then not applied). Throws ValueError for a dimension < 1 or a rank-1 variable with
  /// rows != 1, naming the variable and the shape; for a later call whose shape differs (TF:
  /// "Trying to share variable weights, but specified shape (784, 128) and found shape (784,
  /// 256)."); and when `Name` already names an object of another type (a fixed-shape variable,
  /// another scalar type or rank).
  template <fixed_string Name, class Scalar, int Rank = 2, class Init = glorot_uniform>
    requires(Rank == 1 || Rank == 2)
  dynamic_variable_type<Name, Scalar, Rank>& variable(Index rows, Index cols, Init init = {}) {
    using V = dynamic_variable_type<Name, Scalar, Rank>;
    if (rows < 1 || cols < 1 || (Rank == 1 && rows != 1))
      hookfuse::detail::fail<ValueError>(
          (hookfuse::detail::ErrorMessage()
           << "get_variable: variable '" << Name.view() << "' has shape [" << rows << ", " << cols
           << "]: every dimension must be >= 1" << (Rank == 1 ? " and rows 1 (rank 1: [cols])" : ""))
              .str());
    if (V* found = find<V>(Name.view())) {
      if (found->value.rows() != rows || found->value.cols() != cols)
        hookfuse::detail::fail<ValueError>(
            (hookfuse::detail::ErrorMessage()
             << "get_variable: Trying to share variable " << Name.view()
             << ", but specified shape [" << rows << ", " << cols << "] and found shape ["
             << found->value.rows() << ", " << found->value.cols() << "].")
                .str());
      return *found;
    }
    V& v = emplace<V>(Name.view(), rows, cols);
    if constexpr (requires { init.seed; }) {
      if (!init.seed && seed)
        init.seed = seed_from_name(Name.view()) ^ (*seed * 0x9E3779B97F4A7C15ULL);
    }
    hookfuse::nn::detail::initialize(init, v.value, Name.view());
    return v;
  }

  /// The layer (or any object) of type T under `name`, created on first use from `args` and
  /// returned again (args ignored) by later calls with the same name and type:
  /// `vars.layer<nn::Dense<"dense", float, 4, 8>>()`. A layer with variables is made in this
  /// store's kind (T::with_gradients<Grad>: a Dense without gradient matrices in a
  /// ForwardVariableStore). A type with a static `name` (no layer has one today) may leave
  /// `name` empty. Throws ValueError when `name` already names an object of another type.
  template <class T, class... Args>
  typename detail::store_object<T, Grad>::type& layer(std::string_view name, Args&&... args) {
    using U = typename detail::store_object<T, Grad>::type;
    if (U* found = find<U>(name)) return *found;
    return emplace<U>(name, std::forward<Args>(args)...);
  }
};

/// tf.compat.v1.get_variable: vars.variable<Name, Scalar, R, C, Rank>(init) as a free function,
/// for a store whose type is a template parameter (a model_fn's `auto& vars`), where the member
/// call would need to be spelled `vars.template variable<...>()`, as std::get is to tuples:
///
///     auto& W = nn::get_variable<"W", float, 1, 1>(vars);             // glorot_uniform
///     auto& b = nn::get_variable<"b", float, 1, 1, 1>(vars, nn::zeros{});
template <fixed_string Name, class Scalar, int R, int C, int Rank = 2, bool G,
          class Init = glorot_uniform>
  requires(R != Dynamic && C != Dynamic)
auto& get_variable(BasicVariableStore<G>& vars, Init init = {}) {
  return vars.template variable<Name, Scalar, R, C, Rank>(std::move(init));
}

/// tf.compat.v1.get_variable(name, shape=[rows, cols], initializer=init) with a run-time shape:
/// vars.variable<Name, Scalar, Rank>(rows, cols, init) as a free function (see above for the
/// reuse rule and the errors):
///
///     auto& w = nn::get_variable<"weights", float>(vars, 784, 256, nn::truncated_normal{});
///     auto& b = nn::get_variable<"biases", float, 1>(vars, 1, 256, nn::zeros{});  // TF [256]
template <fixed_string Name, class Scalar, int Rank = 2, bool G, class Init = glorot_uniform>
  requires(Rank == 1 || Rank == 2)
auto& get_variable(BasicVariableStore<G>& vars, Index rows, Index cols, Init init = {}) {
  return vars.template variable<Name, Scalar, Rank>(rows, cols, std::move(init));
}

/// vars.layer<T>(name, args...) as a free function (see get_variable):
/// `auto& dense = nn::get_layer<nn::Dense<"dense", float, 784, 256>>(vars, "dense");`.
template <class T, bool G, class... Args>
auto& get_layer(BasicVariableStore<G>& vars, std::string_view name, Args&&... args) {
  return vars.template layer<T>(name, std::forward<Args>(args)...);
}

/// The store of a model that trains (see BasicVariableStore).
using VariableStore = BasicVariableStore<true>;
/// The store of a forward-only model: its variables hold no gradient (see BasicVariableStore).
using ForwardVariableStore = BasicVariableStore<false>;

}  // namespace hookfuse::nn
