// hookfuse/autodiff/feed_check.hpp: the checks behind Graph::feed and the forward pass: the
// data's scalar type and static column count against the placeholder's (compile time), and,
// before anything reads the inputs, that every placeholder read was fed and all with the same
// number of rows (run time), with the messages that name them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>

#include "hookfuse/autodiff/storage.hpp"
#include "hookfuse/autodiff/tape.hpp"
#include "hookfuse/autodiff/tape_tables.hpp"
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

/// Fails to compile when data of scalar `Data` is fed to a placeholder of scalar `Placeholder`.
/// GCC and Clang print the template arguments of the failing instantiation: the placeholder's
/// name and both types appear in the diagnostic next to the message.
template <fixed_string PlaceholderName, class PlaceholderScalar, class DataScalar>
constexpr bool check_feed_scalar() {
  static_assert(std::is_same_v<PlaceholderScalar, DataScalar>,
                "hookfuse: feed: the data's scalar type is not the placeholder's (the "
                "placeholder is 'PlaceholderName', its scalar 'PlaceholderScalar', the data's "
                "'DataScalar' in the instantiation above); convert the data, or declare the "
                "placeholder with the data's type");
  return std::is_same_v<PlaceholderScalar, DataScalar>;
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

/// "[?, 784] float32": a placeholder slot's shape (? for the batch) and dtype.
template <class Slot>
void describe_placeholder(ErrorMessage& m, const Slot& slot) {
  m << "[";
  if constexpr (Slot::D.rows == Dynamic) m << "?";
  else m << Slot::D.rows;
  m << ", " << static_cast<long long>(slot.current.cols) << "] "
    << dtype_name<typename Slot::S>();
}

/// "the forward pass" (`tensor` empty) or "fetch 'accuracy'".
inline void describe_reader(ErrorMessage& m, std::string_view tensor) {
  if (tensor.empty()) m << "the forward pass";
  else m << "fetch '" << tensor << "'";
}

/// Fails with `Error` unless every placeholder that tape entry `Target` reads was fed and the
/// batched ones (dynamic rows) all hold the same number of rows; `what` names the reader (a
/// fetched tensor, or empty for the forward pass). Reads only the slots' flags and shapes.
/// Its loops visit the placeholders only (for_each_placeholder).
template <class Error, class Entries, class Names, std::size_t Target, class Slots>
void check_feeds(const Slots& slots, std::string_view what) {
  int unfed = 0;
  for_each_placeholder<Entries>(
      [&]<std::size_t I>(std::integral_constant<std::size_t, I>) HOOKFUSE_PER_ENTRY_INLINE {
        if constexpr (reach_table<Entries, Target>[I]) unfed += get<I>(slots).fed ? 0 : 1;
      });
  if (unfed > 0) {
    ErrorMessage m;
    m << "hookfuse: ";
    describe_reader(m, what);
    m << " reads " << (unfed == 1 ? "placeholder" : "placeholders");
    int listed = 0;
    for_each_placeholder<Entries>(
        [&]<std::size_t I>(std::integral_constant<std::size_t, I>) HOOKFUSE_PER_ENTRY_INLINE {
          if constexpr (reach_table<Entries, Target>[I]) {
            if (!get<I>(slots).fed) {
              m << (listed++ == 0 ? " '" : ", '") << name_at<Names, I>() << "' (";
              describe_placeholder(m, get<I>(slots));
              m << ")";
            }
          }
        });
    m << (unfed == 1 ? ", which was" : ", which were")
      << " not fed: you must feed a value for every placeholder a step reads (no step has run "
         "yet, the input was empty, or the step's feeds left it out)";
    fail<Error>(m.str());
  }
  check_same_rows<Error, Entries, Names>(slots, what, [](auto i) HOOKFUSE_PER_ENTRY_INLINE {
    return reach_table<Entries, Target>[decltype(i)::value];
  });
}

/// Fails with `Error` unless the batched placeholders (dynamic rows) at the tape positions I for
/// which `in_set(std::integral_constant<std::size_t, I>)` holds all hold the same number of
/// rows; `what` names the reader as in check_feeds, `whole_step` makes it "the step" (the
/// forward pass and every fetch of the step). Reads only the slots' shapes.
template <class Error, class Entries, class Names, class Slots, class InSet>
void check_same_rows(const Slots& slots, std::string_view what, InSet in_set,
                     bool whole_step = false) {
  Index rows = -1;
  bool same = true;
  // f(rows, name) for each batched placeholder in the set.
  auto batched = [&](auto&& f) HOOKFUSE_PER_ENTRY_INLINE {
    for_each_placeholder<Entries>(
        [&]<std::size_t I>(std::integral_constant<std::size_t, I> i) HOOKFUSE_PER_ENTRY_INLINE {
          if constexpr (std::tuple_element_t<I, Entries>::dims.rows == Dynamic) {
            if (in_set(i)) f(get<I>(slots).current.rows, name_at<Names, I>());
          }
        });
  };
  batched([&](Index r, std::string_view) HOOKFUSE_PER_ENTRY_INLINE {
    if (rows < 0) rows = r;
    else if (r != rows) same = false;
  });
  if (!same) {
    ErrorMessage m;
    m << "hookfuse: ";
    if (whole_step) m << "the step (its forward pass and fetches)";
    else describe_reader(m, what);
    m << " reads placeholders fed with different row counts (every placeholder of a step must "
         "get the same batch):";
    int listed = 0;
    batched([&](Index r, std::string_view name) HOOKFUSE_PER_ENTRY_INLINE {
      m << (listed++ == 0 ? " '" : "; '") << name << "' " << static_cast<long long>(r)
        << " rows";
    });
    fail<Error>(m.str());
  }
}

}  // namespace hookfuse::detail
