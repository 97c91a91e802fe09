// hookfuse/session/hook_state.hpp: the hooks' resumable state in a session's checkpoint (issue 11
// point 5): every field a hook declares (hooks/resumable_state.hpp) becomes a scalar checkpoint
// variable "hooks/<hook name>/<field>", saved with the model and restored with it.
//
// Keys: <hook name> is the hook type's checkpoint_name; the second hook with the same name in
// one session is "<name>_1", the third "<name>_2", ... in hook order (TensorFlow's rule for
// layer names: dense, dense_1). Every key is a compile-time string: building the list allocates
// nothing. The descriptors are `optional`: restoring a checkpoint written without them (before
// the hook was added, or by an older version) leaves the hook's state as begin() set it.
// A hook inside a ConditionalHook (a chief-only hook) has its fields when present; when absent
// they are left out of the list, so nothing is saved under them and a restore leaves them alone.
// An absent hook still counts for the "_<k>" suffixes: the keys do not depend on which
// conditional hooks a run installs.
#pragma once

#include <array>
#include <boost/hana/at.hpp>
#include <boost/hana/tuple.hpp>
#include <cstddef>
#include <cstdint>
#include <tuple>
#include <type_traits>
#include <utility>

#include "hookfuse/fixed_string.hpp"
#include "hookfuse/hooks/checkpoint_variables.hpp"
#include "hookfuse/hooks/concepts.hpp"
#include "hookfuse/hooks/resumable_state.hpp"

namespace hookfuse {
namespace detail {

constexpr std::size_t decimal_digits(std::size_t k) {
  std::size_t n = 1;
  while (k >= 10) {
    k /= 10;
    ++n;
  }
  return n;
}

/// "" for the first hook of a name, "_<k>" for the (k+1)-th.
template <std::size_t K>
constexpr auto occurrence_suffix() {
  if constexpr (K == 0) {
    return fixed_string("");
  } else {
    constexpr std::size_t d = decimal_digits(K);
    fixed_string<d + 2> out;  // '_', d digits, '\0'
    out.data[0] = '_';
    std::size_t v = K;
    for (std::size_t i = d; i > 0; --i) {
      out.data[i] = static_cast<char>('0' + v % 10);
      v /= 10;
    }
    return out;
  }
}

/// "hooks/<Hook><suffix K>/<Field>".
template <fixed_string Hook, std::size_t K, fixed_string Field>
inline constexpr auto hook_state_key = concat(
    concat(concat(concat(fixed_string("hooks/"), Hook), occurrence_suffix<K>()), fixed_string("/")),
    Field);

template <class H>
constexpr std::size_t num_state_fields() {
  if constexpr (HasCheckpointState<H>)
    return std::tuple_size_v<std::remove_cvref_t<decltype(std::declval<H&>().checkpoint_state())>>;
  else
    return 0;
}

template <class A, class B>
constexpr std::size_t same_checkpoint_name() {
  if constexpr (HasCheckpointState<A> && HasCheckpointState<B>)
    return A::checkpoint_name.view() == B::checkpoint_name.view() ? 1 : 0;
  else
    return 0;
}

template <class Hooks>
struct HookState;

/// The state fields of a session's hooks (boost::hana::tuple<Hs...>, std::ref elements too).
template <class... Hs>
struct HookState<boost::hana::tuple<Hs...>> {
  using types = std::tuple<hook_t<Hs>...>;
  /// How many scalars the hooks declare, all hooks together.
  static constexpr std::size_t size = (num_state_fields<hook_t<Hs>>() + ... + 0);

  /// How many hooks before hook I have its checkpoint_name (its key suffix).
  template <std::size_t I>
  static constexpr std::size_t occurrence() {
    using H = std::tuple_element_t<I, types>;
    return []<std::size_t... J>(std::index_sequence<J...>) {
      return (same_checkpoint_name<H, std::tuple_element_t<J, types>>() + ... + 0);
    }
    (std::make_index_sequence<I>{});
  }

  /// One descriptor per field (int64 / float64, shape [], optional) appended to `out`, hook by
  /// hook in hook order, fields in the order checkpoint_state() lists them; a hook whose
  /// checkpoint_state_present() is false (an empty ConditionalHook) adds none. No heap.
  template <class Out>
  static void append_variables(boost::hana::tuple<Hs...>& hooks, Out& out) {
    [&]<std::size_t... I>(std::index_sequence<I...>) { (add<I>(hooks, out), ...); }
    (std::index_sequence_for<Hs...>{});
  }

 private:
  template <std::size_t I, class Out>
  static void add(boost::hana::tuple<Hs...>& hooks, Out& out) {
    using H = std::tuple_element_t<I, types>;
    if constexpr (HasCheckpointState<H>) {
      auto& hook = hook_ref(boost::hana::at_c<I>(hooks));
      if constexpr (requires { hook.checkpoint_state_present(); })
        if (!hook.checkpoint_state_present()) return;
      auto fields = hook.checkpoint_state();
      std::apply([&](auto... f) { (add_field<H, I>(f, out), ...); }, fields);
    } else {
      (void)hooks;
      (void)out;
    }
  }
  template <class H, std::size_t I, fixed_string Name, class T, class Out>
  static void add_field(StateField<Name, T> f, Out& out) {
    out.push_back(
        CheckpointVariable{hook_state_key<H::checkpoint_name, occurrence<I>(), Name>.view(),
                           dtype_of<T>(), VariableShape{}, static_cast<void*>(f.value), true});
  }
};

}  // namespace detail

/// `vars` (a session's checkpoint_variables) followed by the state fields of the hooks present
/// (detail::HookState), in a VariableArray with room for every hook's fields. No heap.
template <std::size_t N, class Hooks>
VariableArray<N + detail::HookState<Hooks>::size> with_hook_state(
    const std::array<CheckpointVariable, N>& vars, Hooks& hooks) {
  using S = detail::HookState<Hooks>;
  VariableArray<N + S::size> out;
  for (const CheckpointVariable& v : vars) out.push_back(v);
  if constexpr (S::size > 0) S::append_variables(hooks, out);
  return out;
}

}  // namespace hookfuse
