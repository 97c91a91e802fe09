// hookfuse/data/gzip.hpp: in-memory gzip decompression with zlib (detail; used by the IDX reader).
//
// Needs zlib (link with -lz). Only the IDX reader includes this header, so code that uses the
// input function alone does not depend on zlib.
#pragma once

#include <zlib.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "hookfuse/config.hpp"
#include "hookfuse/data/errors.hpp"

namespace hookfuse::detail {

/// True when `bytes` starts with the gzip magic bytes 1f 8b (RFC 1952).
inline bool is_gzip(const std::vector<std::uint8_t>& bytes) {
  return bytes.size() >= 2 && bytes[0] == 0x1f && bytes[1] == 0x8b;
}

/// Decompresses a whole gzip file held in memory, including concatenated members (as gzip(1)
/// and zlib's gzread do). `name` (the file path) prefixes every error message.
/// Throws data::DataError("<name>: corrupt gzip data: ...") on a bad header, a bad deflate
/// stream, a CRC/length mismatch, a stream that ends early (truncated .gz) or bytes after the
/// last member.
inline std::vector<std::uint8_t> gunzip(const std::vector<std::uint8_t>& in,
                                        const std::string& name) {
  using data::DataError;
  // zlib counts in uInt (32 bits): feed and drain in chunks so inputs over 4 GiB work too.
  constexpr std::size_t kChunk = std::size_t{1} << 30;

  z_stream zs{};  // zalloc/zfree/opaque = Z_NULL: zlib's default allocator
  // 16 + MAX_WBITS: expect a gzip wrapper (header + CRC-32 + length trailer), not zlib/raw.
  if (inflateInit2(&zs, 16 + MAX_WBITS) != Z_OK) {
    fail<DataError>(name + ": cannot initialise zlib inflate" +
                    (zs.msg != nullptr ? std::string(": ") + zs.msg : std::string()));
  }
  struct InflateEnd {
    z_stream* s;
    ~InflateEnd() { inflateEnd(s); }
  } const end_guard{&zs};

  // Size hint: the gzip trailer's ISIZE is the member's length mod 2^32 (exact for one member
  // under 4 GiB); capped by deflate's maximum ratio (~1032:1) so a bogus trailer cannot make us
  // allocate absurd amounts. +1 so the end of the stream is seen before the buffer is full.
  std::size_t hint = 64 * 1024;
  if (in.size() >= 18) {
    const std::size_t n = in.size();
    const std::uint32_t isize = std::uint32_t{in[n - 4]} | (std::uint32_t{in[n - 3]} << 8) |
                                (std::uint32_t{in[n - 2]} << 16) | (std::uint32_t{in[n - 1]} << 24);
    hint = std::min<std::size_t>(isize, in.size() * 1032);
  }
  std::vector<std::uint8_t> out(hint + 1);
  std::size_t produced = 0;

  std::size_t in_pos = 0;  // first input byte not yet handed to zlib
  auto feed = [&] {
    const std::size_t n = std::min(in.size() - in_pos, kChunk);
    // zlib's next_in is non-const unless ZLIB_CONST is defined; inflate never writes to it.
    zs.next_in = const_cast<Bytef*>(in.data() + in_pos);
    zs.avail_in = static_cast<uInt>(n);
    in_pos += n;
  };

  for (;;) {
    if (zs.avail_in == 0 && in_pos < in.size()) feed();
    if (produced == out.size())
      out.resize(out.size() + std::max<std::size_t>(out.size() / 2, 1 << 20));
    const std::size_t room = std::min(out.size() - produced, kChunk);
    zs.next_out = out.data() + produced;
    zs.avail_out = static_cast<uInt>(room);

    const int rc = inflate(&zs, Z_NO_FLUSH);
    produced += room - zs.avail_out;

    if (rc == Z_STREAM_END) {
      const std::size_t consumed = in_pos - zs.avail_in;  // bytes of `in` used so far
      if (consumed == in.size()) break;
      if (in.size() - consumed >= 2 && in[consumed] == 0x1f && in[consumed + 1] == 0x8b) {
        inflateReset(&zs);  // another gzip member follows
        in_pos = consumed;
        zs.avail_in = 0;
        continue;
      }
      fail<DataError>(name + ": corrupt gzip data: " + std::to_string(in.size() - consumed) +
                      " unexpected bytes after the end of the gzip stream (at offset " +
                      std::to_string(consumed) + ")");
    }
    if (rc == Z_OK) continue;
    if (rc == Z_BUF_ERROR && zs.avail_in == 0 && in_pos == in.size()) {
      fail<DataError>(name + ": corrupt gzip data: the compressed stream ends after " +
                      std::to_string(in.size()) + " bytes, before the gzip end-of-stream " +
                      "marker (truncated .gz file?)");
    }
    if (rc == Z_BUF_ERROR) continue;  // no progress this round; more input or room follows
    // Z_DATA_ERROR (bad header, bad deflate data, CRC or length mismatch), Z_MEM_ERROR, ...
    fail<DataError>(name + ": corrupt gzip data: " +
                    (zs.msg != nullptr ? std::string(zs.msg) : std::string(zError(rc))) +
                    " (zlib inflate error " + std::to_string(rc) + ")");
  }
  out.resize(produced);  // shrinks in place: no reallocation
  return out;
}

}  // namespace hookfuse::detail
