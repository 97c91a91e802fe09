// hookfuse/io/detail/string_tensor.hpp: decoding of a DT_STRING tensor's bytes in a bundle's data
// file (TensorFlow's tensor_bundle.cc ReadStringTensor layout), with its two CRC checks.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <vector>

#include "hookfuse/io/bundle_entry.hpp"
#include "hookfuse/io/crc32c.hpp"

namespace hookfuse::io::detail {

/// DataLossError "<at>: CRC32C mismatch over bytes [offset, +size): stored ..., computed ...".
template <class = void>
[[noreturn]] void fail_crc_mismatch(const std::string& at, const BundleEntry& e,
                                    std::uint32_t actual) {
  fail_data_loss(at, "CRC32C mismatch over bytes [" + std::to_string(e.offset) + ", +" +
                         std::to_string(e.size) + "): stored (masked) " + hex_u32(e.crc32c) +
                         ", computed (masked) " + hex_u32(mask_crc(actual)) +
                         "; the checkpoint is corrupt");
}

// TensorFlow's string layout: one varint64 length per element, the masked CRC32C of the
// lengths (each as uint32 LE, or uint64 when it does not fit), then the bytes of every
// element. The entry's CRC continues from the lengths' CRC over those 4 bytes and the strings.
template <class = void>
[[nodiscard]] std::vector<std::string> decode_string_tensor(std::span<const std::byte> bytes,
                                                            const BundleEntry& e,
                                                            const std::string& at) {
  const auto n = static_cast<std::uint64_t>(e.shape.num_elements());
  if (n > bytes.size()) {
    fail_data_loss(at, std::to_string(n) + " strings cannot fit in " +
                           std::to_string(bytes.size()) + " bytes");
  }
  std::vector<std::uint64_t> lengths;
  lengths.reserve(static_cast<std::size_t>(n));
  std::size_t pos = 0;
  Crc32c crc;
  for (std::uint64_t i = 0; i < n; ++i) {
    std::uint64_t len = 0;
    for (int shift = 0;; shift += 7) {
      if (pos >= bytes.size() || shift > 63) {
        fail_data_loss(at, "string length " + std::to_string(i) + " is cut off at byte " +
                               std::to_string(pos) + " of the " + std::to_string(bytes.size()) +
                               "-byte tensor, expected a complete varint");
      }
      const auto b = static_cast<std::uint8_t>(bytes[pos++]);
      len |= std::uint64_t{b & 0x7fu} << shift;
      if ((b & 0x80u) == 0) break;
    }
    if (len <= 0xffffffffu) {
      const auto len32 = static_cast<std::uint32_t>(len);
      crc.update(&len32, sizeof len32);
    } else {
      crc.update(&len, sizeof len);
    }
    lengths.push_back(len);
  }
  if (n > 0 || !bytes.empty()) {  // an empty string tensor may omit the checksum
    if (bytes.size() - pos < 4) {
      fail_data_loss(at, "lengths' checksum is cut off: expected 4 bytes at byte " +
                             std::to_string(pos) + ", the " + std::to_string(bytes.size()) +
                             "-byte tensor has " + std::to_string(bytes.size() - pos));
    }
    std::uint32_t stored = 0;
    std::memcpy(&stored, bytes.data() + pos, 4);
    if (stored != mask_crc(crc.value())) {
      fail_data_loss(at, "CRC32C mismatch of the string lengths: stored (masked) " +
                             hex_u32(stored) + ", computed (masked) " +
                             hex_u32(mask_crc(crc.value())) + "; the checkpoint is corrupt");
    }
    crc.update(bytes.data() + pos, 4);
    pos += 4;
  }
  std::vector<std::string> out;
  out.reserve(static_cast<std::size_t>(n));
  for (const std::uint64_t len : lengths) {
    if (len > bytes.size() - pos) {
      fail_data_loss(at, "string of " + std::to_string(len) + " bytes reaches past the " +
                             std::to_string(e.size) + "-byte tensor");
    }
    const auto* p = reinterpret_cast<const char*>(bytes.data() + pos);
    crc.update(p, static_cast<std::size_t>(len));
    out.emplace_back(p, static_cast<std::size_t>(len));
    pos += static_cast<std::size_t>(len);
  }
  if (pos != bytes.size()) {
    fail_data_loss(at, std::to_string(bytes.size() - pos) +
                           " bytes left after the last string, expected none");
  }
  if (crc.value() != unmask_crc(e.crc32c)) fail_crc_mismatch(at, e, crc.value());
  return out;
}

}  // namespace hookfuse::io::detail
