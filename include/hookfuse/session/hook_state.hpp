// hookfuse/session/hook_state.hpp: the hooks' resumable state in a session's checkpoint (issue 11
// point 5): every field a hook declares (hooks/checkpoint_state.hpp) becomes a scalar checkpoint
// variable "hooks/<hook name>/<field>", saved with the model and restored with it.
//
// Keys: <hook name> is the hook type's checkpoint_name; the second hook with the same name in
// one session is "<name>_1", the third "<name>_2", ... in hook order (TensorFlow's rule for
// layer names: dense, dense_1). Every key is a compile-time string: building the list allocates
// nothing. The descriptors are `optional`: restoring a checkpoint written without them (before
// the hook was added, or by an older version) leaves the hook's state as begin() set it.
// Hooks inside a ConditionalHook (chief-only hooks) are not looked into.
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
#include "hookfuse/hooks/checkpoint_state.hpp"
#include "hookfuse/hooks/concepts.hpp"
#include "hookfuse/session/checkpoint_variables.hpp"

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

  /// One descriptor per field (int64 / float64, shape [], optional), hook by hook in hook
  /// order, fields in the order checkpoint_state() lists them. No heap.
  static std::array<CheckpointVariable, size> variables(boost::hana::tuple<Hs...>& hooks) {
    std::array<CheckpointVariable, size> out{};
    std::size_t i = 0;
    [&]<std::size_t... I>(std::index_sequence<I...>) { (add<I>(hooks, out, i), ...); }
    (std::index_sequence_for<Hs...>{});
    return out;
  }

 private:
  template <std::size_t I>
  static void add(boost::hana::tuple<Hs...>& hooks, std::array<CheckpointVariable, size>& out,
                  std::size_t& i) {
    using H = std::tuple_element_t<I, types>;
    if constexpr (HasCheckpointState<H>) {
      auto fields = hook_ref(boost::hana::at_c<I>(hooks)).checkpoint_state();
      std::apply([&](auto... f) { (add_field<H, I>(f, out, i), ...); }, fields);
    } else {
      (void)hooks;
      (void)out;
      (void)i;
    }
  }
  template <class H, std::size_t I, fixed_string Name, class T>
  static void add_field(StateField<Name, T> f, std::array<CheckpointVariable, size>& out,
                        std::size_t& i) {
    out[i++] =
        CheckpointVariable{hook_state_key<H::checkpoint_name, occurrence<I>(), Name>.view(),
                           dtype_of<T>(), VariableShape{}, static_cast<void*>(f.value), true};
  }
};

}  // namespace detail

/// `vars` (a session's checkpoint_variables) followed by the hooks' state fields
/// (detail::HookState). No heap.
template <std::size_t N, class Hooks>
auto with_hook_state(const std::array<CheckpointVariable, N>& vars, Hooks& hooks) {
  using S = detail::HookState<Hooks>;
  std::array<CheckpointVariable, N + S::size> out{};
  for (std::size_t i = 0; i < N; ++i) out[i] = vars[i];
  if constexpr (S::size > 0) {
    const auto extra = S::variables(hooks);
    for (std::size_t i = 0; i < S::size; ++i) out[N + i] = extra[i];
  }
  return out;
}

}  // namespace hookfuse
