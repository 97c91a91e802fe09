// hookfuse/io/crc32c.hpp: CRC32C (Castagnoli) and TensorFlow's masked form, shared by the
// TFRecord framing of event files, LevelDB table blocks and tensor-bundle entries.
#pragma once

#include <boost/crc.hpp>

#include <cstddef>
#include <cstdint>
#include <span>

namespace hookfuse::io {

/// Running CRC32C: polynomial 0x1EDC6F41, init and final XOR 0xFFFFFFFF, reflected input and
/// output (the SSE4.2 `crc32` instruction, LevelDB's `crc32c::Value`, TensorFlow's
/// `tsl::crc32c::Value`). Feed bytes with `update`, read with `value`.
class Crc32c {
 public:
  void update(const void* data, std::size_t size) noexcept { crc_.process_bytes(data, size); }
  void update(std::span<const std::byte> bytes) noexcept { update(bytes.data(), bytes.size()); }
  [[nodiscard]] std::uint32_t value() const noexcept { return crc_.checksum(); }

 private:
  boost::crc_optimal<32, 0x1EDC6F41u, 0xFFFFFFFFu, 0xFFFFFFFFu, true, true> crc_;
};

/// CRC32C of `size` bytes at `data` ("123456789" gives 0xE3069283).
[[nodiscard]] inline std::uint32_t crc32c(const void* data, std::size_t size) noexcept {
  Crc32c c;
  c.update(data, size);
  return c.value();
}

/// TensorFlow's stored form of a CRC (tsl/lib/hash/crc32c.h, LevelDB util/crc32c.h): rotated
/// right by 15 bits, plus 0xa282ead8, so that a CRC of bytes that embed CRCs stays well mixed.
inline constexpr std::uint32_t kCrcMaskDelta = 0xa282ead8u;

[[nodiscard]] constexpr std::uint32_t mask_crc(std::uint32_t crc) noexcept {
  return ((crc >> 15) | (crc << 17)) + kCrcMaskDelta;
}

[[nodiscard]] constexpr std::uint32_t unmask_crc(std::uint32_t masked) noexcept {
  const std::uint32_t r = masked - kCrcMaskDelta;
  return (r >> 17) | (r << 15);
}

/// mask_crc(crc32c(data, size)).
[[nodiscard]] inline std::uint32_t masked_crc32c(const void* data, std::size_t size) noexcept {
  return mask_crc(crc32c(data, size));
}

}  // namespace hookfuse::io
