// hookfuse/estimator/detail/model_variables.hpp: the Variables an expression refers to, found by
// walking its type, and the check that a VariableStore owns each of them.
#pragma once

#include <boost/hana/for_each.hpp>
#include <boost/hana/tuple.hpp>
#include <string>
#include <vector>

#include "hookfuse/autodiff/expr.hpp"
#include "hookfuse/autodiff/summary.hpp"
#include "hookfuse/detail/flat_tuple.hpp"
#include "hookfuse/errors.hpp"
#include "hookfuse/hooks/checkpoint_variables.hpp"
#include "hookfuse/nn/variable_store.hpp"

namespace hookfuse::detail {

/// Every Variable `e` refers to, once each, in first-use order, as checkpoint descriptors;
/// `store` must own each (checked before any variable is read): a variable declared elsewhere,
/// a local of the model_fn above all, would be gone or shared between calls. Throws ValueError
/// naming the variable. Reads no variable's values.
class ModelVariables {
 public:
  explicit ModelVariables(const nn::VariableStoreBase& store) : store_(&store) {}

  template <class E>
  void add(const E& e) {
    if constexpr (requires { typename E::variable_type; }) {
      add_variable(e.var);
    } else if constexpr (requires { typename E::placeholder_type; }) {
      // a placeholder: no variable
    } else if constexpr (requires { typename E::summarized_type; }) {
      add(e.tensor);
    } else if constexpr (requires { e.expr; }) {
      add(e.expr);
    } else if constexpr (requires { e.children; }) {
      flat_apply([this](const auto&... c) { (add(c), ...); }, const_cast<E&>(e).children);
    }
  }
  template <class... Es>
  void add_tuple(const boost::hana::tuple<Es...>& t) {
    boost::hana::for_each(t, [this](const auto& e) { add(e); });
  }

  /// The variables found, then "global_step" when `global_step` is given.
  std::vector<CheckpointVariable> list(GlobalStep* global_step = nullptr) const {
    std::vector<CheckpointVariable> out = vars_;
    if (global_step != nullptr) out.push_back(checkpoint_variable(*global_step));
    return out;
  }

 private:
  template <class V>
  void add_variable(V* v) {
    const void* p = v;
    for (const void* seen : seen_)
      if (seen == p) return;
    if (!store_->owns(p))
      fail<ValueError>("Estimator: the model refers to the Variable '" +
                       std::string(V::name.view()) +
                       "', which its VariableStore does not own: create every variable in the "
                       "store the model_fn receives (vars.variable<\"" +
                       std::string(V::name.view()) +
                       "\", ...>() or vars.layer<...>()), not as a local of the model_fn, "
                       "which is gone when the model runs");
    seen_.push_back(p);
    vars_.push_back(checkpoint_variable(*v));
  }

  const nn::VariableStoreBase* store_;
  std::vector<const void*> seen_;
  std::vector<CheckpointVariable> vars_;
};

}  // namespace hookfuse::detail
