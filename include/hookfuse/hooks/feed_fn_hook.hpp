// hookfuse/hooks/feed_fn_hook.hpp: FeedFnHook (tf.compat.v1.train.FeedFnHook).
#pragma once

#include <stdexcept>
#include <tuple>
#include <type_traits>
#include <utility>

#include "hookfuse/autodiff/feeds.hpp"
#include "hookfuse/config.hpp"
#include "hookfuse/detail/format.hpp"
#include "hookfuse/hooks/session_run_hook.hpp"

namespace hookfuse {

/// The input of a session whose placeholders are all fed by hooks' feed_dicts (FeedFnHook), as
/// TensorFlow's `session.run(train_op)` with a FeedFnHook feeding every placeholder:
/// `MonitoredTrainingSession s(train_op, hook_feeds(max_batch_size), hooks(FeedFnHook(fn)))`.
/// It never runs out and feeds nothing itself; the graph is bound for batches of up to
/// `max_batch_size` rows (> 0; std::invalid_argument otherwise). A placeholder no hook feeds
/// throws ShapeError before the forward pass, as any unfed placeholder.
struct HookFeeds {
  Index max_batch_size;
  bool next() { return true; }
  Index batch_size() const { return max_batch_size; }
  template <class G>
  void feed(G&) {}
};
inline HookFeeds hook_feeds(Index max_batch_size) {
  if (max_batch_size <= 0)
    detail::fail<std::invalid_argument>((detail::ErrorMessage()
                                         << "hookfuse: hook_feeds: max_batch_size must be > 0, got "
                                         << static_cast<long long>(max_batch_size))
                                            .str());
  return {max_batch_size};
}

/// Several feeds as one value, what a FeedFnHook's feed_fn returns to feed more than one
/// placeholder: `return feed_dict(feed<"x">(xs, rows), feed<"y">(ys, rows));`.
template <class... Fs>
requires((detail::is_feed<Fs>::value && ...)) constexpr std::tuple<Fs...> feed_dict(Fs... feeds) {
  return std::tuple<Fs...>(feeds...);
}

/// Calls `feed_fn()` before every run and feeds what it returns, as TensorFlow's
/// FeedFnHook(feed_fn), whose before_run returns SessionRunArgs(fetches=None,
/// feed_dict=feed_fn()). feed_fn returns one feed<"x">(...) or a feed_dict(feed<"x">(...), ...)
/// of several; the data it points to must stay valid until the run's after_run calls are over
/// (keep it in the function object or in the caller, not in a local of feed_fn). Fetches
/// nothing. The feeds are checked like session.run(feed<"x">(...)): the scalar type and the
/// placeholder's existence at compile time, rows and columns before the forward pass
/// (ShapeError naming the placeholder). Two hooks feeding one placeholder, or this hook and the
/// caller's run(feed<...>), is a compile error naming the placeholder; a placeholder the input
/// object also feeds is fed by this hook in every run (session/hook_feeds.hpp). feed_fn's
/// exceptions propagate from run() before anything is computed.
template <class FeedFn>
class FeedFnHook {
  using result_type = std::remove_cvref_t<std::invoke_result_t<FeedFn&>>;

  template <class R>
  struct args_for;
  template <class... Fs>
  struct args_for<std::tuple<Fs...>> {
    using type = SessionRunArgsWithFeeds<SessionRunArgs<>, Fs...>;
    static type make(std::tuple<Fs...> fs) { return {SessionRunArgs<>{}, std::move(fs)}; }
  };
  template <fixed_string N, class T, int C, bool R>
  struct args_for<Feed<N, T, C, R>> {
    using type = SessionRunArgsWithFeeds<SessionRunArgs<>, Feed<N, T, C, R>>;
    static type make(Feed<N, T, C, R> f) { return {SessionRunArgs<>{}, std::tuple(f)}; }
  };

 public:
  static_assert(
      requires { typename args_for<result_type>::type; },
      "hookfuse: FeedFnHook: feed_fn must return feed<\"name\">(...) or "
      "feed_dict(feed<\"a\">(...), feed<\"b\">(...), ...)");

  explicit FeedFnHook(FeedFn feed_fn) : feed_fn_(std::move(feed_fn)) {}

  typename args_for<result_type>::type before_run(SessionRunContext&) {
    return args_for<result_type>::make(feed_fn_());
  }

  FeedFn& feed_fn() { return feed_fn_; }

 private:
  FeedFn feed_fn_;
};

}  // namespace hookfuse
