// hookfuse/io/safetensors_writer.hpp: writing safetensors files as the reference writer does
// (`safetensors::serialize`, Python `safetensors.numpy.save_file`), byte for byte: compact JSON,
// `__metadata__` first (keys sorted; the reference leaves their order to a hash map), tensors
// sorted by dtype, largest alignment first, then by name, the header padded with spaces to a
// multiple of 8 so that the data starts 8-byte aligned. See hookfuse/io/safetensors.hpp.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <filesystem>
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
#include "hookfuse/io/safetensors_dtype.hpp"

namespace hookfuse::io::safetensors {

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

namespace detail {

/// The padded header JSON for `tensors` in the reference writer's order, which is returned.
inline std::string prepare(std::span<const TensorRef> tensors, const Metadata& metadata,
                           std::vector<const TensorRef*>& order) {
  order.clear();
  for (const TensorRef& t : tensors) {
    if (t.name == "__metadata__")
      ::hookfuse::detail::fail<ValueError>(
          "safetensors: a tensor cannot be named \"__metadata__\"");
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

}  // namespace hookfuse::io::safetensors
