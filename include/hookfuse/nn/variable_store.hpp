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

/// Owns the variables, layers and global step of one model, at addresses that stay fixed until
/// the store is destroyed (like the variable store of a TensorFlow 1.x graph: get_variable
/// creates a variable there once and returns it again under the same name).
///
///     nn::VariableStore vars;
///     auto& W = vars.variable<"W", float, 1, 1>();          // tf.compat.v1.get_variable("W", [1,
///     1]) auto& hidden = vars.layer<nn::Dense<"dense", float, 784, 256>>();  //
///     tf.layers.Dense(256) auto y = hidden(x);                                  // refers to the
///     store's variables
///
/// Creating an object allocates (once, when the model is built; a training step never does).
/// Not copyable or movable: expressions hold the addresses of what it owns.
class VariableStore {
 public:
  VariableStore() = default;
  VariableStore(const VariableStore&) = delete;
  VariableStore& operator=(const VariableStore&) = delete;

  /// The variable `Name`, [R, C] of Scalar with TensorFlow rank Rank (autodiff/variable.hpp),
  /// created on first use with `init` (TensorFlow's default for get_variable: glorot_uniform,
  /// seeded from the name; nn/initializers.hpp) and returned again by later calls with the
  /// same name (TF: reuse=AUTO_REUSE). Throws ValueError when `Name` already names an object of
  /// another type (TF: "Trying to share variable W, but specified shape ...").
  template <fixed_string Name, class Scalar, int R, int C, int Rank = 2,
            class Init = glorot_uniform>
  requires(R != Dynamic && C != Dynamic) Variable<Name, Scalar, R, C, Rank>
  &variable(Init init = {}) {
    using V = Variable<Name, Scalar, R, C, Rank>;
    if (V* found = find<V>(Name.view())) return *found;
    V& v = emplace<V>(Name.view());
    if constexpr (requires { init.seed; }) {
      if (!init.seed && seed)
        init.seed = seed_from_name(Name.view()) ^ (*seed * 0x9E3779B97F4A7C15ULL);
    }
    detail::initialize(init, v.value, Name.view());
    return v;
  }

  /// The layer (or any object) of type T under `name`, created on first use from `args` and
  /// returned again (args ignored) by later calls with the same name and type:
  /// `vars.layer<nn::Dense<"dense", float, 4, 8>>()`. A type with a static `name` (no layer
  /// has one today) may leave `name` empty. Throws ValueError when `name` already names an
  /// object of another type.
  template <class T, class... Args>
  T& layer(std::string_view name, Args&&... args) {
    if (T* found = find<T>(name)) return *found;
    return emplace<T>(name, std::forward<Args>(args)...);
  }

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

 private:
  struct Entry {
    std::string name;
    const std::type_info* type;
    std::unique_ptr<void, void (*)(void*)> object;
    std::size_t size;
  };

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

  GlobalStep global_step_{};
  std::vector<Entry> entries_;
};

}  // namespace hookfuse::nn
