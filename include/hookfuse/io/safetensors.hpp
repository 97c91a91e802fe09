// hookfuse/io/safetensors.hpp: reading and writing safetensors files (huggingface/safetensors),
// the tensor format Python tools (safetensors.numpy / .torch, transformers) open directly.
//
// Layout: u64 little-endian N, then N bytes of JSON header, then the data area. The header maps
// each tensor name to {"dtype", "shape", "data_offsets": [begin, end]} (byte offsets into the
// data area, end exclusive) and may hold "__metadata__", a string-to-string map. Data is
// little-endian, row-major (C order), without strides; shape [] is a scalar (1 element), a zero
// dimension holds no bytes.
//
// The writer reproduces the reference writer (`safetensors::serialize`, Python
// `safetensors.numpy.save_file`) byte for byte: compact JSON, `__metadata__` first (keys sorted;
// the reference leaves their order to a hash map), tensors sorted by dtype, largest alignment
// first, then by name, the header padded with spaces to a multiple of 8 so the data starts
// 8-byte aligned. The reader validates the file as the reference reader does before anything is
// used. Little-endian hosts only.
//
//     namespace st = hookfuse::io::safetensors;
//     std::vector<float> w(784 * 256);  std::int64_t step = 100;
//     st::save_file("model.safetensors",
//                   {st::tensor_ref("dense/kernel", {784, 256}, w),
//                    st::tensor_ref("global_step", {}, std::span(&step, 1))},
//                   {{"format", "np"}});
//     auto f = st::SafetensorsFile::open("model.safetensors");
//     std::vector<float> kernel = f.get_tensor<float>("dense/kernel");
#pragma once

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <map>
#include <ranges>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "hookfuse/config.hpp"
#include "hookfuse/errors.hpp"
#include "hookfuse/io/atomic_file.hpp"
#include "hookfuse/io/detail/safetensors_json.hpp"
#include "hookfuse/io/errors.hpp"
#include "hookfuse/io/safetensors_dtype.hpp"

namespace hookfuse::io::safetensors {

static_assert(std::endian::native == std::endian::little,
              "hookfuse/io/safetensors.hpp stores tensors as they are in memory: little-endian "
              "hosts only");

/// The `__metadata__` map (string to string; Python `save_file(..., metadata=...)`).
using Metadata = std::map<std::string, std::string>;

/// The reference reader's limit on the header length N, in bytes (MAX_HEADER_SIZE).
inline constexpr std::uint64_t kMaxHeaderBytes = 100'000'000;

/// A tensor to write: its name, dtype, shape and bytes (borrowed; they must outlive the write).
/// `data.size()` must be product(shape) * dtype_size(dtype). Build typed ones with tensor_ref.
struct TensorRef {
  std::string name;
  Dtype dtype = Dtype::F32;
  std::vector<std::uint64_t> shape;
  std::span<const std::byte> data;
};

/// A TensorRef over `values`, a contiguous range (std::vector, std::array, std::span, C array)
/// of a C++ element type: float -> F32, double -> F64, std::int64_t -> I64, bool -> BOOL, ...
/// The element count is checked against the shape when written. `values` is borrowed.
template <std::ranges::contiguous_range R>
  requires Element<std::ranges::range_value_t<R>>
[[nodiscard]] TensorRef tensor_ref(std::string name, std::vector<std::uint64_t> shape,
                                   const R& values) {
  using T = std::ranges::range_value_t<R>;
  const std::span<const T> view(std::ranges::data(values), std::ranges::size(values));
  return TensorRef{std::move(name), dtype_of<T>, std::move(shape), std::as_bytes(view)};
}

/// One tensor of a file as its header describes it, after validation.
struct TensorInfo {
  std::string name;
  Dtype dtype = Dtype::F32;
  std::vector<std::uint64_t> shape;  // [] for a scalar
  std::uint64_t data_begin = 0;      // byte offsets into the data area, end exclusive
  std::uint64_t data_end = 0;

  /// product(shape); 1 for a scalar.
  [[nodiscard]] std::uint64_t num_elements() const noexcept {
    std::uint64_t n = 1;
    for (const std::uint64_t d : shape) n *= d;  // validated not to overflow
    return n;
  }
  [[nodiscard]] std::uint64_t num_bytes() const noexcept { return data_end - data_begin; }
};

namespace detail {

/// a * b, or false on overflow.
inline bool checked_mul(std::uint64_t a, std::uint64_t b, std::uint64_t& out) noexcept {
  return !__builtin_mul_overflow(a, b, &out);
}

/// product(shape) * dtype_size, or false on overflow.
inline bool byte_count(std::span<const std::uint64_t> shape, Dtype dtype, std::uint64_t& out) noexcept {
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

/// The padded header JSON for `tensors` in the reference writer's order, which is returned.
inline std::string prepare(std::span<const TensorRef> tensors, const Metadata& metadata,
                           std::vector<const TensorRef*>& order) {
  order.clear();
  for (const TensorRef& t : tensors) {
    if (t.name == "__metadata__")
      ::hookfuse::detail::fail<ValueError>("safetensors: a tensor cannot be named \"__metadata__\"");
    if (!is_utf8(t.name))
      ::hookfuse::detail::fail<ValueError>("safetensors: tensor name is not valid UTF-8");
    std::uint64_t bytes = 0;
    const bool fits = byte_count(t.shape, t.dtype, bytes);
    if (!fits || bytes != t.data.size())
      ::hookfuse::detail::fail<ValueError>(
          "safetensors: tensor \"" + t.name + "\": shape " + shape_text(t.shape) + " of " +
          std::string(dtype_name(t.dtype)) + " needs " +
          (fits ? std::to_string(bytes) : std::string("more than 2^64")) + " bytes, the data has " +
          std::to_string(t.data.size()));
    order.push_back(&t);
  }
  std::sort(order.begin(), order.end(), [](const TensorRef* a, const TensorRef* b) {
    if (a->dtype != b->dtype) return a->dtype > b->dtype;
    return a->name < b->name;
  });
  {
    std::vector<std::string_view> names;
    for (const TensorRef* t : order) names.push_back(t->name);
    std::sort(names.begin(), names.end());
    if (auto dup = std::adjacent_find(names.begin(), names.end()); dup != names.end())
      ::hookfuse::detail::fail<ValueError>("safetensors: tensor \"" + std::string(*dup) +
                                           "\" given twice");
  }
  std::string json = "{";
  if (!metadata.empty()) {
    json += "\"__metadata__\":{";
    bool first = true;
    for (const auto& [key, value] : metadata) {
      if (!is_utf8(key) || !is_utf8(value))
        ::hookfuse::detail::fail<ValueError>("safetensors: metadata is not valid UTF-8");
      if (!first) json += ',';
      first = false;
      append_json_string(json, key);
      json += ':';
      append_json_string(json, value);
    }
    json += '}';
  }
  std::uint64_t offset = 0;
  for (const TensorRef* t : order) {
    if (json.size() > 1) json += ',';
    append_json_string(json, t->name);
    json += ":{\"dtype\":\"";
    json += dtype_name(t->dtype);
    json += "\",\"shape\":[";
    for (std::size_t i = 0; i < t->shape.size(); ++i) {
      if (i) json += ',';
      json += std::to_string(t->shape[i]);
    }
    json += "],\"data_offsets\":[" + std::to_string(offset) + ",";
    offset += t->data.size();
    json += std::to_string(offset) + "]}";
  }
  json += '}';
  json.append((8 - json.size() % 8) % 8, ' ');
  return json;
}

inline void put_u64_le(std::byte* out, std::uint64_t v) noexcept {
  for (int i = 0; i < 8; ++i) out[i] = static_cast<std::byte>((v >> (8 * i)) & 0xffu);
}

}  // namespace detail

/// The whole file in memory (the reference `safetensors::serialize(data, data_info)`).
/// Throws hookfuse::ValueError naming the tensor for a data size that does not match its
/// shape and dtype, a duplicate name, the name "__metadata__", or text that is not UTF-8.
[[nodiscard]] inline std::vector<std::byte> serialize(std::span<const TensorRef> tensors,
                                                      const Metadata& metadata = {}) {
  std::vector<const TensorRef*> order;
  const std::string header = detail::prepare(tensors, metadata, order);
  std::size_t total = 8 + header.size();
  for (const TensorRef* t : order) total += t->data.size();
  std::vector<std::byte> out(total);
  detail::put_u64_le(out.data(), header.size());
  std::memcpy(out.data() + 8, header.data(), header.size());
  std::size_t at = 8 + header.size();
  for (const TensorRef* t : order) {
    if (!t->data.empty()) std::memcpy(out.data() + at, t->data.data(), t->data.size());
    at += t->data.size();
  }
  return out;
}

/// serialize for a braced list: serialize({tensor_ref(...), tensor_ref(...)}, metadata).
[[nodiscard]] inline std::vector<std::byte> serialize(const std::vector<TensorRef>& tensors,
                                                      const Metadata& metadata = {}) {
  return serialize(std::span<const TensorRef>(tensors), metadata);
}

/// Writes `tensors` to `path` crash-safely (AtomicFileWriter: the previous file stays whole
/// until the new one is complete), streaming the data without a copy (Python
/// `safetensors.numpy.save_file(tensors, filename, metadata)`; the metadata key is omitted when
/// `metadata` is empty). Errors as `serialize`, plus IoError naming the path and the system's
/// reason (missing directory, disk full, ...).
inline void save_file(const std::filesystem::path& path, std::span<const TensorRef> tensors,
                      const Metadata& metadata = {}) {
  std::vector<const TensorRef*> order;
  const std::string header = detail::prepare(tensors, metadata, order);
  std::byte length[8];
  detail::put_u64_le(length, header.size());
  AtomicFileWriter out(path);
  out.write(std::span<const std::byte>(length));
  out.write(header);
  for (const TensorRef* t : order) out.write(t->data);
  out.commit();
}

/// save_file for a braced list: save_file(path, {tensor_ref(...), tensor_ref(...)}, metadata).
inline void save_file(const std::filesystem::path& path, const std::vector<TensorRef>& tensors,
                      const Metadata& metadata = {}) {
  save_file(path, std::span<const TensorRef>(tensors), metadata);
}

/// An open safetensors file (Python `safe_open(path, framework="np")`, Rust `SafeTensors`): the
/// validated header in memory, the data read on demand. Move-only; the file stays open.
class SafetensorsFile {
 public:
  /// Opens and validates `path`. Throws NotFoundError if it does not exist, IoError if it cannot
  /// be read, DataLossError naming the file (and the tensor and field) when it is not a valid
  /// safetensors file: shorter than 8 bytes; header length N above kMaxHeaderBytes or past the
  /// end of the file; header not JSON, not UTF-8, or not the schema (duplicate names or fields,
  /// missing fields, negative or fractional numbers); an unknown dtype; offsets with
  /// begin > end; a byte count that is not product(shape) * dtype size (overflow checked);
  /// tensors that overlap, leave a gap, do not start at 0, or do not end at the end of the file.
  [[nodiscard]] static SafetensorsFile open(const std::filesystem::path& path);

  SafetensorsFile(SafetensorsFile&& other) noexcept
      : path_(std::move(other.path_)),
        fd_(std::exchange(other.fd_, -1)),
        data_start_(other.data_start_),
        metadata_(std::move(other.metadata_)),
        tensors_(std::move(other.tensors_)),
        index_(std::move(other.index_)) {}
  SafetensorsFile& operator=(SafetensorsFile&& other) noexcept {
    if (this != &other) {
      close();
      path_ = std::move(other.path_);
      fd_ = std::exchange(other.fd_, -1);
      data_start_ = other.data_start_;
      metadata_ = std::move(other.metadata_);
      tensors_ = std::move(other.tensors_);
      index_ = std::move(other.index_);
    }
    return *this;
  }
  SafetensorsFile(const SafetensorsFile&) = delete;
  SafetensorsFile& operator=(const SafetensorsFile&) = delete;
  ~SafetensorsFile() { close(); }

  [[nodiscard]] const std::filesystem::path& path() const noexcept { return path_; }
  /// The `__metadata__` map (empty when absent or null). Python `safe_open(...).metadata()`.
  [[nodiscard]] const Metadata& metadata() const noexcept { return metadata_; }
  /// Every tensor, in data-offset order.
  [[nodiscard]] std::span<const TensorInfo> tensors() const noexcept { return tensors_; }
  /// Tensor names, sorted (Python `safe_open(...).keys()`).
  [[nodiscard]] std::vector<std::string> keys() const {
    std::vector<std::string> names;
    for (const TensorInfo& t : tensors_) names.push_back(t.name);
    std::sort(names.begin(), names.end());
    return names;
  }
  [[nodiscard]] bool contains(std::string_view name) const noexcept { return find(name) != nullptr; }
  /// The header entry of `name`; NotFoundError naming the file and the tensor if absent.
  [[nodiscard]] const TensorInfo& info(std::string_view name) const {
    if (const TensorInfo* t = find(name)) return *t;
    ::hookfuse::detail::fail<NotFoundError>(path_.string() + ": no tensor \"" + std::string(name) + "\"");
  }
  /// Absolute file offset of the data area (8 + N).
  [[nodiscard]] std::uint64_t data_start() const noexcept { return data_start_; }

  /// Copies the raw little-endian bytes of `name` (any dtype) into `out`, whose size must be
  /// info(name).num_bytes() (hookfuse::ValueError otherwise). DataLossError if the file was
  /// truncated since open, or for a BOOL byte other than 0 or 1.
  void read_bytes(std::string_view name, std::span<std::byte> out) const {
    const TensorInfo& t = info(name);
    if (out.size() != t.num_bytes())
      ::hookfuse::detail::fail<ValueError>(path_.string() + ": tensor \"" + t.name + "\" has " +
                                           std::to_string(t.num_bytes()) + " bytes, the buffer " +
                                           std::to_string(out.size()));
    read_at(t, out);
  }

  /// Reads tensor `name` into `out` (get_tensor into a caller buffer). Its dtype must be
  /// dtype_of<T> and out.size() its element count; hookfuse::ValueError naming both otherwise.
  template <Element T, std::size_t Extent>
    requires(!std::is_const_v<T>)
  void read(std::string_view name, std::span<T, Extent> out) const {
    const TensorInfo& t = info(name);
    if (t.dtype != dtype_of<T>)
      ::hookfuse::detail::fail<ValueError>(path_.string() + ": tensor \"" + t.name + "\" is " +
                                           std::string(dtype_name(t.dtype)) + ", read as " +
                                           std::string(dtype_name(dtype_of<T>)));
    if (out.size() != t.num_elements())
      ::hookfuse::detail::fail<ValueError>(path_.string() + ": tensor \"" + t.name + "\" of shape " +
                                           detail::shape_text(t.shape) + " has " +
                                           std::to_string(t.num_elements()) +
                                           " elements, the buffer " + std::to_string(out.size()));
    read_at(t, std::as_writable_bytes(std::span<T>(out)));
  }

  /// Tensor `name` as a new vector (Python `get_tensor(name)`, flattened in C order). Errors as
  /// `read`. bool tensors: read into a span of bool (std::vector<bool> has no storage to fill).
  template <Element T>
    requires(!std::is_same_v<T, bool>)
  [[nodiscard]] std::vector<T> get_tensor(std::string_view name) const {
    const TensorInfo& t = info(name);
    std::vector<T> values(t.dtype == dtype_of<T> ? static_cast<std::size_t>(t.num_elements()) : 0);
    read(name, std::span<T>(values));
    return values;
  }

 private:
  SafetensorsFile() = default;

  void close() noexcept {
    if (fd_ >= 0) ::close(std::exchange(fd_, -1));
  }

  [[nodiscard]] const TensorInfo* find(std::string_view name) const noexcept {
    const auto it = index_.find(name);
    return it == index_.end() ? nullptr : &tensors_[it->second];
  }

  [[noreturn]] void corrupt(const std::string& what) const {
    ::hookfuse::detail::fail<DataLossError>(path_.string() + ": " + what);
  }

  /// pread of `out.size()` bytes at absolute `offset`; false if the file ends first.
  bool pread_all(std::uint64_t offset, std::span<std::byte> out) const {
    std::size_t done = 0;
    while (done < out.size()) {
      const ::ssize_t n = ::pread(fd_, out.data() + done, out.size() - done,
                                  static_cast<::off_t>(offset + done));
      if (n < 0) {
        if (errno == EINTR) continue;
        detail_fail_os("cannot read", errno);
      }
      if (n == 0) return false;
      done += static_cast<std::size_t>(n);
    }
    return true;
  }

  [[noreturn]] void detail_fail_os(std::string_view what, int err) const {
    ::hookfuse::io::detail::fail_os(what, path_, err);
  }

  void read_at(const TensorInfo& t, std::span<std::byte> out) const {
    if (!pread_all(data_start_ + t.data_begin, out))
      corrupt("tensor \"" + t.name + "\": truncated: the file ends before byte " +
              std::to_string(data_start_ + t.data_end) + " (was it changed after it was opened?)");
    if (t.dtype == Dtype::BOOL)
      for (std::size_t i = 0; i < out.size(); ++i)
        if (std::to_integer<unsigned>(out[i]) > 1)
          corrupt("tensor \"" + t.name + "\": BOOL element " + std::to_string(i) + " is " +
                  std::to_string(std::to_integer<unsigned>(out[i])) + ", expected 0 or 1");
  }

  void validate(detail::RawHeader& raw, std::uint64_t file_size);

  std::filesystem::path path_;
  int fd_ = -1;
  std::uint64_t data_start_ = 0;
  Metadata metadata_;
  std::vector<TensorInfo> tensors_;
  std::map<std::string, std::size_t, std::less<>> index_;  // name -> position in tensors_
};

inline SafetensorsFile SafetensorsFile::open(const std::filesystem::path& path) {
  SafetensorsFile f;
  f.path_ = path;
  f.fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (f.fd_ < 0) {
    const int err = errno;
    if (err == ENOENT)
      ::hookfuse::detail::fail<NotFoundError>(path.string() + ": no such safetensors file");
    ::hookfuse::io::detail::fail_os("cannot open", path, err);
  }
  struct ::stat st {};
  if (::fstat(f.fd_, &st) != 0) f.detail_fail_os("cannot stat", errno);
  if (!S_ISREG(st.st_mode)) f.corrupt("not a regular file");
  const auto file_size = static_cast<std::uint64_t>(st.st_size);
  std::byte length[8];
  if (file_size < 8 || !f.pread_all(0, length))
    f.corrupt("truncated: " + std::to_string(file_size) +
              " bytes, a safetensors file starts with an 8-byte header length (HeaderTooSmall)");
  std::uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | std::to_integer<std::uint64_t>(length[i]);
  if (n > kMaxHeaderBytes)
    f.corrupt("header length " + std::to_string(n) + " exceeds the limit of " +
              std::to_string(kMaxHeaderBytes) + " bytes (HeaderTooLarge)");
  if (n > file_size - 8)
    f.corrupt("header length " + std::to_string(n) + " runs past the end of the file (" +
              std::to_string(file_size) + " bytes) (InvalidHeaderLength)");
  std::string header(static_cast<std::size_t>(n), '\0');
  if (!f.pread_all(8, std::as_writable_bytes(std::span(header))))
    f.corrupt("truncated while reading the header");
  detail::RawHeader raw;
  std::string error;
  if (!detail::parse_header(header, raw, error)) f.corrupt("header: " + error);
  f.data_start_ = 8 + n;
  f.validate(raw, file_size);
  return f;
}

inline void SafetensorsFile::validate(detail::RawHeader& raw, std::uint64_t file_size) {
  metadata_ = std::move(raw.metadata);
  tensors_.reserve(raw.entries.size());
  for (detail::RawEntry& e : raw.entries) {
    const std::string where = "tensor \"" + e.name + "\": ";
    const std::optional<Dtype> dtype = parse_dtype(e.dtype);
    if (!dtype)
      corrupt(where + "field \"dtype\": unsupported or unknown dtype \"" + e.dtype +
              "\" (hookfuse reads BOOL, U8, I8, I16, U16, I32, U32, I64, U64, F16, BF16, F32, "
              "F64, F8_E5M2, F8_E4M3, F8_E8M0)");
    if (e.begin > e.end)
      corrupt(where + "field \"data_offsets\": begin " + std::to_string(e.begin) + " > end " +
              std::to_string(e.end) + " (InvalidOffset)");
    std::uint64_t bytes = 0;
    if (!detail::byte_count(e.shape, *dtype, bytes))
      corrupt(where + "field \"shape\": " + detail::shape_text(e.shape) +
              " overflows 64 bits in bytes (ValidationOverflow)");
    if (e.end - e.begin != bytes)
      corrupt(where + "field \"data_offsets\": [" + std::to_string(e.begin) + ", " +
              std::to_string(e.end) + "] spans " + std::to_string(e.end - e.begin) +
              " bytes, shape " + detail::shape_text(e.shape) + " of " + e.dtype + " needs " +
              std::to_string(bytes) + " (TensorInvalidInfo)");
    tensors_.push_back(TensorInfo{std::move(e.name), *dtype, std::move(e.shape), e.begin, e.end});
  }
  std::sort(tensors_.begin(), tensors_.end(), [](const TensorInfo& a, const TensorInfo& b) {
    return std::pair(a.data_begin, a.data_end) < std::pair(b.data_begin, b.data_end);
  });
  std::uint64_t expected = 0;
  const TensorInfo* previous = nullptr;
  for (const TensorInfo& t : tensors_) {
    if (t.data_begin != expected)
      corrupt("tensor \"" + t.name + "\": field \"data_offsets\": begins at " +
              std::to_string(t.data_begin) + ", expected " + std::to_string(expected) + " (" +
              (previous == nullptr ? std::string("the first tensor must start at 0")
               : t.data_begin < expected ? "it overlaps tensor \"" + previous->name + "\""
                                         : "a gap after tensor \"" + previous->name + "\"") +
              ") (InvalidOffset)");
    expected = t.data_end;
    previous = &t;
  }
  for (std::size_t i = 0; i < tensors_.size(); ++i) index_.emplace(tensors_[i].name, i);
  if (expected != file_size - data_start_)
    corrupt("the tensors cover " + std::to_string(expected) + " bytes of data, the file has " +
            std::to_string(file_size - data_start_) + " after the header (MetadataIncompleteBuffer)");
}

}  // namespace hookfuse::io::safetensors
