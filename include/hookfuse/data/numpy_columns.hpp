// hookfuse/data/numpy_columns.hpp: numpy_input_fn with x as a dict of named arrays,
// `numpy_input_fn(x={"x1": a, "x2": b}, y=labels, ...)`: each named column feeds the placeholder
// of the same name.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "hookfuse/data/batch_order.hpp"
#include "hookfuse/data/batch_tensor.hpp"
#include "hookfuse/data/errors.hpp"
#include "hookfuse/fixed_string.hpp"

namespace hookfuse::data {

/// A named feature array: num_examples x cols values of T (float, double, int32 or int64),
/// example-major. Not a copy: the array must outlive the input function.
template <fixed_string Name, class T>
struct Column {
  static_assert(detail::numpy_dtype<T>, "data::Column: T is float, double, int32 or int64");
  static constexpr auto name = Name;
  using scalar = T;
  const T* data;
  std::int64_t cols;
};

/// `column<"x1">(a.data(), 3)`: the feature column "x1", 3 values per example.
template <fixed_string Name, class T>
Column<Name, T> column(const T* data, std::int64_t cols) {
  return {data, cols};
}

/// Options of NumpyColumnsInputFn (`scale` is not used: columns are copied unchanged).
using NumpyColumnsOptions = NumpyInputFnOptions<double>;

/// Minibatches over several named feature columns and optional targets of Y, with
/// NumpyInputFn's epochs, batches and shuffle (one permutation for all columns, so row r of
/// every column is the same example). Tensors for the session's feeds: the columns in order,
/// then the targets (when given): `feeds<"x1", "x2", "labels">(input)`, where the column
/// names must match (checked at compile time). Buffers are allocated in the constructor only.
template <class Y, class... Columns>
class NumpyColumnsInputFn {
  static_assert(sizeof...(Columns) > 0, "NumpyColumnsInputFn: give at least one column");
  static_assert(detail::numpy_dtype<Y>, "NumpyColumnsInputFn: Y is float, double, int32 or int64");

 public:
  /// Throws std::invalid_argument naming the column on a negative column count or a null array
  /// with examples, and on bad options (see NumpyInputFn).
  NumpyColumnsInputFn(std::int64_t num_examples, std::tuple<Columns...> columns, const Y* targets,
                      const NumpyColumnsOptions& options)
      : order_(kWho, num_examples, options), src_(columns), y_(targets) {
    const std::int64_t capacity = order_.capacity();
    [&]<std::size_t... K>(std::index_sequence<K...>) {
      (allocate(std::get<K>(src_), std::get<K>(bufs_), capacity), ...);
    }(std::index_sequence_for<Columns...>{});
    if (y_ != nullptr) ybuf_.resize(static_cast<std::size_t>(capacity));
  }

  /// Fills the next batch; false at end of input. Does not allocate.
  bool next() {
    if (!order_.next()) return false;
    [&]<std::size_t... K>(std::index_sequence<K...>) {
      (gather(std::get<K>(src_), std::get<K>(bufs_)), ...);
    }(std::index_sequence_for<Columns...>{});
    if (y_ != nullptr) hookfuse::detail::gather_rows(ybuf_.data(), y_, 1, order_);
    return true;
  }
  void reset() { order_.reset(); }

  std::int64_t rows() const { return order_.rows(); }
  std::int64_t batch_size() const { return order_.batch_size(); }
  std::int64_t capacity() const { return order_.capacity(); }
  std::int64_t num_examples() const { return order_.num_examples(); }
  int epoch() const { return order_.epoch(); }
  bool has_labels() const { return y_ != nullptr; }

  /// The session's view: the columns in order, then the targets.
  std::int64_t num_tensors() const {
    return static_cast<std::int64_t>(sizeof...(Columns)) + (has_labels() ? 1 : 0);
  }
  template <std::size_t K>
  auto tensor() const {
    static_assert(K <= sizeof...(Columns),
                  "NumpyColumnsInputFn: more feeds than columns plus targets");
    if constexpr (K < sizeof...(Columns))
      return BatchTensor<typename std::tuple_element_t<K, std::tuple<Columns...>>::scalar>{
          std::get<K>(bufs_).data(), std::get<K>(src_).cols};
    else
      return BatchTensor<Y>{ybuf_.data(), 1};
  }
  /// The name of tensor K: the column's, or empty for the targets (any placeholder name).
  template <std::size_t K>
  static constexpr std::string_view tensor_name() {
    if constexpr (K < sizeof...(Columns))
      return std::tuple_element_t<K, std::tuple<Columns...>>::name.view();
    else
      return {};
  }

  /// The current batch of column `Name`: rows() x cols values, row-major.
  template <fixed_string Name>
  const auto* column_data() const {
    constexpr std::size_t k = index_of<Name>();
    static_assert(k < sizeof...(Columns), "NumpyColumnsInputFn: no column with this name");
    return std::get<k>(bufs_).data();
  }
  const Y* labels_data() const { return ybuf_.data(); }

 private:
  static constexpr const char* kWho = "NumpyColumnsInputFn";

  template <fixed_string Name>
  static constexpr std::size_t index_of() {
    std::size_t i = 0, found = sizeof...(Columns);
    ((Columns::name == Name && found == sizeof...(Columns) ? (found = i, ++i) : ++i), ...);
    return found;
  }

  template <class C, class T>
  void allocate(const C& c, std::vector<T>& buf, std::int64_t capacity) {
    const std::string name(C::name.view());
    if (c.cols < 0)
      hookfuse::detail::BatchOrder::fail(kWho, "column '" + name + "' has " +
                                                   std::to_string(c.cols) + " columns");
    if (c.data == nullptr && c.cols > 0 && order_.num_examples() > 0)
      hookfuse::detail::BatchOrder::fail(kWho, "column '" + name + "' is null");
    if (c.cols > 0 && capacity > std::numeric_limits<std::int64_t>::max() / c.cols)
      hookfuse::detail::BatchOrder::fail(kWho, "column '" + name + "' is too large");
    buf.resize(static_cast<std::size_t>(capacity * c.cols));
  }
  template <class C, class T>
  void gather(const C& c, std::vector<T>& buf) {
    hookfuse::detail::gather_rows(buf.data(), c.data, c.cols, order_);
  }

  hookfuse::detail::BatchOrder order_;
  std::tuple<Columns...> src_;
  std::tuple<std::vector<typename Columns::scalar>...> bufs_;
  const Y* y_;
  std::vector<Y> ybuf_;
};

/// numpy_input_fn(x={"x1": a, "x2": b}, y=targets, batch_size, num_epochs, shuffle):
///
///     auto input = data::numpy_input_fn(n, std::tuple{data::column<"x1">(a, 3),
///                                                     data::column<"x2">(b, 1)},
///                                       y, {.batch_size = 32, .shuffle = true});
template <class Y, class... Columns>
NumpyColumnsInputFn<Y, Columns...> numpy_input_fn(std::int64_t num_examples,
                                                  std::tuple<Columns...> x, const Y* y,
                                                  const NumpyColumnsOptions& options) {
  return {num_examples, x, y, options};
}
/// Features only (y=None), for prediction.
template <class... Columns>
NumpyColumnsInputFn<std::int32_t, Columns...> numpy_input_fn(std::int64_t num_examples,
                                                             std::tuple<Columns...> x,
                                                             const NumpyColumnsOptions& options) {
  return {num_examples, x, nullptr, options};
}

}  // namespace hookfuse::data
