// hookfuse/io/data_type.hpp: TensorFlow's DataType enum (types.proto) as stored in checkpoints,
// with the element types the tensor-bundle reader and writer support.
#pragma once

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace hookfuse::io {

/// TensorFlow's `DataType` (tensorflow/core/framework/types.proto), with its wire values.
/// Named here: the dtypes hookfuse reads and writes (DT_FLOAT, DT_DOUBLE, DT_INT32, DT_INT64)
/// and DT_STRING (listed and readable as strings, not writable). A checkpoint may hold any
/// other value (DT_HALF = 19, DT_BOOL = 10, ...): it is kept as is, listed, and reading it as
/// numbers is an "unsupported dtype" error.
enum class DataType : std::int32_t {
  DT_INVALID = 0,
  DT_FLOAT = 1,   ///< float32, 4 bytes
  DT_DOUBLE = 2,  ///< float64, 8 bytes
  DT_INT32 = 3,   ///< 4 bytes
  DT_STRING = 7,  ///< variable-length byte strings (TF2's `_CHECKPOINTABLE_OBJECT_GRAPH`)
  DT_INT64 = 9,   ///< 8 bytes (`global_step`)
};

/// The element types a bundle stores as raw little-endian numbers: float, double, int32, int64.
template <class T>
concept TensorElement = std::same_as<T, float> || std::same_as<T, double> ||
    std::same_as<T, std::int32_t> || std::same_as<T, std::int64_t>;

/// The DataType of a C++ element type (TensorFlow's `DataTypeToEnum<T>::value`).
template <TensorElement T>
inline constexpr DataType data_type_of = std::same_as<T, float>          ? DataType::DT_FLOAT
                                         : std::same_as<T, double>       ? DataType::DT_DOUBLE
                                         : std::same_as<T, std::int32_t> ? DataType::DT_INT32
                                                                         : DataType::DT_INT64;

/// Bytes per element of a numeric dtype hookfuse supports (float 4, double 8, int32 4, int64 8);
/// 0 for DT_STRING and every other value (TensorFlow's `DataTypeSize` also gives 0 for strings).
[[nodiscard]] constexpr std::size_t data_type_size(DataType dtype) noexcept {
  switch (dtype) {
    case DataType::DT_FLOAT:
    case DataType::DT_INT32:
      return 4;
    case DataType::DT_DOUBLE:
    case DataType::DT_INT64:
      return 8;
    default:
      return 0;
  }
}

/// True for the four numeric dtypes stored as raw numbers (data_type_size > 0).
[[nodiscard]] constexpr bool is_supported_numeric(DataType dtype) noexcept {
  return data_type_size(dtype) != 0;
}

/// TensorFlow's C++ name of a dtype value ("DT_FLOAT", "DT_HALF", ...), every value of
/// types.proto included; "" for a value types.proto does not define.
[[nodiscard]] constexpr std::string_view data_type_name(DataType dtype) noexcept {
  constexpr std::string_view names[] = {
      "DT_INVALID",    "DT_FLOAT",  "DT_DOUBLE",    "DT_INT32",   "DT_UINT8",   "DT_INT16",
      "DT_INT8",       "DT_STRING", "DT_COMPLEX64", "DT_INT64",   "DT_BOOL",    "DT_QINT8",
      "DT_QUINT8",     "DT_QINT32", "DT_BFLOAT16",  "DT_QINT16",  "DT_QUINT16", "DT_UINT16",
      "DT_COMPLEX128", "DT_HALF",   "DT_RESOURCE",  "DT_VARIANT", "DT_UINT32",  "DT_UINT64"};
  const auto v = static_cast<std::int32_t>(dtype);
  if (v < 0 || v >= static_cast<std::int32_t>(std::size(names))) return {};
  return names[v];
}

/// For messages: "DT_FLOAT" for a supported dtype or DT_STRING, "unsupported dtype 19 (DT_HALF)"
/// for any other value.
[[nodiscard]] inline std::string describe_data_type(DataType dtype) {
  if (is_supported_numeric(dtype) || dtype == DataType::DT_STRING) {
    return std::string(data_type_name(dtype));
  }
  std::string s = "unsupported dtype " + std::to_string(static_cast<std::int32_t>(dtype));
  if (const auto name = data_type_name(dtype); !name.empty()) {
    s += " (";
    s += name;
    s += ')';
  }
  return s;
}

}  // namespace hookfuse::io
