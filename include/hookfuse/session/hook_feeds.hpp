// hookfuse/session/hook_feeds.hpp: the feeds hooks return from before_run
// (SessionRunArgsWithFeeds, TensorFlow's SessionRunArgs(fetches, feed_dict)), as a session
// checks them at compile time and applies them in a step.
//
// TensorFlow's _HookedSession merges the hooks' feed_dicts and raises RuntimeError "Same tensor
// is fed by two hooks." when two of them feed one tensor, and "Same tensor is fed by a
// SessionRunHook and user." when a hook and the caller's feed_dict do. The names are static
// here, so both are compile errors naming the placeholder. A hook feed of a placeholder that the
// session's input object also feeds replaces the input's feed for that run (TF: a feed_dict
// entry replaces any tensor's value, an input pipeline's included).
#pragma once

#include <array>
#include <cstddef>
#include <string_view>
#include <tuple>
#include <type_traits>

#include "hookfuse/autodiff/feeds.hpp"
#include "hookfuse/fixed_string.hpp"
#include "hookfuse/hooks/concepts.hpp"
#include "hookfuse/hooks/session_run_hook.hpp"

namespace hookfuse::detail {

/// The placeholder names a before_run result feeds (none for a plain SessionRunArgs).
template <class Args>
struct args_feed_names {
  static constexpr std::array<std::string_view, 0> names{};
};
template <class F, class... Fs>
struct args_feed_names<SessionRunArgsWithFeeds<F, Fs...>> {
  static constexpr std::array<std::string_view, sizeof...(Fs)> names{Fs::name.view()...};
};

/// Every placeholder name the hooks `Hs...` feed, hook after hook (a name twice: two feeds).
template <class... Hs>
constexpr auto all_hook_feed_names() {
  constexpr std::size_t n = (std::size_t{0} + ... + args_feed_names<run_args_t<Hs>>::names.size());
  std::array<std::string_view, n> out{};
  std::size_t k = 0;
  auto append = [&](const auto& names) {
    for (const auto& name : names) out[k++] = name;
  };
  (append(args_feed_names<run_args_t<Hs>>::names), ...);
  (void)append;  // a session without hooks
  return out;
}

template <std::size_t N>
constexpr std::size_t count_name(const std::array<std::string_view, N>& names,
                                 std::string_view name) {
  std::size_t c = 0;
  for (const auto& n : names) c += n == name ? 1 : 0;
  return c;
}

/// Fails to compile when the placeholder `Name` is fed by more than one hook entry.
template <fixed_string Name, std::size_t Count>
constexpr bool check_hook_feed_once() {
  static_assert(Count <= 1,
                "hookfuse: two hooks feed the same placeholder in one run (TensorFlow: 'Same "
                "tensor is fed by two hooks.'); the placeholder is 'Name' in the instantiation "
                "above");
  return Count <= 1;
}
/// Fails to compile when the placeholder `Name` is fed by the caller and by a hook.
template <fixed_string Name, bool FedByHook>
constexpr bool check_caller_feed_not_hooked() {
  static_assert(!FedByHook,
                "hookfuse: session.run(feed<...>(...)) feeds a placeholder that a hook's "
                "before_run also feeds (TensorFlow: 'Same tensor is fed by a SessionRunHook and "
                "user.'); the placeholder is 'Name' in the instantiation above");
  return !FedByHook;
}
/// Fails to compile when a hook's feed_dict holds something other than feed<"x">(...).
template <class Hook, class F>
constexpr bool check_hook_feed_type() {
  static_assert(is_feed<F>::value,
                "hookfuse: a hook's feed_dict (with_feeds) holds something that is not a "
                "feed<\"name\">(...) entry (the hook is 'Hook' in the instantiation above)");
  return is_feed<F>::value;
}

/// The compile-time checks of the hooks' feeds for the hooks `Hs...` of one session.
template <class... Hs>
struct HookFeedChecks {
  static constexpr auto names = all_hook_feed_names<Hs...>();

  template <class H, class F, class... Fs>
  static constexpr bool check_args(std::type_identity<SessionRunArgsWithFeeds<F, Fs...>>) {
    return ((check_hook_feed_type<H, Fs>() &&
             check_hook_feed_once<Fs::name, count_name(names, Fs::name.view())>()) &&
            ... && true);
  }
  template <class H, class A>
  static constexpr bool check_args(std::type_identity<A>) {
    return true;
  }
  /// Every entry is a feed, and no placeholder is fed twice.
  static constexpr bool check() {
    return (check_args<Hs>(std::type_identity<run_args_t<Hs>>{}) && ... && true);
  }
  /// No placeholder of the caller's feeds `Fs` is fed by a hook.
  template <class... Fs>
  static constexpr bool check_caller() {
    return (check_caller_feed_not_hooked<Fs::name, count_name(names, Fs::name.view()) != 0>() &&
            ... && true);
  }
};
template <class Hooks>
struct hook_feeds_of;
template <template <class...> class Tuple, class... Hs>
struct hook_feeds_of<Tuple<Hs...>> {
  using type = HookFeedChecks<hook_t<Hs>...>;
};

/// Applies the feed_dict of one hook's before_run result, when it is active.
template <class G, class A>
void apply_hook_feeds(G& graph, const A& args) {
  if constexpr (args_feed_names<A>::names.size() > 0) {
    if (args.active)
      std::apply([&graph](const auto&... f) { (f.apply(graph), ...); }, args.feed_dict);
  } else {
    (void)graph;
    (void)args;
  }
}

}  // namespace hookfuse::detail
