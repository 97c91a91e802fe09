// hookfuse/autodiff/feed_check.hpp: the checks behind Graph::feed and the forward pass: the
// data's scalar type and static column count against the placeholder's (compile time), and,
// before anything reads the inputs, that every placeholder read was fed and all with the same
// number of rows (run time), with the messages that name them.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>

#include "hookfuse/autodiff/errors.hpp"
#include "hookfuse/autodiff/storage.hpp"
#include "hookfuse/autodiff/tape.hpp"
#include "hookfuse/autodiff/tape_tables.hpp"
#include "hookfuse/detail/compile_error.hpp"
#include "hookfuse/detail/format.hpp"
#include "hookfuse/fixed_string.hpp"

namespace hookfuse::detail {

/// TensorFlow's dtype name of a scalar type ("float32", "int64", ...), for error messages.
template <class S>
constexpr std::string_view dtype_name() {
  if constexpr (std::is_same_v<S, float>) return "float32";
  else if constexpr (std::is_same_v<S, double>) return "float64";
  else if constexpr (std::is_same_v<S, std::int32_t>) return "int32";
  else if constexpr (std::is_same_v<S, std::int64_t>) return "int64";
  else if constexpr (std::is_same_v<S, std::uint8_t>) return "uint8";
  else return "unsupported type";
}

/// Fails to compile when data of scalar `DataScalar` is fed to a placeholder of scalar
/// `PlaceholderScalar`, with an error that names the placeholder and both dtypes.
template <fixed_string PlaceholderName, class PlaceholderScalar, class DataScalar>
constexpr bool check_feed_scalar() {
  constexpr bool same = std::is_same_v<PlaceholderScalar, DataScalar>;
  if constexpr (!same) {
    constexpr message_text m = [] {
      message_text t;
      t << "feed of placeholder `" << PlaceholderName.view() << "`: the data is "
        << dtype_name<DataScalar>() << " (" << type_name<DataScalar>("?")
        << "), the placeholder is " << dtype_name<PlaceholderScalar>() << " ("
        << type_name<PlaceholderScalar>("?")
        << "); convert the data, or declare the placeholder with the type of the data";
      return t;
    }();
    (void)raise_compile_error<message_string<m.size>(m)>::value;
  }
  return same;
}

/// Fails to compile when data with a compile-time column count is fed to a placeholder with a
/// different compile-time column count.
template <fixed_string PlaceholderName, int PlaceholderCols, int DataCols>
constexpr bool check_feed_cols() {
  constexpr bool ok = dim_fits(PlaceholderCols, DataCols);
  static_assert(ok,
                "hookfuse: feed: the data's column count is not the placeholder's (the "
                "placeholder is 'PlaceholderName' with PlaceholderCols columns, the data has "
                "DataCols in the instantiation above)");
  return ok;
}

/// Fails to compile when data given as a pointer and a row count, with no column count
/// (feed<"x">(data, rows)), goes to a placeholder that does not have exactly one column at
/// compile time: its width would be trusted, and a shorter buffer read past its end.
template <fixed_string PlaceholderName, int PlaceholderCols>
constexpr bool check_rows_only_feed() {
  static_assert(PlaceholderCols == 1,
                "hookfuse: feed<\"name\">(data, rows) gives no column count, so it only feeds a "
                "placeholder with exactly one column (the placeholder is 'PlaceholderName' with "
                "PlaceholderCols columns in the instantiation above; -1: set at run time): pass "
                "the columns, feed<\"name\">(data, rows, cols), or feed a container or an Eigen "
                "matrix, whose size is checked");
  return PlaceholderCols == 1;
}

/// An Eigen::Map views memory that outlives it; any other Eigen type, as a temporary, owns (or
/// may own: a Ref to a converted copy, a block of a temporary) the values a feed would point to.
template <class D>
inline constexpr bool eigen_map_v = false;
template <class M, int O, class S>
inline constexpr bool eigen_map_v<Eigen::Map<M, O, S>> = true;

/// One placeholder as the feed checks report it: its name, whether it was fed, its rows now, and
/// what describe_placeholder prints ("[?, 784] float32").
struct FeedState {
  std::string_view name;
  bool fed;
  bool batched;       // dynamic rows: fed a batch
  Index rows;         // rows now
  Index cols;         // columns now
  int static_rows;    // compile-time rows, when not batched
  std::string_view dtype;
};

/// The FeedState of a placeholder slot named `name`.
template <class Slot>
FeedState feed_state(const Slot& slot, std::string_view name) {
  return FeedState{name,           slot.fed, Slot::D.rows == Dynamic, slot.current.rows,
                   slot.current.cols, Slot::D.rows, dtype_name<typename Slot::S>()};
}

/// "[?, 784] float32": a placeholder's shape (? for the batch) and dtype.
inline void describe_placeholder(ErrorMessage& m, const FeedState& s) {
  m << "[";
  if (s.batched) m << "?";
  else m << s.static_rows;
  m << ", " << static_cast<long long>(s.cols) << "] " << s.dtype;
}
template <class Slot>
void describe_placeholder(ErrorMessage& m, const Slot& slot) {
  describe_placeholder(m, feed_state(slot, {}));
}

/// "the forward pass" (`tensor` empty) or "fetch 'accuracy'".
inline void describe_reader(ErrorMessage& m, std::string_view tensor) {
  if (tensor.empty()) m << "the forward pass";
  else m << "fetch '" << tensor << "'";
}

/// Records one batched placeholder's row count `r` (the first sets `rows`; a different one
/// clears `same`).
HOOKFUSE_PER_ENTRY_INLINE inline void note_rows(Index r, Index& rows, bool& same) {
  if (rows < 0) rows = r;
  else if (r != rows) same = false;
}

/// Throws ShapeError for the placeholders `s[0..n)` a reader (`what`: a fetched tensor, or empty
/// for the forward pass; `whole_step`: the step, its forward pass and fetches) reads: naming the
/// ones not fed, when some were not, else the batched ones in the set (`in_set`, or all) and their
/// row counts. A template of the error type only: the Graph's checks, one per tape, share it;
/// they build `s` only when a check fails.
template <class Error>
[[noreturn]] HOOKFUSE_COLD void fail_feeds(const FeedState* s, std::size_t n,
                                                 const bool* in_set, std::string_view what,
                                                 bool whole_step) {
  ErrorMessage m;
  m << "hookfuse: ";
  if (whole_step) m << "the step (its forward pass and fetches)";
  else describe_reader(m, what);
  int unfed = 0;  // the whole step's check (after each reader's) is about rows only
  for (std::size_t k = 0; k < n && !whole_step; ++k)
    if ((in_set == nullptr || in_set[k]) && !s[k].fed) ++unfed;
  if (unfed > 0) {
    m << " reads " << (unfed == 1 ? "placeholder" : "placeholders");
    int listed = 0;
    for (std::size_t k = 0; k < n; ++k) {
      if ((in_set != nullptr && !in_set[k]) || s[k].fed) continue;
      m << (listed++ == 0 ? " '" : ", '") << s[k].name << "' (";
      describe_placeholder(m, s[k]);
      m << ")";
    }
    m << (unfed == 1 ? ", which was" : ", which were")
      << " not fed: you must feed a value for every placeholder a step reads (no step has run "
         "yet, the input was empty, or the step's feeds left it out)";
  } else {
    m << " reads placeholders fed with different row counts (every placeholder of a step must "
         "get the same batch):";
    int listed = 0;
    for (std::size_t k = 0; k < n; ++k) {
      if ((in_set != nullptr && !in_set[k]) || !s[k].batched) continue;
      m << (listed++ == 0 ? " '" : "; '") << s[k].name << "' "
        << static_cast<long long>(s[k].rows) << " rows";
    }
  }
  fail<Error>(m.str());
}

/// Graph::feed after its compile-time checks: points a placeholder's slot at `rows` x `cols`
/// values. ShapeError naming the placeholder `Name` and both shapes unless `cols` is the
/// placeholder's, `rows` in [0, capacity] (or its compile-time rows), and `data` non-null when
/// there are values to read.
template <fixed_string Name, class Sl, class T>
void feed_slot(Sl& slot, const T* data, Index rows, Index cols, Index capacity) {
  Index max_rows = capacity;
  if constexpr (Sl::D.rows != Dynamic) max_rows = Sl::D.rows;
  const bool rows_ok = Sl::D.rows == Dynamic ? rows >= 0 && rows <= capacity : rows == max_rows;
  if (!rows_ok || cols != slot.current.cols) {
    ErrorMessage m;
    m << "hookfuse: feed '" << Name.view() << "': ";
    if (cols != slot.current.cols) {
      m << "the data is [" << static_cast<long long>(rows) << ", "
        << static_cast<long long>(cols) << "], the placeholder is ";
    } else if constexpr (Sl::D.rows == Dynamic) {
      m << static_cast<long long>(rows) << " rows, but the graph was bound for batches of "
        << (rows < 0 ? "0 to " : "up to ") << static_cast<long long>(capacity)
        << " rows; the placeholder is ";
    } else {
      m << static_cast<long long>(rows) << " rows, but the placeholder has " << Sl::D.rows
        << ": ";
    }
    describe_placeholder(m, slot);
    fail<ShapeError>(m.str());
  }
  if (data == nullptr && rows * cols > 0)
    fail<ShapeError>((ErrorMessage() << "hookfuse: feed '" << Name.view() << "': the data is null")
                         .str());
  slot.current.rows = rows;
  slot.data = data;
  slot.fed = true;
}

/// The slot at tape position I of a Graph's slots.
template <std::size_t I, class Slots>
using slot_at = std::remove_cvref_t<decltype(get<I>(std::declval<const Slots&>()))>;

/// ShapeError (fail_feeds) unless the placeholders at positions I (those one reader reads: the
/// forward pass when `what` is empty, else the fetched tensor `what`) were all fed, the batched
/// ones with one row count. `names` holds each position's name.
template <class Slots, class Names, std::size_t... I>
void check_feeds_of(const Slots& slots, const Names& names, std::string_view what,
                    std::index_sequence<I...>) {
  const bool fed = (get<I>(slots).fed && ... && true);
  [[maybe_unused]] Index rows = -1;  // (no placeholder read: unused)
  bool same = true;
  ((slot_at<I, Slots>::D.rows == Dynamic ? note_rows(get<I>(slots).current.rows, rows, same)
                                         : void()),
   ...);
  if (!fed || !same) [[unlikely]] {
    const std::array<FeedState, sizeof...(I)> states{feed_state(get<I>(slots), names[I])...};
    fail_feeds<ShapeError>(states.data(), states.size(), nullptr, what, false);
  }
}

/// The rows of this run's batch among the placeholders at positions I (those the loss reads): the
/// fed rows of the first batched (dynamic-rows) one, which check_feeds_of makes equal to every
/// other batched one's; with none batched, the first one's fixed rows; with no placeholder, 1.
template <class Slots, std::size_t... I>
Index batch_rows_of(const Slots& slots, std::index_sequence<I...>) {
  Index rows = -1;
  ((rows < 0 && slot_at<I, Slots>::D.rows == Dynamic ? void(rows = get<I>(slots).current.rows)
                                                     : void()),
   ...);
  ((rows < 0 ? void(rows = get<I>(slots).current.rows) : void()), ...);
  return rows < 0 ? Index(1) : rows;
}

/// ShapeError (fail_feeds) unless the batched placeholders among positions I that `reads` marks
/// (what a whole step reads) were all fed the same number of rows.
template <class Slots, class Names, class Reads, std::size_t... I>
void check_same_rows_of(const Slots& slots, const Names& names, const Reads& reads,
                        std::index_sequence<I...>) {
  [[maybe_unused]] Index rows = -1;  // (no placeholder read: unused)
  bool same = true;
  ((slot_at<I, Slots>::D.rows == Dynamic && reads[I]
        ? note_rows(get<I>(slots).current.rows, rows, same)
        : void()),
   ...);
  if (!same) [[unlikely]] {
    const std::array<FeedState, sizeof...(I)> states{feed_state(get<I>(slots), names[I])...};
    const std::array<bool, sizeof...(I)> in_set{reads[I]...};
    fail_feeds<ShapeError>(states.data(), states.size(), in_set.data(), {}, true);
  }
}

}  // namespace hookfuse::detail
