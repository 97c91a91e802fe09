// hookfuse/io/bundle_entry.hpp: the values of a tensor bundle's index table: one BundleEntryProto
// per tensor (dtype, shape, where its bytes are, their CRC) and the BundleHeaderProto under the
// empty key, encoded and decoded with protozero exactly as TensorFlow's proto3 serializer does
// (tensorflow/core/protobuf/tensor_bundle.proto).
#pragma once

#include <cstdint>
#include <cstdio>
#include <limits>
#include <protozero/exception.hpp>
#include <protozero/pbf_reader.hpp>
#include <protozero/pbf_writer.hpp>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "hookfuse/config.hpp"
#include "hookfuse/io/data_type.hpp"
#include "hookfuse/io/errors.hpp"
#include "hookfuse/io/tensor_shape.hpp"

namespace hookfuse::io {

/// One tensor of a bundle (TensorFlow's `BundleEntryProto`, decoded), as listed by BundleReader.
struct BundleEntry {
  std::string key;          ///< the tensor's name, e.g. "dense/kernel" (never empty)
  DataType dtype{};         ///< any value; only the TensorElement dtypes read as numbers
  TensorShape shape;        ///< TensorFlow shape; rank 0 for a scalar
  std::int64_t shard_id{};  ///< the data file holding it: "P.data-<shard_id>-of-<num_shards>"
  std::int64_t offset{};    ///< first byte in the data file
  std::int64_t size{};      ///< byte count in the data file
  std::uint32_t crc32c{};   ///< masked CRC32C of those bytes (io/crc32c.hpp, mask_crc)
  bool sliced{};            ///< a partitioned variable (`slices` set): listed, not readable
};

/// The shard count a single BundleWriter writes (readers take any count >= 1).
inline constexpr std::int32_t kTensorBundleNumShards = 1;
/// TensorFlow's kTensorBundleVersion (producer) and kTensorBundleMinConsumer.
inline constexpr std::int32_t kTensorBundleVersion = 1;
inline constexpr std::int32_t kTensorBundleMinProducer = 0;

}  // namespace hookfuse::io

namespace hookfuse::io::detail {

/// The header entry, key "" (TensorFlow's `BundleHeaderProto` with its `VersionDef`).
struct BundleHeader {
  std::int64_t num_shards{};
  std::int64_t endianness{};  // 0 LITTLE, 1 BIG
  std::int64_t producer{};
  std::int64_t min_consumer{};
  std::vector<std::int64_t> bad_consumers;
};

// ---- encoding ---------------------------------------------------------------------------

/// BundleHeaderProto{num_shards, endianness: LITTLE (default, omitted), version{producer: 1}}:
/// for one shard, the bytes 08 01 1a 02 08 01 of every single-writer TensorFlow checkpoint.
template <class = void>
[[nodiscard]] std::string encode_header(std::int32_t num_shards = kTensorBundleNumShards) {
  std::string version;
  protozero::pbf_writer(version).add_int32(1, kTensorBundleVersion);
  std::string out;
  protozero::pbf_writer w(out);
  w.add_int32(1, num_shards);
  w.add_message(3, version);
  return out;
}

/// BundleEntryProto with proto3's rule that default values are not written: dtype, shape
/// (always present, `12 00` for a scalar; a 0-sized dimension is an empty Dim), shard_id,
/// offset and size when non-zero, crc32c as fixed32 when non-zero.
template <class = void>
[[nodiscard]] std::string encode_entry(const BundleEntry& e) {
  std::string shape;
  {
    protozero::pbf_writer s(shape);
    for (const std::int64_t d : e.shape.dim_sizes()) {
      std::string dim;
      if (d != 0) protozero::pbf_writer(dim).add_int64(1, d);
      s.add_message(2, dim);
    }
  }
  std::string out;
  protozero::pbf_writer w(out);
  if (e.dtype != DataType::DT_INVALID) w.add_enum(1, static_cast<std::int32_t>(e.dtype));
  w.add_message(2, shape);
  if (e.shard_id != 0) w.add_int32(3, static_cast<std::int32_t>(e.shard_id));
  if (e.offset != 0) w.add_int64(4, e.offset);
  if (e.size != 0) w.add_int64(5, e.size);
  if (e.crc32c != 0) w.add_fixed32(6, e.crc32c);
  return out;
}

// ---- decoding ---------------------------------------------------------------------------

/// "0x1f273806": a CRC for messages.
template <class = void>
[[nodiscard]] std::string hex_u32(std::uint32_t v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%08x", static_cast<unsigned>(v));
  return buf;
}

/// Throws DataLossError "<where>: <what>".
template <class = void>
[[noreturn]] void fail_data_loss(const std::string& where, const std::string& what) {
  ::hookfuse::detail::fail<DataLossError>(where + ": " + what);
}

template <class = void>
const char* wire_type_name(protozero::pbf_wire_type t) noexcept {
  switch (t) {
    case protozero::pbf_wire_type::varint:
      return "0 (varint)";
    case protozero::pbf_wire_type::fixed64:
      return "1 (64-bit)";
    case protozero::pbf_wire_type::length_delimited:
      return "2 (length-delimited)";
    case protozero::pbf_wire_type::fixed32:
      return "5 (32-bit)";
    default:
      return "unknown";
  }
}

/// Checks the wire type of the current field before protozero reads it (protozero only
/// asserts it, which release builds compile out).
template <class = void>
void expect_wire(const protozero::pbf_reader& r, protozero::pbf_wire_type expected,
                 const std::string& where, const char* field) {
  if (r.wire_type() != expected) {
    fail_data_loss(where, std::string(field) + " has wire type " + wire_type_name(r.wire_type()) +
                              ", expected " + wire_type_name(expected));
  }
}

/// Calls on_field(reader) for each field of the message in `bytes`; protozero's errors
/// (truncated varint or length, bad tag or wire type) become DataLossError naming `message`.
template <class OnField>
void for_each_field(std::string_view bytes, const std::string& where, const char* message,
                    OnField&& on_field) {
  try {
    protozero::pbf_reader r(bytes.data(), bytes.size());
    while (r.next()) on_field(r);
  } catch (const protozero::exception& e) {
    fail_data_loss(where, std::string("malformed ") + message + ": " + e.what());
  }
}

/// A varint field that must fit an int32 (enums, num_shards, version numbers).
template <class = void>
[[nodiscard]] std::int64_t get_int32_field(protozero::pbf_reader& r, const std::string& where,
                                           const char* field) {
  expect_wire(r, protozero::pbf_wire_type::varint, where, field);
  const std::int64_t v = r.get_int64();
  if (v < std::numeric_limits<std::int32_t>::min() ||
      v > std::numeric_limits<std::int32_t>::max()) {
    fail_data_loss(where, std::string(field) + " = " + std::to_string(v) + " does not fit int32");
  }
  return v;
}

template <class = void>
[[nodiscard]] BundleHeader decode_header(std::string_view bytes, const std::string& where) {
  BundleHeader h;
  for_each_field(bytes, where, "BundleHeaderProto", [&](protozero::pbf_reader& r) {
    switch (r.tag()) {
      case 1:
        h.num_shards = get_int32_field(r, where, "BundleHeaderProto.num_shards (field 1)");
        break;
      case 2:
        h.endianness = get_int32_field(r, where, "BundleHeaderProto.endianness (field 2)");
        break;
      case 3: {
        expect_wire(r, protozero::pbf_wire_type::length_delimited, where,
                    "BundleHeaderProto.version (field 3)");
        const auto v = r.get_view();
        for_each_field({v.data(), v.size()}, where, "VersionDef", [&](protozero::pbf_reader& f) {
          if (f.tag() == 1) {
            h.producer = get_int32_field(f, where, "VersionDef.producer (field 1)");
          } else if (f.tag() == 2) {
            h.min_consumer = get_int32_field(f, where, "VersionDef.min_consumer (field 2)");
          } else if (f.tag() == 3 && f.wire_type() == protozero::pbf_wire_type::length_delimited) {
            for (const std::int32_t b : f.get_packed_int32()) h.bad_consumers.push_back(b);
          } else if (f.tag() == 3) {
            h.bad_consumers.push_back(
                get_int32_field(f, where, "VersionDef.bad_consumers (field 3)"));
          } else {
            f.skip();
          }
        });
        break;
      }
      default:
        r.skip();
    }
  });
  return h;
}

/// TensorShapeProto: repeated Dim dim = 2 {int64 size = 1; string name = 2}, bool unknown_rank = 3.
/// A negative size (TensorFlow's "unknown") or an unknown rank is an error: a stored tensor's
/// shape is always fully known.
template <class = void>
[[nodiscard]] TensorShape decode_shape(std::string_view bytes, const std::string& where) {
  std::vector<std::int64_t> dims;
  for_each_field(bytes, where, "TensorShapeProto", [&](protozero::pbf_reader& r) {
    if (r.tag() == 2) {
      expect_wire(r, protozero::pbf_wire_type::length_delimited, where,
                  "TensorShapeProto.dim (field 2)");
      const auto v = r.get_view();
      std::int64_t size = 0;
      for_each_field({v.data(), v.size()}, where, "TensorShapeProto.Dim",
                     [&](protozero::pbf_reader& d) {
                       if (d.tag() == 1) {
                         expect_wire(d, protozero::pbf_wire_type::varint, where,
                                     "TensorShapeProto.Dim.size (field 1)");
                         size = d.get_int64();
                       } else {
                         d.skip();
                       }
                     });
      if (size < 0) {
        fail_data_loss(where, "shape dimension " + std::to_string(dims.size()) + " is " +
                                  std::to_string(size) + ", expected a size >= 0");
      }
      dims.push_back(size);
    } else if (r.tag() == 3) {
      expect_wire(r, protozero::pbf_wire_type::varint, where,
                  "TensorShapeProto.unknown_rank (field 3)");
      if (r.get_bool()) fail_data_loss(where, "shape has unknown rank, expected a known shape");
    } else {
      r.skip();
    }
  });
  if (!checked_num_elements(dims)) {
    TensorShape s(dims);
    fail_data_loss(where, "shape " + s.debug_string() + " has more elements than int64 holds");
  }
  return TensorShape(dims);
}

/// BundleEntryProto, fields checked for their wire types; unknown fields are skipped.
template <class = void>
[[nodiscard]] BundleEntry decode_entry(std::string key, std::string_view bytes,
                                       const std::string& where) {
  BundleEntry e;
  e.key = std::move(key);
  for_each_field(bytes, where, "BundleEntryProto", [&](protozero::pbf_reader& r) {
    switch (r.tag()) {
      case 1:
        e.dtype =
            static_cast<DataType>(get_int32_field(r, where, "BundleEntryProto.dtype (field 1)"));
        break;
      case 2: {
        expect_wire(r, protozero::pbf_wire_type::length_delimited, where,
                    "BundleEntryProto.shape (field 2)");
        const auto v = r.get_view();
        e.shape = decode_shape({v.data(), v.size()}, where);
        break;
      }
      case 3:
        e.shard_id = get_int32_field(r, where, "BundleEntryProto.shard_id (field 3)");
        break;
      case 4:
        expect_wire(r, protozero::pbf_wire_type::varint, where,
                    "BundleEntryProto.offset (field 4)");
        e.offset = r.get_int64();
        break;
      case 5:
        expect_wire(r, protozero::pbf_wire_type::varint, where, "BundleEntryProto.size (field 5)");
        e.size = r.get_int64();
        break;
      case 6:
        expect_wire(r, protozero::pbf_wire_type::fixed32, where,
                    "BundleEntryProto.crc32c (field 6)");
        e.crc32c = r.get_fixed32();
        break;
      case 7:
        expect_wire(r, protozero::pbf_wire_type::length_delimited, where,
                    "BundleEntryProto.slices (field 7)");
        e.sliced = true;
        r.skip();
        break;
      default:
        r.skip();
    }
  });
  return e;
}

}  // namespace hookfuse::io::detail
