// hookfuse/io/buffer_checkpoint.hpp: a checkpoint in a caller-given byte buffer (standing in for
// a flash sector): named tensors and the global step, in a compact little-endian layout closed by
// a CRC32C. No heap, no file system, no exceptions: every function returns an error code.
//
// Layout (docs/embedded.md, "Checkpoint on the device"; all integers little-endian):
//
//   offset  size  field
//   0       4     magic "HFCK"
//   4       2     format version, 1
//   6       2     reserved, 0
//   8       8     global step, int64
//   16      4     number of tensor records, uint32
//   20      4     payload bytes: the records that follow the header, uint32
//   24      ...   the records, back to back; one record is
//                   2  name length L, uint16 (1 to 65535)
//                   1  dtype, TensorFlow's DataType number (1 float32, 2 float64, 3 int32,
//                      9 int64)
//                   1  rank R (0 to 4)
//                   4R dimension sizes, uint32 each, outermost first
//                   L  the name's bytes (no terminator)
//                   n  the values, row-major, little-endian, n = element size x product of dims
//   24+P    4     CRC32C (Castagnoli, unmasked) of bytes [0, 24+P), uint32
//
// This header knows nothing of sessions or variables: it takes any list of BufferTensor (name,
// dtype, dims, pointer to the values). hooks/device_checkpoint.hpp adapts a session's or a
// graph's checkpoint variables to it.
#pragma once

#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string_view>
#include <type_traits>

#include "hookfuse/io/detail/buffer_bytes.hpp"

namespace hookfuse::io {

/// Why a buffer checkpoint was not written or not restored (ok: it was).
enum class BufferCheckpointError : std::uint8_t {
  ok,
  too_small,          ///< save: the destination buffer cannot hold the checkpoint
  bad_tensor,         ///< save: a tensor with an empty or over-long name, rank > 4, a null pointer
  truncated,          ///< restore: fewer bytes than the header and its payload count say
  bad_magic,          ///< restore: the first 4 bytes are not "HFCK" (no checkpoint there)
  bad_version,        ///< restore: a format version other than 1
  crc_mismatch,       ///< restore: the stored CRC32C does not match the bytes (damaged)
  malformed,          ///< restore: records that do not fill the payload exactly
  unexpected_tensor,  ///< restore: the buffer holds a tensor the model does not have
  missing_tensor,     ///< restore: the model has a (non-optional) tensor the buffer lacks
  dtype_mismatch,     ///< restore: a tensor's dtype differs from the model's
  shape_mismatch,     ///< restore: a tensor's shape differs from the model's
  value_mismatch,     ///< verify: a tensor's values or the global step differ from the model's
};

namespace detail {
// clang-format off
inline constexpr std::array<std::string_view, 13> error_names = {
    "ok", "too_small", "bad_tensor", "truncated", "bad_magic", "bad_version", "crc_mismatch",
    "malformed", "unexpected_tensor", "missing_tensor", "dtype_mismatch", "shape_mismatch",
    "value_mismatch"};
// clang-format on
inline constexpr std::array<std::string_view, 13> error_descriptions = {
    "no error",
    "the destination buffer is too small for the checkpoint",
    "a tensor has an empty name, a name over 65535 bytes, rank over 4, a dimension over 2^32-1 "
    "or no data",
    "the buffer is shorter than the checkpoint's header and payload count",
    "the buffer does not start with the magic \"HFCK\"",
    "the checkpoint's format version is not 1",
    "the checkpoint's CRC32C does not match its bytes",
    "the tensor records do not fill the payload exactly",
    "the checkpoint holds a tensor the model does not have",
    "the model has a tensor the checkpoint lacks",
    "a tensor's dtype in the checkpoint differs from the model's",
    "a tensor's shape in the checkpoint differs from the model's",
    "a tensor's values or the global step in the checkpoint differ from the model's"};
}  // namespace detail

/// The enumerator's name, "crc_mismatch".
constexpr std::string_view name(BufferCheckpointError e) {
  const auto i = static_cast<std::size_t>(e);
  return i < detail::error_names.size() ? detail::error_names[i] : "unknown";
}

/// What the error means, in one sentence for a log line.
constexpr std::string_view describe(BufferCheckpointError e) {
  const auto i = static_cast<std::size_t>(e);
  return i < detail::error_descriptions.size() ? detail::error_descriptions[i] : "unknown error";
}

/// A tensor's element type, with TensorFlow's DataType numbers (DT_FLOAT = 1, DT_DOUBLE = 2,
/// DT_INT32 = 3, DT_INT64 = 9), as stored in a record.
enum class BufferDType : std::uint8_t { float32 = 1, float64 = 2, int32 = 3, int64 = 9 };

/// Bytes per element: 4 or 8 (0 for a value outside the enum).
constexpr std::size_t element_size(BufferDType d) {
  switch (d) {
    case BufferDType::float32:
    case BufferDType::int32:
      return 4;
    case BufferDType::float64:
    case BufferDType::int64:
      return 8;
  }
  return 0;
}

/// One tensor to save or restore: its name (the record's key), dtype, TensorFlow shape (`rank`
/// dims, outermost first; rank 0 is a scalar) and its values, product(dims) elements contiguous
/// in row-major order at `data`. A restore writes through `data`. `optional`: a restore from a
/// buffer without this name leaves the values alone instead of failing.
struct BufferTensor {
  static constexpr int max_rank = 4;
  std::string_view name;
  BufferDType dtype = BufferDType::float32;
  int rank = 0;
  std::array<std::int64_t, max_rank> dims{};
  void* data = nullptr;
  bool optional = false;

  constexpr std::int64_t num_elements() const {
    std::int64_t n = 1;
    for (int i = 0; i < rank; ++i) n *= dims[static_cast<std::size_t>(i)];
    return n;
  }
};

/// The outcome of save_buffer_checkpoint: `error`, the bytes written (`size`, from the start of
/// the destination) when ok, and the tensor at fault for bad_tensor.
struct BufferSaveResult {
  BufferCheckpointError error = BufferCheckpointError::ok;
  std::size_t size = 0;
  std::string_view tensor{};
  constexpr explicit operator bool() const { return error == BufferCheckpointError::ok; }
};

/// The outcome of restore_buffer_checkpoint: `error`, the restored global step when ok, and the
/// tensor at fault for the tensor errors (the model's name, or for unexpected_tensor the
/// buffer's, pointing into the buffer).
struct BufferRestoreResult {
  BufferCheckpointError error = BufferCheckpointError::ok;
  std::int64_t global_step = 0;
  std::string_view tensor{};
  constexpr explicit operator bool() const { return error == BufferCheckpointError::ok; }
};

/// Header and trailer sizes, the magic and the version of the layout above.
inline constexpr std::size_t kBufferCheckpointHeaderSize = 24;
inline constexpr std::size_t kBufferCheckpointCrcSize = 4;
inline constexpr std::uint16_t kBufferCheckpointVersion = 1;
inline constexpr std::array<std::byte, 4> kBufferCheckpointMagic = {std::byte{'H'}, std::byte{'F'},
                                                                    std::byte{'C'}, std::byte{'K'}};

namespace detail {

/// One record as read from a buffer: where its values are.
struct Record {
  std::string_view name;
  std::uint8_t dtype = 0;
  int rank = 0;
  std::array<std::int64_t, BufferTensor::max_rank> dims{};
  const std::byte* values = nullptr;
  std::size_t value_bytes = 0;
};

/// Parses the record at `p` (at most `end - p` bytes); nullptr when it does not fit or is
/// invalid, else the byte after it.
inline const std::byte* parse_record(const std::byte* p, const std::byte* end, Record& r) {
  if (end - p < 4) return nullptr;
  const auto len = get_le<std::uint16_t>(p);
  r.dtype = static_cast<std::uint8_t>(p[2]);
  r.rank = static_cast<int>(p[3]);
  p += 4;
  const std::size_t elem = element_size(static_cast<BufferDType>(r.dtype));
  if (len == 0 || r.rank > BufferTensor::max_rank || elem == 0) return nullptr;
  if (end - p < 4 * r.rank) return nullptr;
  std::uint64_t count = 1;
  for (int i = 0; i < r.rank; ++i, p += 4) {
    const auto d = get_le<std::uint32_t>(p);
    r.dims[static_cast<std::size_t>(i)] = d;
    count *= d;
    if (count > (std::uint64_t{1} << 32)) return nullptr;
  }
  if (static_cast<std::size_t>(end - p) < len) return nullptr;
  r.name = std::string_view(reinterpret_cast<const char*>(p), len);
  p += len;
  r.value_bytes = static_cast<std::size_t>(count) * elem;
  if (static_cast<std::size_t>(end - p) < r.value_bytes) return nullptr;
  r.values = p;
  return p + r.value_bytes;
}

/// The checked header of `in`: the payload's bounds and the step, or an error.
struct Parsed {
  BufferCheckpointError error = BufferCheckpointError::ok;
  std::int64_t global_step = 0;
  std::uint32_t count = 0;
  const std::byte* begin = nullptr;
  const std::byte* end = nullptr;
};
inline Parsed parse(std::span<const std::byte> in) {
  Parsed r;
  if (in.size() < kBufferCheckpointHeaderSize + kBufferCheckpointCrcSize) {
    r.error = BufferCheckpointError::truncated;
    return r;
  }
  if (std::memcmp(in.data(), kBufferCheckpointMagic.data(), 4) != 0) {
    r.error = BufferCheckpointError::bad_magic;
    return r;
  }
  if (get_le<std::uint16_t>(in.data() + 4) != kBufferCheckpointVersion) {
    r.error = BufferCheckpointError::bad_version;
    return r;
  }
  const std::uint64_t payload = get_le<std::uint32_t>(in.data() + 20);
  if (payload > in.size() - kBufferCheckpointHeaderSize - kBufferCheckpointCrcSize) {
    r.error = BufferCheckpointError::truncated;
    return r;
  }
  const std::size_t covered = kBufferCheckpointHeaderSize + static_cast<std::size_t>(payload);
  if (crc32c_bitwise(in.data(), covered) != get_le<std::uint32_t>(in.data() + covered)) {
    r.error = BufferCheckpointError::crc_mismatch;
    return r;
  }
  r.global_step = get_le<std::int64_t>(in.data() + 8);
  r.count = get_le<std::uint32_t>(in.data() + 16);
  r.begin = in.data() + kBufferCheckpointHeaderSize;
  r.end = in.data() + covered;
  return r;
}

}  // namespace detail

namespace detail {
/// Bytes of one tensor's record; 0 when the tensor is invalid (BufferCheckpointError::bad_tensor).
constexpr std::size_t record_size(const BufferTensor& t) {
  if (t.name.empty() || t.name.size() > 0xFFFFu || t.rank < 0 || t.rank > BufferTensor::max_rank ||
      t.data == nullptr)
    return 0;
  for (int d = 0; d < t.rank; ++d)
    if (t.dims[static_cast<std::size_t>(d)] < 0 || t.dims[static_cast<std::size_t>(d)] > 0xFFFFFFFF)
      return 0;
  return 4 + 4 * static_cast<std::size_t>(t.rank) + t.name.size() +
         static_cast<std::size_t>(t.num_elements()) * element_size(t.dtype);
}
}  // namespace detail

/// Bytes a checkpoint of `tensors` takes (header, records, CRC); 0 when a tensor is invalid (see
/// BufferCheckpointError::bad_tensor). `tensors` is any type with size() and operator[](i)
/// giving a BufferTensor (std::span<const BufferTensor>, std::array).
template <class Tensors>
std::size_t buffer_checkpoint_size(const Tensors& tensors) {
  std::size_t n = kBufferCheckpointHeaderSize + kBufferCheckpointCrcSize;
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    const std::size_t k = detail::record_size(BufferTensor(tensors[i]));
    if (k == 0) return 0;
    n += k;
  }
  return n;
}

/// Writes `tensors` and `global_step` into `out` in the layout above. Returns the bytes written
/// (from out[0]), or too_small (nothing written) when out.size() is below
/// buffer_checkpoint_size(tensors), or bad_tensor naming the first invalid tensor. Bytes of
/// `out` past the checkpoint are left as they are.
template <class Tensors>
BufferSaveResult save_buffer_checkpoint(const Tensors& tensors, std::int64_t global_step,
                                        std::span<std::byte> out) {
  BufferSaveResult r;
  const std::size_t need = buffer_checkpoint_size(tensors);
  if (need == 0) {
    r.error = BufferCheckpointError::bad_tensor;
    for (std::size_t i = 0; i < tensors.size() && r.tensor.empty(); ++i)
      if (detail::record_size(BufferTensor(tensors[i])) == 0)
        r.tensor = BufferTensor(tensors[i]).name;
    return r;
  }
  if (out.size() < need ||
      need - kBufferCheckpointHeaderSize - kBufferCheckpointCrcSize > 0xFFFFFFFFu) {
    r.error = BufferCheckpointError::too_small;
    return r;
  }
  std::byte* p = out.data();
  std::memcpy(p, kBufferCheckpointMagic.data(), 4);
  detail::put_le<std::uint16_t>(p + 4, kBufferCheckpointVersion);
  detail::put_le<std::uint16_t>(p + 6, 0);
  detail::put_le<std::int64_t>(p + 8, global_step);
  detail::put_le<std::uint32_t>(p + 16, static_cast<std::uint32_t>(tensors.size()));
  const std::size_t payload = need - kBufferCheckpointHeaderSize - kBufferCheckpointCrcSize;
  detail::put_le<std::uint32_t>(p + 20, static_cast<std::uint32_t>(payload));
  p += kBufferCheckpointHeaderSize;
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    const BufferTensor t = tensors[i];
    detail::put_le<std::uint16_t>(p, static_cast<std::uint16_t>(t.name.size()));
    p[2] = static_cast<std::byte>(t.dtype);
    p[3] = static_cast<std::byte>(t.rank);
    p += 4;
    for (int d = 0; d < t.rank; ++d, p += 4)
      detail::put_le<std::uint32_t>(
          p, static_cast<std::uint32_t>(t.dims[static_cast<std::size_t>(d)]));
    std::memcpy(p, t.name.data(), t.name.size());
    p += t.name.size();
    const std::size_t elem = element_size(t.dtype);
    const auto count = static_cast<std::size_t>(t.num_elements());
    detail::copy_le(p, t.data, count, elem);
    p += count * elem;
  }
  const std::size_t covered = kBufferCheckpointHeaderSize + payload;
  detail::put_le<std::uint32_t>(p, detail::crc32c_bitwise(out.data(), covered));
  r.size = need;
  return r;
}

/// Checks `in` (magic, version, sizes, CRC32C) and reads only its global step; the tensors are
/// not looked at. For deciding whether a buffer holds a checkpoint worth restoring.
inline BufferRestoreResult read_buffer_checkpoint_step(std::span<const std::byte> in) {
  const detail::Parsed h = detail::parse(in);
  return {h.error, h.error == BufferCheckpointError::ok ? h.global_step : 0, {}};
}

namespace detail {
/// restore_buffer_checkpoint (verify_step null) and verify_buffer_checkpoint (the model's step).
template <class Tensors>
BufferRestoreResult check_and_apply(const Tensors& tensors, std::span<const std::byte> in,
                                    const std::int64_t* verify_step) {
  BufferRestoreResult r;
  const detail::Parsed h = detail::parse(in);
  if (h.error != BufferCheckpointError::ok) {
    r.error = h.error;
    return r;
  }
  auto find = [&](std::string_view name, std::size_t& index) {
    for (std::size_t i = 0; i < tensors.size(); ++i)
      if (BufferTensor(tensors[i]).name == name) {
        index = i;
        return true;
      }
    return false;
  };
  // Pass 1: every record parses and matches a model tensor.
  const std::byte* p = h.begin;
  for (std::uint32_t k = 0; k < h.count; ++k) {
    detail::Record rec;
    p = detail::parse_record(p, h.end, rec);
    if (p == nullptr) {
      r.error = BufferCheckpointError::malformed;
      return r;
    }
    std::size_t i = 0;
    if (!find(rec.name, i)) {
      r.error = BufferCheckpointError::unexpected_tensor;
      r.tensor = rec.name;
      return r;
    }
    const BufferTensor t = tensors[i];
    r.tensor = t.name;
    if (rec.dtype != static_cast<std::uint8_t>(t.dtype)) {
      r.error = BufferCheckpointError::dtype_mismatch;
      return r;
    }
    bool same = rec.rank == t.rank;
    for (int d = 0; same && d < t.rank; ++d)
      same = rec.dims[static_cast<std::size_t>(d)] == t.dims[static_cast<std::size_t>(d)];
    if (!same) {
      r.error = BufferCheckpointError::shape_mismatch;
      return r;
    }
  }
  if (p != h.end) {
    r.error = BufferCheckpointError::malformed;
    r.tensor = {};
    return r;
  }
  // Pass 2: every non-optional model tensor has a record.
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    const BufferTensor t = tensors[i];
    if (t.optional) continue;
    bool found = false;
    const std::byte* q = h.begin;
    for (std::uint32_t k = 0; k < h.count && !found; ++k) {
      detail::Record rec;
      q = detail::parse_record(q, h.end, rec);
      found = rec.name == t.name;
    }
    if (!found) {
      r.error = BufferCheckpointError::missing_tensor;
      r.tensor = t.name;
      return r;
    }
  }
  // Pass 3: copy, or compare.
  p = h.begin;
  for (std::uint32_t k = 0; k < h.count; ++k) {
    detail::Record rec;
    p = detail::parse_record(p, h.end, rec);
    std::size_t i = 0;
    find(rec.name, i);
    const BufferTensor t = tensors[i];
    const std::size_t elem = element_size(t.dtype);
    if (verify_step == nullptr) {
      detail::copy_le(t.data, rec.values, rec.value_bytes / elem, elem);
    } else if (!detail::equal_le(t.data, rec.values, rec.value_bytes / elem, elem)) {
      r.error = BufferCheckpointError::value_mismatch;
      r.tensor = t.name;
      return r;
    }
  }
  r.tensor = {};
  r.global_step = h.global_step;
  if (verify_step != nullptr && *verify_step != h.global_step) {
    r.error = BufferCheckpointError::value_mismatch;
    r.tensor = "global_step";
  }
  return r;
}
}  // namespace detail

/// Restores `tensors` from the checkpoint at the start of `in` (bytes past it are ignored).
/// Checks everything before writing anything: the header, the CRC32C, that the records fill the
/// payload, that every record names a tensor of `tensors` with the same dtype and shape, and
/// that every non-optional tensor has a record; on any failure returns the error (naming the
/// tensor where there is one) and leaves every tensor untouched. On success copies every record
/// into its tensor and returns the saved global step (the caller sets its step from it).
template <class Tensors>
BufferRestoreResult restore_buffer_checkpoint(const Tensors& tensors,
                                              std::span<const std::byte> in) {
  return detail::check_and_apply(tensors, in, nullptr);
}

/// Checks, writing nothing, that the checkpoint in `in` holds exactly the values of `tensors`
/// (bit for bit) and `global_step`: the same checks as a restore, then value_mismatch naming
/// the first tensor that differs ("global_step" for the step). For reading back a flash write.
template <class Tensors>
BufferRestoreResult verify_buffer_checkpoint(const Tensors& tensors, std::int64_t global_step,
                                             std::span<const std::byte> in) {
  return detail::check_and_apply(tensors, in, &global_step);
}

}  // namespace hookfuse::io
