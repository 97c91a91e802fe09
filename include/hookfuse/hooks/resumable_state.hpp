// hookfuse/hooks/resumable_state.hpp: how a hook declares state worth resuming (issue 11 point
// 5): named int64 / double scalars the session saves with the model under
// "hooks/<hook name>/<field>" and restores from a checkpoint (session/hook_state.hpp).
// (Not io/checkpoint_state.hpp, which is TensorFlow's `checkpoint` state file of a directory.)
#pragma once

#include <cstdint>
#include <tuple>
#include <type_traits>

#include "hookfuse/fixed_string.hpp"

namespace hookfuse {

/// One scalar of a hook's resumable state: the field name `Name` ("wait") and a pointer to the
/// hook's member (std::int64_t, saved as int64 of shape [], or double, float64 of shape []).
template <fixed_string Name, class T>
struct StateField {
  static_assert(std::is_same_v<T, std::int64_t> || std::is_same_v<T, double>,
                "hookfuse: a hook's checkpoint state field is std::int64_t or double");
  static constexpr auto name = Name;
  T* value;
};

/// `state_field<"wait">(wait_)`: the field of checkpoint_state() naming member `wait_`.
template <fixed_string Name, class T>
constexpr StateField<Name, T> state_field(T& member) {
  return {&member};
}

/// A hook with resumable state: a static `checkpoint_name` (fixed_string, the <hook name> of the
/// keys, "EarlyStoppingHook") and `checkpoint_state()` returning a std::tuple of StateField
/// (pointers into the hook, so restoring writes the hook). The session restores the fields
/// after every hook's begin() and before any after_create_session, so begin() resets state and
/// after_create_session sees the restored values. A hook may also have
/// `bool checkpoint_state_present() const`: while it returns false the session leaves the
/// hook's fields out of its checkpoints (ConditionalHook when empty).
///
///     static constexpr fixed_string checkpoint_name = "MyHook";
///     auto checkpoint_state() { return std::tuple(state_field<"count">(count_)); }
template <class H>
concept HasCheckpointState = requires(H& h) {
  {H::checkpoint_name.view()};
  {std::tuple_size<std::remove_cvref_t<decltype(h.checkpoint_state())>>::value};
};

}  // namespace hookfuse
