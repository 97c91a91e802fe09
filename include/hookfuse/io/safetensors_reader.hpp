// hookfuse/io/safetensors_reader.hpp: opening a safetensors file, validating its header as the
// reference reader does (`SafeTensors::deserialize`) before anything is used, and reading
// tensors on demand. See hookfuse/io/safetensors.hpp.
#pragma once

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "hookfuse/config.hpp"
#include "hookfuse/errors.hpp"
#include "hookfuse/io/atomic_file.hpp"
#include "hookfuse/io/detail/posix_file.hpp"
#include "hookfuse/io/detail/safetensors_json.hpp"
#include "hookfuse/io/errors.hpp"
#include "hookfuse/io/safetensors_dtype.hpp"

namespace hookfuse::io::safetensors {

/// The reference reader's limit on the header length N, in bytes (MAX_HEADER_SIZE).
inline constexpr std::uint64_t kMaxHeaderBytes = 100'000'000;

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
  /// (`Json` is a template parameter so that only the translation units that open a file
  /// instantiate nlohmann-json's parser.)
  template <class Json = nlohmann::json>
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
  [[nodiscard]] bool contains(std::string_view name) const noexcept {
    return find(name) != nullptr;
  }
  /// The header entry of `name`; NotFoundError naming the file and the tensor if absent.
  [[nodiscard]] const TensorInfo& info(std::string_view name) const {
    if (const TensorInfo* t = find(name)) return *t;
    ::hookfuse::detail::fail<NotFoundError>(path_.string() + ": no tensor \"" + std::string(name) +
                                            "\"");
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
  requires(!std::is_const_v<T>) void read(std::string_view name, std::span<T, Extent> out) const {
    const TensorInfo& t = info(name);
    if (t.dtype != dtype_of<T>)
      ::hookfuse::detail::fail<ValueError>(path_.string() + ": tensor \"" + t.name + "\" is " +
                                           std::string(dtype_name(t.dtype)) + ", read as " +
                                           std::string(dtype_name(dtype_of<T>)));
    if (out.size() != t.num_elements())
      ::hookfuse::detail::fail<ValueError>(path_.string() + ": tensor \"" + t.name +
                                           "\" of shape " + detail::shape_text(t.shape) + " has " +
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

  /// pread of `out.size()` bytes at absolute `offset`, in calls of at most kMaxIoChunkBytes
  /// (1 GiB); false if the file ends first. IoError naming the file on a read error.
  bool pread_all(std::uint64_t offset, std::span<std::byte> out) const {
    std::size_t done = 0;
    while (done < out.size()) {
      const ::ssize_t n =
          ::pread(fd_, out.data() + done,
                  std::min(out.size() - done, ::hookfuse::io::detail::kMaxIoChunkBytes),
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

template <class Json>
SafetensorsFile SafetensorsFile::open(const std::filesystem::path& path) {
  SafetensorsFile f;
  f.path_ = path;
  int err = 0;
  // stat() before open() and O_NONBLOCK: a FIFO or device is refused, never waited on.
  ::hookfuse::io::detail::Fd fd = ::hookfuse::io::detail::open_read_only(path, err);
  if (!fd) {
    if (err == ENOENT)
      ::hookfuse::detail::fail<NotFoundError>(path.string() + ": no such safetensors file");
    ::hookfuse::io::detail::fail_os("cannot open", path, err);
  }
  f.fd_ = fd.release();
  struct ::stat st {};
  if (::fstat(f.fd_, &st) != 0) f.detail_fail_os("cannot stat", errno);
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
    f.corrupt("truncated while reading the header: expected " + std::to_string(n) +
              " bytes at offset 8, the file ended first");
  detail::RawHeader raw;
  std::string error;
  if (!detail::parse_header<Json>(header, raw, error)) f.corrupt("header: " + error);
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
              (previous == nullptr       ? std::string("the first tensor must start at 0")
               : t.data_begin < expected ? "it overlaps tensor \"" + previous->name + "\""
                                         : "a gap after tensor \"" + previous->name + "\"") +
              ") (InvalidOffset)");
    expected = t.data_end;
    previous = &t;
  }
  for (std::size_t i = 0; i < tensors_.size(); ++i) index_.emplace(tensors_[i].name, i);
  if (expected != file_size - data_start_)
    corrupt("the tensors cover " + std::to_string(expected) + " bytes of data, the file has " +
            std::to_string(file_size - data_start_) +
            " after the header (MetadataIncompleteBuffer)");
}

}  // namespace hookfuse::io::safetensors
