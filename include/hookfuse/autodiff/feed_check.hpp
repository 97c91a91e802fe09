// hookfuse/autodiff/feed_check.hpp: the compile-time checks of Graph::feed (the data's scalar
// type and static column count against the placeholder's) and the names the run-time messages
// use for scalar types.
#pragma once

#include <cstdint>
#include <string_view>
#include <type_traits>

#include "hookfuse/autodiff/storage.hpp"
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

}  // namespace hookfuse::detail
