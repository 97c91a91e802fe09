// hookfuse/io/detail/buffer_bytes.hpp: the byte-level helpers of io/buffer_checkpoint.hpp: a
// table-free CRC32C and little-endian reads, writes, copies and comparisons. No heap, no OS.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

namespace hookfuse::io::detail {

/// CRC32C, bitwise (no table: 64 bytes of code instead of a 1 KB table in flash): polynomial
/// 0x82F63B78 reflected, init and final XOR 0xFFFFFFFF; "123456789" gives 0xE3069283, the same
/// as io::crc32c.
constexpr std::uint32_t crc32c_update(std::uint32_t crc, const std::byte* p, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) {
    crc ^= static_cast<std::uint32_t>(p[i]);
    for (int k = 0; k < 8; ++k) crc = (crc >> 1) ^ (0x82F63B78u & (0u - (crc & 1u)));
  }
  return crc;
}
constexpr std::uint32_t crc32c_bitwise(const std::byte* p, std::size_t n) {
  return crc32c_update(0xFFFFFFFFu, p, n) ^ 0xFFFFFFFFu;
}

template <class T>
constexpr void put_le(std::byte* out, T v) {
  using U = std::make_unsigned_t<T>;
  const U u = static_cast<U>(v);
  for (std::size_t k = 0; k < sizeof(T); ++k)
    out[k] = static_cast<std::byte>((u >> (8 * k)) & 0xFFu);
}
template <class T>
constexpr T get_le(const std::byte* in) {
  using U = std::make_unsigned_t<T>;
  U u = 0;
  for (std::size_t k = 0; k < sizeof(T); ++k)
    u = static_cast<U>(u | (static_cast<U>(in[k]) << (8 * k)));
  return static_cast<T>(u);
}

/// Copies `count` elements of `size` bytes between native and little-endian order.
inline void copy_le(void* dst, const void* src, std::size_t count, std::size_t size) {
  if constexpr (std::endian::native == std::endian::little) {
    std::memcpy(dst, src, count * size);
  } else {
    auto* d = static_cast<unsigned char*>(dst);
    const auto* s = static_cast<const unsigned char*>(src);
    for (std::size_t i = 0; i < count; ++i)
      for (std::size_t k = 0; k < size; ++k) d[i * size + k] = s[i * size + size - 1 - k];
  }
}

/// True when `count` native elements of `size` bytes equal their little-endian bytes.
inline bool equal_le(const void* native, const void* le, std::size_t count, std::size_t size) {
  if constexpr (std::endian::native == std::endian::little) {
    return std::memcmp(native, le, count * size) == 0;
  } else {
    const auto* n = static_cast<const unsigned char*>(native);
    const auto* l = static_cast<const unsigned char*>(le);
    for (std::size_t i = 0; i < count; ++i)
      for (std::size_t k = 0; k < size; ++k)
        if (n[i * size + k] != l[i * size + size - 1 - k]) return false;
    return true;
  }
}

}  // namespace hookfuse::io::detail
