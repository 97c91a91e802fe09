// hookfuse/autodiff/feeds.hpp: what a session's placeholders are fed from: an input object
// (feeds<"x", "labels">(input_fn), or any type modelling InputFor), or the caller on every run
// (caller_feeds(max_batch_size) and session.run(feed<"x">(xs, rows), ...), TensorFlow's
// feed_dict). docs/inputs.md has the whole story.
#pragma once

#include <concepts>
#include <cstddef>
#include <span>
#include <stdexcept>
#include <string_view>
#include <type_traits>

#include "hookfuse/autodiff/feed_check.hpp"
#include "hookfuse/autodiff/storage.hpp"
#include "hookfuse/config.hpp"
#include "hookfuse/detail/format.hpp"
#include "hookfuse/fixed_string.hpp"

namespace hookfuse {

/// An input as the session uses it: next() moves to the next minibatch and returns false at the
/// end of the data (TensorFlow's OutOfRangeError: training ends cleanly); batch_size() is the
/// largest number of rows a batch can have (the graph is bound for it); feed(graph) points the
/// graph's placeholders at the current batch (Graph::feed). Optionally check(graph), called
/// once when the session is built, throws when the input cannot feed the graph.
template <class I, class G>
concept InputFor = requires(I& in, G& g) {
  { in.next() } -> std::convertible_to<bool>;
  { in.batch_size() } -> std::convertible_to<Index>;
  in.feed(g);
};

/// Feeds the tensors of an input function (such as data::NumpyInputFn) to placeholders, by
/// position: the input's K-th tensor goes to the placeholder `Names[K]` (NumpyInputFn: the
/// features, then the targets; NumpyColumnsInputFn: its columns in order, then the targets). The input provides rows(), num_tensors() (the
/// tensors it holds, at run time: an input built without targets holds one less) and
/// tensor<K>() returning {data, cols} for the current batch. Keeps a pointer: `input` must
/// outlive the session.
template <class In, fixed_string... Names>
struct Feeds {
  In* input;

  bool next() { return input->next(); }
  /// The rows a batch of the input can have at most, what the session binds the graph for: the
  /// input's capacity() when it has one (NumpyInputFn: min(batch_size, num_examples), the rows
  /// its buffers hold), else its batch_size().
  Index batch_size() const {
    if constexpr (requires { input->capacity(); }) return static_cast<Index>(input->capacity());
    else return static_cast<Index>(input->batch_size());
  }

  /// Called by the session's constructor: every name has a tensor in the input, of the
  /// placeholder's scalar type (compile time) and column count (ShapeError otherwise).
  /// Throws std::invalid_argument, naming the placeholder, when the input lacks its tensor (a
  /// NumpyInputFn built without targets under feeds<"x", "labels">).
  template <class G>
  void check(const G& graph) const {
    check_each(graph, std::make_index_sequence<sizeof...(Names)>{});
  }

  /// Points every named placeholder at the input's current batch (Graph::feed: rows and
  /// columns checked again).
  template <class G>
  void feed(G& graph) {
    feed_each(graph, std::make_index_sequence<sizeof...(Names)>{});
  }

 private:
  template <std::size_t K, fixed_string First, fixed_string... Rest>
  static constexpr auto nth() {
    if constexpr (K == 0) return First;
    else return nth<K - 1, Rest...>();
  }

  template <class G, std::size_t... K>
  void check_each(const G& graph, std::index_sequence<K...>) const {
    (check_one<K>(graph), ...);
  }
  template <std::size_t K, class G>
  void check_one(const G& graph) const {
    constexpr auto name = nth<K, Names...>();
    if constexpr (requires { In::template tensor_name<K>(); }) {
      static_assert(In::template tensor_name<K>() == name.view() ||
                        In::template tensor_name<K>().empty(),
                    "hookfuse: feeds<...>: a name differs from the name of the input's column "
                    "at the same position (feature columns feed placeholders of their name)");
    }
    if (K >= static_cast<std::size_t>(input->num_tensors())) {
      detail::ErrorMessage m;
      m << "hookfuse: feeds: the input has no tensor for placeholder '" << name.view()
        << "' (it holds " << static_cast<long long>(input->num_tensors())
        << "; an input built without targets cannot feed a labels placeholder)";
      detail::fail<std::invalid_argument>(m.str());
    }
    const auto t = input->template tensor<K>();
    using T = std::remove_cv_t<std::remove_pointer_t<decltype(t.data)>>;
    graph.template check_feed<name, T>(static_cast<Index>(t.cols));
  }

  template <class G, std::size_t... K>
  void feed_each(G& graph, std::index_sequence<K...>) {
    const auto rows = static_cast<Index>(input->rows());
    (feed_one<K>(graph, rows), ...);
  }
  template <std::size_t K, class G>
  void feed_one(G& graph, Index rows) {
    const auto t = input->template tensor<K>();
    graph.template feed<nth<K, Names...>()>(t.data, rows, static_cast<Index>(t.cols));
  }
};

/// `feeds<"x", "labels">(input_fn)`: the input's features go to placeholder "x", its targets
/// to placeholder "labels" (by position: see Feeds).
template <fixed_string... Names, class In>
Feeds<In, Names...> feeds(In& input) {
  static_assert(sizeof...(Names) > 0, "hookfuse: feeds<\"x\", ...>: name the placeholders");
  return {&input};
}

/// Passed where a session's input goes: the session is fed by the caller on each run,
/// `session.run(feed<"x">(xs, rows), feed<"y">(ys, rows))`, like TensorFlow's
/// `sess.run(train_op, feed_dict={x: xs, y: ys})`. The graph is bound for batches of up to
/// `max_batch_size` rows (> 0; std::invalid_argument otherwise).
struct CallerFeeds {
  Index max_batch_size;
  Index batch_size() const { return max_batch_size; }
};
inline CallerFeeds caller_feeds(Index max_batch_size) {
  if (max_batch_size <= 0)
    detail::fail<std::invalid_argument>(
        (detail::ErrorMessage() << "hookfuse: caller_feeds: max_batch_size must be > 0, got "
                                << static_cast<long long>(max_batch_size))
            .str());
  return {max_batch_size};
}

/// One entry of a caller's feed_dict: `rows` x `cols` values of T, row-major, for placeholder
/// `Name`. `StaticCols` is the data's compile-time column count (an Eigen matrix's), checked at
/// compile time. `RowsOnly`: made from a pointer and a row count (no column count), which only
/// feeds a placeholder with exactly one column (a compile error otherwise). cols < 0: rows is 0
/// (an empty container) and any width fits. Not a copy: the data must stay valid until the
/// run's fetches are read.
template <fixed_string Name, class T, int StaticCols = Dynamic, bool RowsOnly = false>
struct Feed {
  static constexpr auto name = Name;
  const T* data;
  Index rows;
  Index cols;

  template <class G>
  void apply(G& graph) const {
    if constexpr (RowsOnly) {
      graph.template feed<Name>(data, rows);  // a one-column placeholder, or a compile error
    } else {
      if constexpr (StaticCols != Dynamic && G::template has<Name>)
        static_assert(
            detail::check_feed_cols<Name, G::template dims_of<Name>.cols, StaticCols>());
      graph.template feed<Name>(data, rows,
                                cols < 0 ? graph.template placeholder_cols<Name>() : cols);
    }
  }
};

/// `feed<"x">(xs, rows, cols)`: `rows` x `cols` values at `xs`, checked against the placeholder.
template <fixed_string Name, class T>
Feed<Name, T> feed(const T* data, Index rows, Index cols) {
  return {data, rows, cols};
}
/// `feed<"labels">(ys, rows)`: a [rows] vector at `ys`, for a placeholder with exactly one
/// column (a compile error naming the placeholder for a wider one, whose width would be trusted:
/// give the columns, or a container or matrix, whose size is checked).
template <fixed_string Name, class T>
Feed<Name, T, Dynamic, true> feed(const T* data, Index rows) {
  return {data, rows, 1};
}

namespace detail {
/// A contiguous container of values: std::vector, std::array, std::span (not an Eigen type).
template <class C>
concept FeedContainer = requires(const C& c) {
  { c.data() } -> std::convertible_to<const void*>;
  { c.size() } -> std::convertible_to<std::size_t>;
} && (!requires { typename C::Scalar; });

/// A std::span only views memory that outlives it: a temporary one does not dangle.
template <class C>
inline constexpr bool span_v = false;
template <class T, std::size_t E>
inline constexpr bool span_v<std::span<T, E>> = true;
}  // namespace detail

/// `feed<"x">(vector, rows)`: a contiguous container (std::vector, std::array, std::span) of
/// rows x cols values; cols = size / rows is checked against the placeholder (ShapeError when
/// size is not a multiple of rows).
template <fixed_string Name, detail::FeedContainer C>
auto feed(const C& c, Index rows) {
  using T = std::remove_cv_t<std::remove_pointer_t<decltype(c.data())>>;
  const auto size = static_cast<Index>(c.size());
  if (rows < 0 || (rows == 0 ? size != 0 : size % rows != 0))
    detail::fail<std::invalid_argument>(
        (detail::ErrorMessage() << "hookfuse: feed '" << Name.view() << "': "
                                << static_cast<long long>(size)
                                << " values do not make " << static_cast<long long>(rows)
                                << " whole rows")
            .str());
  return Feed<Name, T>{c.data(), rows, rows == 0 ? Index{-1} : size / rows};
}
/// A temporary container that owns its values (not a std::span) would be destroyed while the
/// Feed still points into it: feed a named variable.
template <fixed_string Name, detail::FeedContainer C>
  requires(!std::is_reference_v<C> && !detail::span_v<std::remove_cv_t<C>>)
void feed(C&& temporary, Index rows) = delete;

/// `feed<"x">(matrix)`: an Eigen matrix, map or vector (row-major when it has several columns)
/// whose rows are the batch. A compile-time column count is checked at compile time.
template <fixed_string Name, class Derived>
auto feed(const Eigen::MatrixBase<Derived>& m) {
  static_assert(Derived::ColsAtCompileTime == 1 || Derived::IsRowMajor,
                "hookfuse: feed: a matrix with several columns must be row-major "
                "(rows are the batch, one example contiguous)");
  const auto& d = m.derived();
  if (d.innerStride() != 1 || (d.rows() > 1 && d.cols() > 1 && d.outerStride() != d.cols()))
    detail::fail<std::invalid_argument>((detail::ErrorMessage()
                                         << "hookfuse: feed '" << Name.view()
                                         << "': the matrix is not contiguous (strided view)")
                                            .str());
  using T = typename Derived::Scalar;
  return Feed<Name, T, Derived::ColsAtCompileTime>{d.data(), d.rows(), d.cols()};
}
/// A temporary matrix (anything but an Eigen::Map) would be destroyed while the Feed still
/// points into it: feed a named variable.
template <fixed_string Name, class Derived>
  requires(!std::is_reference_v<Derived> &&
           std::is_base_of_v<Eigen::MatrixBase<std::remove_cv_t<Derived>>, Derived> &&
           !detail::eigen_map_v<std::remove_cv_t<Derived>>)
void feed(Derived&& temporary) = delete;

namespace detail {
template <class T>
struct is_feed : std::false_type {};
template <fixed_string N, class T, int C, bool R>
struct is_feed<Feed<N, T, C, R>> : std::true_type {};
}  // namespace detail

}  // namespace hookfuse
