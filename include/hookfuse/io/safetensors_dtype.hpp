// hookfuse/io/safetensors_dtype.hpp: what the safetensors reader and writer share: element
// types (names in the JSON header, sizes, the C++ types that hold them), the metadata map, and
// overflow-checked shape arithmetic.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>

namespace hookfuse::io::safetensors {

static_assert(std::endian::native == std::endian::little,
              "hookfuse/io/safetensors.hpp stores tensors as they are in memory: little-endian "
              "hosts only");

/// The `__metadata__` map (string to string; Python `save_file(..., metadata=...)`).
using Metadata = std::map<std::string, std::string>;

/// A tensor's element type, as safetensors' Rust `Dtype` enum, in its declaration order
/// (increasing alignment), which the reference writer's sort relies on (largest first).
/// BF16, F16 and the 8-bit floats have no standard C++ type: they are read and written as
/// raw bytes (SafetensorsFile::read_bytes, TensorRef with a byte span). Not supported: the
/// sub-byte F4/F6 types, F8_*FNUZ and C64 (a file using them is rejected with an error naming
/// the tensor and the dtype).
enum class Dtype : std::uint8_t {
  BOOL,
  U8,
  I8,
  F8_E5M2,
  F8_E4M3,
  F8_E8M0,
  I16,
  U16,
  F16,
  BF16,
  I32,
  U32,
  F32,
  F64,
  I64,
  U64,
};

/// Bytes per element (the reference `Dtype::size`).
[[nodiscard]] constexpr std::size_t dtype_size(Dtype d) noexcept {
  switch (d) {
    case Dtype::BOOL:
    case Dtype::U8:
    case Dtype::I8:
    case Dtype::F8_E5M2:
    case Dtype::F8_E4M3:
    case Dtype::F8_E8M0:
      return 1;
    case Dtype::I16:
    case Dtype::U16:
    case Dtype::F16:
    case Dtype::BF16:
      return 2;
    case Dtype::I32:
    case Dtype::U32:
    case Dtype::F32:
      return 4;
    case Dtype::F64:
    case Dtype::I64:
    case Dtype::U64:
      return 8;
  }
  return 0;
}

/// The header's name of `d`: "F32", "BF16", "BOOL", ...
[[nodiscard]] constexpr std::string_view dtype_name(Dtype d) noexcept {
  switch (d) {
    case Dtype::BOOL:
      return "BOOL";
    case Dtype::U8:
      return "U8";
    case Dtype::I8:
      return "I8";
    case Dtype::F8_E5M2:
      return "F8_E5M2";
    case Dtype::F8_E4M3:
      return "F8_E4M3";
    case Dtype::F8_E8M0:
      return "F8_E8M0";
    case Dtype::I16:
      return "I16";
    case Dtype::U16:
      return "U16";
    case Dtype::F16:
      return "F16";
    case Dtype::BF16:
      return "BF16";
    case Dtype::I32:
      return "I32";
    case Dtype::U32:
      return "U32";
    case Dtype::F32:
      return "F32";
    case Dtype::F64:
      return "F64";
    case Dtype::I64:
      return "I64";
    case Dtype::U64:
      return "U64";
  }
  return "?";
}

/// The Dtype named `name` (exact, case-sensitive, as the reference), or nullopt.
[[nodiscard]] constexpr std::optional<Dtype> parse_dtype(std::string_view name) noexcept {
  for (auto i = static_cast<std::uint8_t>(Dtype::BOOL); i <= static_cast<std::uint8_t>(Dtype::U64);
       ++i)
    if (dtype_name(static_cast<Dtype>(i)) == name) return static_cast<Dtype>(i);
  return std::nullopt;
}

namespace detail {
template <class T>
inline constexpr std::optional<Dtype> dtype_for = std::nullopt;
template <>
inline constexpr std::optional<Dtype> dtype_for<bool> = Dtype::BOOL;
template <>
inline constexpr std::optional<Dtype> dtype_for<std::uint8_t> = Dtype::U8;
template <>
inline constexpr std::optional<Dtype> dtype_for<std::int8_t> = Dtype::I8;
template <>
inline constexpr std::optional<Dtype> dtype_for<std::int16_t> = Dtype::I16;
template <>
inline constexpr std::optional<Dtype> dtype_for<std::uint16_t> = Dtype::U16;
template <>
inline constexpr std::optional<Dtype> dtype_for<std::int32_t> = Dtype::I32;
template <>
inline constexpr std::optional<Dtype> dtype_for<std::uint32_t> = Dtype::U32;
template <>
inline constexpr std::optional<Dtype> dtype_for<float> = Dtype::F32;
template <>
inline constexpr std::optional<Dtype> dtype_for<double> = Dtype::F64;
template <>
inline constexpr std::optional<Dtype> dtype_for<std::int64_t> = Dtype::I64;
template <>
inline constexpr std::optional<Dtype> dtype_for<std::uint64_t> = Dtype::U64;
}  // namespace detail

/// A C++ type that holds one element of a safetensors dtype bit for bit: bool, (u)int8/16/32/64,
/// float (F32, IEEE binary32), double (F64).
template <class T>
concept Element = detail::dtype_for<std::remove_cv_t<T>>
.has_value() && sizeof(T) == dtype_size(*detail::dtype_for<std::remove_cv_t<T>>);

/// The Dtype that `T` holds: dtype_of<float> == Dtype::F32, dtype_of<std::int64_t> == I64.
template <Element T>
inline constexpr Dtype dtype_of = *detail::dtype_for<std::remove_cv_t<T>>;

namespace detail {

/// a * b, or false on overflow.
inline bool checked_mul(std::uint64_t a, std::uint64_t b, std::uint64_t& out) noexcept {
  return !__builtin_mul_overflow(a, b, &out);
}

/// product(shape) * dtype_size, or false on overflow.
inline bool byte_count(std::span<const std::uint64_t> shape, Dtype dtype,
                       std::uint64_t& out) noexcept {
  std::uint64_t n = 1;
  for (const std::uint64_t d : shape)
    if (!checked_mul(n, d, n)) return false;
  return checked_mul(n, dtype_size(dtype), out);
}

inline std::string shape_text(std::span<const std::uint64_t> shape) {
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

}  // namespace detail

}  // namespace hookfuse::io::safetensors
