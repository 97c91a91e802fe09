// hookfuse/session/hook_calls.hpp: the hook event folds every session shares
// (MonitoredTrainingSession, session/monitored_session.hpp; MonitoredSession,
// session/evaluation_session.hpp; their shared public members are in session_interface.hpp):
// begin, after_create_session, before_run, after_run, end, the values each hook's after_run
// receives, feeding, and the feed check before a step computes anything. Each is a fold over
// the session's hana tuple of hooks (a std::ref(h) element stands for h): no virtual call, no
// heap.
#pragma once

#include <boost/hana/at.hpp>
#include <boost/hana/for_each.hpp>
#include <boost/hana/tuple.hpp>
#include <boost/hana/unpack.hpp>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <utility>

#include "hookfuse/autodiff/feeds.hpp"
#include "hookfuse/config.hpp"
#include "hookfuse/detail/call_all.hpp"
#include "hookfuse/fixed_string.hpp"
#include "hookfuse/hooks/concepts.hpp"
#include "hookfuse/hooks/resumable_state.hpp"
#include "hookfuse/hooks/step_timeline.hpp"

namespace hookfuse {
namespace detail {

inline constexpr fixed_string global_step_name{"global_step"};
inline constexpr const char* run_after_stop_message =
    "Run called even after should_stop requested.";

/// Calls graph.release_feeds() when it goes out of scope (normally or by an exception), unless
/// built with nullptr: the feeds of a caller-fed run last for that run only (TF's feed_dict).
template <class Graph>
struct ReleaseFeeds {
  Graph* graph;
  explicit ReleaseFeeds(Graph* g) : graph(g) {}
  ReleaseFeeds(const ReleaseFeeds&) = delete;
  ReleaseFeeds& operator=(const ReleaseFeeds&) = delete;
  ~ReleaseFeeds() {
    if (graph != nullptr) graph->release_feeds();
  }
};

/// Feeds the graph from the input object; false at the end of the input. (Never called for
/// caller_feeds: run() without feeds does not compile for such a session.)
template <class Input, class Graph>
bool feed_from_input(Input& input, Graph& graph) {
  if constexpr (std::is_same_v<Input, CallerFeeds>) {
    (void)input, (void)graph;
    return false;
  } else {
    if (!input.next()) return false;
    graph.clear_feeds();
    input.feed(graph);
    return true;
  }
}
/// Feeds the graph with the caller's feeds (each checked by its apply()).
template <class Graph, class... Fs>
bool feed_from_caller(Graph& graph, const Fs&... feeds) {
  graph.clear_feeds();
  (feeds.apply(graph), ...);
  return true;
}

/// The I-th hook of a session's tuple (for std::ref(h): h itself): session.hook<I>().
template <std::size_t I, class... Hs>
auto& hook_at(boost::hana::tuple<Hs...>& hs) {
  static_assert(I < sizeof...(Hs), "hookfuse: session.hook<I>(): the session has fewer hooks");
  return hook_ref(boost::hana::at_c<I>(hs));
}
/// The hook of type H (or the object a std::ref(h) of type H refers to), which must occur once:
/// session.hook<H>().
template <class H, class Hooks>
auto& hook_of(Hooks& hs) {
  using pos = hook_position<H, Hooks>;
  static_assert(pos::count == 1,
                "hookfuse: session.hook<H>(): the session has no hook of type H, or more than "
                "one (then use hook<I>() by position)");
  return hook_at<(pos::count == 1 ? pos::index : 0)>(hs);
}

/// Every hook's begin(), in hook order (before the graph is bound).
template <class Hooks>
void call_begin(Hooks& hs) {
  boost::hana::for_each(hs, [](auto& stored) {
    auto& h = hook_ref(stored);
    if constexpr (HandlesBegin<std::remove_cvref_t<decltype(h)>>) h.begin();
  });
}
/// Every hook's after_create_session(session), in hook order.
template <class Hooks, class Session>
void call_after_create_session(Hooks& hs, Session& session) {
  boost::hana::for_each(hs, [&session](auto& stored) {
    auto& h = hook_ref(stored);
    if constexpr (HandlesAfterCreateSession<std::remove_cvref_t<decltype(h)>, Session>)
      h.after_create_session(session);
  });
}
/// Every hook's end(session), in hook order, each through `errors` (detail/call_all.hpp): an
/// exception from one hook's end() does not skip the end() of the hooks after it; the caller
/// raises the first one (errors.rethrow_first()) once all have run.
template <class Hooks, class Session, class Log>
void call_end(Hooks& hs, Session& session, ErrorCollector<Log>& errors) {
  call_all(
      hs,
      [&session](auto& stored) {
        auto& h = hook_ref(stored);
        if constexpr (HandlesEnd<std::remove_cvref_t<decltype(h)>, Session>) h.end(session);
      },
      errors);
}

/// A stored hook (H, or std::reference_wrapper<H>) the idle fast path may leave out of a run
/// (SkipsIdleRuns, hooks/concepts.hpp): one with no run event (no before_run, after_run,
/// gradient or update event, or phase timings), or one that says when it is idle, is stored by
/// the session (not std::ref(h): the caller, who keeps it, would see its counts lag between the
/// session's syncs) and has no checkpoint state (a saved list of its fields would lag the same
/// way). A gradient hook, an update hook or a phase-timing hook is never left out.
template <class Stored, class H = hook_t<Stored>>
inline constexpr bool idle_capable =
    !called_every_run<H> &&
    ((!DeclaresBeforeRun<H> && !DeclaresAfterRun<H>) ||
     (SkipsIdleRuns<H> && std::is_same_v<std::remove_cvref_t<Stored>, H> &&
      !HasCheckpointState<H>));
template <class Hooks>
inline constexpr bool all_idle_capable = false;
template <class... Hs>
inline constexpr bool all_idle_capable<boost::hana::tuple<Hs...>> = (idle_capable<Hs> && ...);

template <class Hooks>
inline constexpr bool any_skips_idle_runs = false;
template <class... Hs>
inline constexpr bool any_skips_idle_runs<boost::hana::tuple<Hs...>> =
    (SkipsIdleRuns<hook_t<Hs>> || ... || false);

/// The fewest idle runs over the hooks that say (INT64_MAX when none does).
template <class... Hs>
std::int64_t min_idle_runs(boost::hana::tuple<Hs...>& hs) {
  std::int64_t n = std::numeric_limits<std::int64_t>::max();
  boost::hana::for_each(hs, [&n](auto& stored) {
    auto& h = hook_ref(stored);
    if constexpr (SkipsIdleRuns<std::remove_cvref_t<decltype(h)>>) {
      const std::int64_t k = h.idle_runs();
      n = k < n ? k : n;
    }
  });
  return n < 0 ? 0 : n;
}
/// skip_runs(n) on every hook that says when it is idle.
template <class... Hs>
void call_skip_runs(boost::hana::tuple<Hs...>& hs, std::int64_t n) {
  boost::hana::for_each(hs, [n](auto& stored) {
    auto& h = hook_ref(stored);
    if constexpr (SkipsIdleRuns<std::remove_cvref_t<decltype(h)>>) h.skip_runs(n);
  });
}

/// A hook's before_run(ctx), or inactive SessionRunArgs<> for a hook without one.
template <class H>
auto call_before_run(H& h, SessionRunContext& ctx) {
  if constexpr (HandlesBeforeRun<H>) return h.before_run(ctx);
  else return SessionRunArgs<>{false};
}
/// Whether a hook's before_run result requests a tensor in this run (false for one that names
/// none, whatever its `active`).
template <fixed_string... Names>
constexpr bool requests_fetch(const SessionRunArgs<Names...>& a) {
  if constexpr (sizeof...(Names) > 0) return a.active;
  else return ((void)a, false);
}
/// `call(h)` (a hook's before_run, see call_before_run) for every hook in hook order; returns
/// the hana tuple of what each returned. A braced list is evaluated left to right
/// (hana::transform leaves the order of its calls unspecified: GCC goes right to left).
template <class Hooks, class Call>
auto collect_before_run(Hooks& hs, Call&& call) {
  return boost::hana::unpack(hs, [&call](auto&... stored) {
    return boost::hana::tuple<decltype(call(hook_ref(stored)))...>{call(hook_ref(stored))...};
  });
}
/// Every hook's after_run(ctx, values[i]), in hook order, with `after_each()` after each call.
template <class... Hs, class Values, class AfterEach>
void call_after_run(boost::hana::tuple<Hs...>& hs, SessionRunContext& ctx, Values& values,
                    AfterEach&& after_each) {
  auto call = [&]<std::size_t I>(std::integral_constant<std::size_t, I>) {
    auto& h = hook_ref(boost::hana::at_c<I>(hs));
    using H = std::remove_cvref_t<decltype(h)>;
    if constexpr (HandlesAfterRun<H, run_values_t<H>>) {
      h.after_run(ctx, boost::hana::at_c<I>(values));
      after_each();
    }
  };
  [&]<std::size_t... I>(std::index_sequence<I...>) {
    (call(std::integral_constant<std::size_t, I>{}), ...);
  }(std::index_sequence_for<Hs...>{});
  (void)ctx, (void)values, (void)after_each;  // unused without hooks
}

/// The hana tuple of what each hook's after_run receives.
template <class T>
struct values_of_hooks;
template <class... Hs>
struct values_of_hooks<boost::hana::tuple<Hs...>> {
  using type = boost::hana::tuple<run_values_t<hook_t<Hs>>...>;
};

/// What each hook requests in a run: the hana tuple of SessionRunArgs<names...>, the fetch part
/// of each hook's before_run result (without a feed_dict), one per hook.
template <class V>
struct request_of_values;
template <fixed_string... Names>
struct request_of_values<SessionRunValues<Names...>> {
  using type = SessionRunArgs<Names...>;
};
template <class T>
struct requests_of_hooks;
template <class... Hs>
struct requests_of_hooks<boost::hana::tuple<Hs...>> {
  using type = boost::hana::tuple<typename request_of_values<run_values_t<hook_t<Hs>>>::type...>;
};

/// Fills the values a hook receives from its args: `fetch.template operator()<Name>()` for each
/// name when the args are active; cleared (once) when not. Kept from run to run, so that a run
/// in which a hook asks for nothing costs nothing.
template <fixed_string... Names, class Fetch>
void fill_values(SessionRunValues<Names...>& v, const SessionRunArgs<Names...>& a, bool& fetched,
                 Fetch&& fetch) {
  if constexpr (sizeof...(Names) > 0) {
    if (a.active) {
      std::size_t i = 0;
      ((v.results[i++] = fetch.template operator()<Names>()), ...);
      fetched = true;
    } else if (fetched) {
      v = SessionRunValues<Names...>{};
      fetched = false;
    }
  } else {
    (void)v, (void)a, (void)fetched, (void)fetch;
  }
}

/// Marks in `reads` the placeholders that the tensor `Name` reads, throwing ShapeError when one
/// was not fed. "global_step" and "gradients/<name>" (the loss's graph) read no placeholder the
/// forward pass does not.
template <fixed_string Name, class Graph>
void check_fetch_fed(const Graph& graph, typename Graph::read_set& reads) {
  if constexpr (Name != global_step_name && Graph::template has<Name>)
    graph.template check_fed<Name>(reads);
  else
    (void)graph, (void)reads;
}
/// check_fetch_fed for every name of active args (a hook's fetches this run).
template <class Graph, fixed_string... Names>
void check_args_fed(const Graph& graph, const SessionRunArgs<Names...>& a,
                    typename Graph::read_set& reads) {
  if (a.active) (check_fetch_fed<Names>(graph, reads), ...);
}
/// Before a step computes anything: every placeholder that `reads` already holds (the forward
/// pass's), the caller's fetches `Fetch` and the fetches of the hooks whose args are active read
/// was fed, all with the same number of rows (ShapeError naming the reader and the placeholders
/// otherwise). `hooks_fetch` false: no hook's args are active (requests_fetch), nothing to check
/// per hook.
template <fixed_string... Fetch, class Graph, class Args>
void check_step_feeds(const Graph& graph, const Args& args, typename Graph::read_set& reads,
                      bool hooks_fetch = true) {
  (check_fetch_fed<Fetch>(graph, reads), ...);
  if (hooks_fetch)
    boost::hana::for_each(args, [&](const auto& a) { check_args_fed(graph, a, reads); });
  graph.check_same_rows(reads);
}


}  // namespace detail
}  // namespace hookfuse
