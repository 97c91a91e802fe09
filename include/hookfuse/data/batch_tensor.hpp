// hookfuse/data/batch_tensor.hpp: what every numpy_input_fn-style input hands the session's
// feeds (BatchTensor), and the element types such an input holds (detail::numpy_dtype).
// Shared by data/input_fn.hpp and data/numpy_columns.hpp.
#pragma once

#include <cstdint>
#include <type_traits>

namespace hookfuse::data {

/// One tensor of the current batch as an input hands it to the session's feeds: `cols` values
/// per row, rows() rows, row-major.
template <class T>
struct BatchTensor {
  const T* data;
  std::int64_t cols;
};

namespace detail {
/// float, double, int32 or int64: the element types of numpy_input_fn's arrays.
template <class T>
inline constexpr bool numpy_dtype = std::is_same_v<T, float> || std::is_same_v<T, double> ||
                                    std::is_same_v<T, std::int32_t> ||
                                    std::is_same_v<T, std::int64_t>;
}  // namespace detail

}  // namespace hookfuse::data
