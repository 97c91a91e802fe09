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
#include <utility>
#include <vector>

#include "hookfuse/config.hpp"
#include "hookfuse/data/errors.hpp"

namespace hookfuse::detail {

/// True when `bytes` starts with the gzip magic bytes 1f 8b (RFC 1952).
inline bool is_gzip(const std::vector<std::uint8_t>& bytes) {
  return bytes.size() >= 2 && bytes[0] == 0x1f && bytes[1] == 0x8b;
}

/// Incremental decompression of a whole gzip file held in memory, including concatenated
/// members (as gzip(1) and zlib's gzread do): `read(out, n)` inflates at most `n` more bytes, so
/// a caller that knows how many it needs (the IDX reader, from the header) never inflates more,
/// however large the stream would grow. `in` must outlive the inflater; `name` (the file path)
/// prefixes every error message. Throws data::DataError("<name>: corrupt gzip data: ...") on a
/// bad header, a bad deflate stream, a CRC/length mismatch, a stream that ends early (truncated
/// .gz) or bytes after the last member.
class GzipInflater {
 public:
  GzipInflater(const std::vector<std::uint8_t>& in, std::string name)
      : in_(in), name_(std::move(name)) {
    // 16 + MAX_WBITS: expect a gzip wrapper (header + CRC-32 + length trailer), not zlib/raw.
    // zalloc/zfree/opaque = Z_NULL (value-initialised): zlib's default allocator.
    if (inflateInit2(&zs_, 16 + MAX_WBITS) != Z_OK) {  // nothing allocated to free then
      fail<data::DataError>(name_ + ": cannot initialise zlib inflate" +
                            (zs_.msg != nullptr ? std::string(": ") + zs_.msg : std::string()));
    }
  }
  ~GzipInflater() { inflateEnd(&zs_); }
  GzipInflater(const GzipInflater&) = delete;
  GzipInflater& operator=(const GzipInflater&) = delete;

  /// Inflates up to `n` bytes into `out` and returns how many were written: `n`, or fewer only
  /// when the last gzip member has ended (its CRC and length checked). Throws DataError as above.
  std::size_t read(std::uint8_t* out, std::size_t n) {
    using data::DataError;
    std::size_t got = 0;
    while (got < n && !done_) {
      if (zs_.avail_in == 0 && in_pos_ < in_.size()) feed();
      const std::size_t room = std::min(n - got, kChunk);
      zs_.next_out = out + got;
      zs_.avail_out = static_cast<uInt>(room);

      const int rc = inflate(&zs_, Z_NO_FLUSH);
      const std::size_t produced = room - zs_.avail_out;
      got += produced;
      total_out_ += produced;

      if (rc == Z_STREAM_END) {
        const std::size_t consumed = in_pos_ - zs_.avail_in;  // bytes of `in` used so far
        if (consumed == in_.size()) {
          done_ = true;
          break;
        }
        if (in_.size() - consumed >= 2 && in_[consumed] == 0x1f && in_[consumed + 1] == 0x8b) {
          inflateReset(&zs_);  // another gzip member follows
          in_pos_ = consumed;
          zs_.avail_in = 0;
          continue;
        }
        fail<DataError>(name_ + ": corrupt gzip data: " + std::to_string(in_.size() - consumed) +
                        " unexpected bytes after the end of the gzip stream (at offset " +
                        std::to_string(consumed) + ")");
      }
      if (rc == Z_OK) continue;
      if (rc == Z_BUF_ERROR && zs_.avail_in == 0 && in_pos_ == in_.size()) {
        fail<DataError>(name_ + ": corrupt gzip data: the compressed stream ends after " +
                        std::to_string(in_.size()) + " bytes, before the gzip end-of-stream " +
                        "marker (truncated .gz file?)");
      }
      if (rc == Z_BUF_ERROR) continue;  // no progress this round; more input or room follows
      // Z_DATA_ERROR (bad header, bad deflate data, CRC or length mismatch), Z_MEM_ERROR, ...
      fail<DataError>(name_ + ": corrupt gzip data: " +
                      (zs_.msg != nullptr ? std::string(zs_.msg) : std::string(zError(rc))) +
                      " (zlib inflate error " + std::to_string(rc) + ", at compressed byte " +
                      std::to_string(in_pos_ - zs_.avail_in) + " of " +
                      std::to_string(in_.size()) + ", after " + std::to_string(total_out_) +
                      " bytes inflated)");
    }
    return got;
  }

  /// Bytes inflated so far, over all members.
  std::uint64_t total_out() const { return total_out_; }
  /// True once the last member has ended: `read` returns 0 from then on.
  bool done() const { return done_; }

 private:
  // zlib counts in uInt (32 bits): feed and drain in chunks so inputs over 4 GiB work too.
  static constexpr std::size_t kChunk = std::size_t{1} << 30;

  void feed() {
    const std::size_t n = std::min(in_.size() - in_pos_, kChunk);
    // zlib's next_in is non-const unless ZLIB_CONST is defined; inflate never writes to it.
    zs_.next_in = const_cast<Bytef*>(in_.data() + in_pos_);
    zs_.avail_in = static_cast<uInt>(n);
    in_pos_ += n;
  }

  const std::vector<std::uint8_t>& in_;
  std::string name_;
  z_stream zs_{};
  std::size_t in_pos_ = 0;  // first input byte not yet handed to zlib
  std::uint64_t total_out_ = 0;
  bool done_ = false;
};

/// Decompresses a whole gzip file held in memory (see GzipInflater), at most `max_bytes` of
/// output: a stream that inflates to more throws DataError("<name>: the gzip stream inflates to
/// more than <max_bytes> bytes") after inflating `max_bytes` + 1, never the rest.
inline std::vector<std::uint8_t> gunzip(const std::vector<std::uint8_t>& in,
                                        const std::string& name,
                                        std::size_t max_bytes = SIZE_MAX - 1) {
  GzipInflater inflater(in, name);
  // Size hint: the gzip trailer's ISIZE is the member's length mod 2^32 (exact for one member
  // under 4 GiB); capped by deflate's maximum ratio (~1032:1) and by `max_bytes`, so a bogus
  // trailer cannot make us allocate absurd amounts. +1 so the end is seen before the buffer
  // is full.
  std::size_t hint = 64 * 1024;
  if (in.size() >= 18) {
    const std::size_t n = in.size();
    const std::uint32_t isize = std::uint32_t{in[n - 4]} | (std::uint32_t{in[n - 3]} << 8) |
                                (std::uint32_t{in[n - 2]} << 16) | (std::uint32_t{in[n - 1]} << 24);
    hint = std::min<std::size_t>(isize, in.size() * 1032);
  }
  std::vector<std::uint8_t> out(std::min(hint, max_bytes) + 1);
  std::size_t produced = 0;
  for (;;) {
    if (produced == out.size()) {
      if (produced > max_bytes) {
        fail<data::DataError>(name + ": the gzip stream inflates to more than " +
                              std::to_string(max_bytes) + " bytes (inflation stopped after " +
                              std::to_string(inflater.total_out()) + " bytes)");
      }
      const std::size_t grow = std::max<std::size_t>(out.size() / 2, 1 << 20);
      out.resize(std::min(out.size() + grow, max_bytes + 1));
    }
    const std::size_t room = out.size() - produced;
    const std::size_t got = inflater.read(out.data() + produced, room);
    produced += got;
    if (got < room) break;  // the last member has ended
  }
  out.resize(produced);  // shrinks in place: no reallocation
  return out;
}

}  // namespace hookfuse::detail
