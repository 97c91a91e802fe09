// hookfuse/io/detail/summary_codec.hpp: protobuf wire encoding and decoding (protozero) of the
// Summary protos of hookfuse/io/summary_proto.hpp. Fields are written in ascending field number
// and proto3 defaults are left out, as TensorFlow's C++ serializer does, so the bytes match
// TensorFlow's.
#pragma once

#include <bit>
#include <cstdint>
#include <protozero/exception.hpp>
#include <protozero/pbf_reader.hpp>
#include <protozero/pbf_writer.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "hookfuse/config.hpp"
#include "hookfuse/io/errors.hpp"
#include "hookfuse/io/summary_proto.hpp"

namespace hookfuse::io::detail::proto {

using protozero::pbf_wire_type;

/// proto3 leaves a double out when its bits are all zero (-0.0 is written).
template <class = void>
void put_double(protozero::pbf_writer& w, protozero::pbf_tag_type tag, double v) {
  if (std::bit_cast<std::uint64_t>(v) != 0) w.add_double(tag, v);
}
template <class = void>
void put_string(protozero::pbf_writer& w, protozero::pbf_tag_type tag, std::string_view s) {
  if (!s.empty()) w.add_string(tag, s.data(), s.size());
}

template <class = void>
std::string encode(const TensorProto& t) {
  std::string out;
  protozero::pbf_writer w(out);
  if (t.dtype != 0) w.add_enum(1, t.dtype);
  if (t.has_shape || !t.shape.empty()) {
    std::string shape;
    {
      protozero::pbf_writer s(shape);
      for (std::int64_t d : t.shape) {
        std::string dim;
        protozero::pbf_writer dw(dim);
        if (d != 0) dw.add_int64(1, d);
        s.add_message(2, dim);
      }
    }
    w.add_message(2, shape);
  }
  if (!t.tensor_content.empty()) w.add_bytes(4, t.tensor_content);
  w.add_packed_float(5, t.float_val.begin(), t.float_val.end());
  w.add_packed_double(6, t.double_val.begin(), t.double_val.end());
  return out;
}

template <class = void>
std::string encode(const HistogramProto& h) {
  std::string out;
  protozero::pbf_writer w(out);
  put_double(w, 1, h.min);
  put_double(w, 2, h.max);
  put_double(w, 3, h.num);
  put_double(w, 4, h.sum);
  put_double(w, 5, h.sum_squares);
  w.add_packed_double(6, h.bucket_limit.begin(), h.bucket_limit.end());
  w.add_packed_double(7, h.bucket.begin(), h.bucket.end());
  return out;
}

template <class = void>
std::string encode(const SummaryMetadata& m) {
  std::string out;
  protozero::pbf_writer w(out);
  if (!m.plugin_name.empty() || !m.plugin_content.empty()) {
    std::string plugin;
    protozero::pbf_writer p(plugin);
    put_string(p, 1, m.plugin_name);
    if (!m.plugin_content.empty()) p.add_bytes(2, m.plugin_content);
    w.add_message(1, plugin);
  }
  put_string(w, 2, m.display_name);
  put_string(w, 3, m.summary_description);
  if (m.data_class != 0) w.add_enum(4, m.data_class);
  return out;
}

template <class = void>
std::string encode(const SummaryValue& v) {
  std::string out;
  protozero::pbf_writer w(out);
  put_string(w, 1, v.tag);
  switch (v.kind) {
    case SummaryValue::Kind::simple_value:
      w.add_float(2, v.simple_value);
      break;
    case SummaryValue::Kind::histo:
      w.add_message(5, encode(v.histo));
      break;
    case SummaryValue::Kind::tensor:
      w.add_message(8, encode(v.tensor));
      break;
    case SummaryValue::Kind::none:
    case SummaryValue::Kind::other:
      break;  // nothing we can write
  }
  if (v.metadata) w.add_message(9, encode(*v.metadata));
  return out;
}

template <class = void>
std::string encode(const Summary& s) {
  std::string out;
  protozero::pbf_writer w(out);
  for (const SummaryValue& v : s.value) w.add_message(1, encode(v));
  return out;
}

// --- decoding -----------------------------------------------------------------
// `where` names the message being decoded ("Event.summary.value[2].tensor") for the
// DataLossError thrown on a field of the wrong wire type; protozero's own errors (a length past
// the end, a varint too long) are turned into DataLossError by the caller (parse_event).

template <class = void>
const char* wire_type_name(pbf_wire_type t) {
  switch (t) {
    case pbf_wire_type::varint:
      return "varint";
    case pbf_wire_type::fixed64:
      return "64-bit";
    case pbf_wire_type::length_delimited:
      return "length-delimited";
    case pbf_wire_type::fixed32:
      return "32-bit";
    default:
      return "unknown";
  }
}

template <class = void>
void expect_wire(const protozero::pbf_reader& r, pbf_wire_type t, const std::string& where,
                 const char* field) {
  if (r.wire_type() != t) {
    hookfuse::detail::fail<DataLossError>(
        where + "." + field + " (field " + std::to_string(r.tag()) + "): wire type " +
        wire_type_name(r.wire_type()) + ", expected " + wire_type_name(t));
  }
}

/// A repeated double, packed (wire type 2) or not (wire type 1), appended to `out`.
template <class = void>
void get_doubles(protozero::pbf_reader& r, std::vector<double>& out, const std::string& where,
                 const char* field) {
  if (r.wire_type() == pbf_wire_type::fixed64) {
    out.push_back(r.get_double());
    return;
  }
  expect_wire(r, pbf_wire_type::length_delimited, where, field);
  for (double d : r.get_packed_double()) out.push_back(d);
}

template <class = void>
void get_floats(protozero::pbf_reader& r, std::vector<float>& out, const std::string& where,
                const char* field) {
  if (r.wire_type() == pbf_wire_type::fixed32) {
    out.push_back(r.get_float());
    return;
  }
  expect_wire(r, pbf_wire_type::length_delimited, where, field);
  for (float f : r.get_packed_float()) out.push_back(f);
}

template <class = void>
TensorProto decode_tensor(protozero::pbf_reader r, const std::string& where) {
  TensorProto t;
  while (r.next()) {
    switch (r.tag()) {
      case 1:
        expect_wire(r, pbf_wire_type::varint, where, "dtype");
        t.dtype = r.get_enum();
        break;
      case 2: {
        expect_wire(r, pbf_wire_type::length_delimited, where, "tensor_shape");
        t.has_shape = true;
        protozero::pbf_reader shape = r.get_message();
        while (shape.next(2)) {
          expect_wire(shape, pbf_wire_type::length_delimited, where + ".tensor_shape", "dim");
          protozero::pbf_reader dim = shape.get_message();
          std::int64_t size = 0;
          while (dim.next(1)) {
            expect_wire(dim, pbf_wire_type::varint, where + ".tensor_shape.dim", "size");
            size = dim.get_int64();
          }
          t.shape.push_back(size);
        }
        break;
      }
      case 4:
        expect_wire(r, pbf_wire_type::length_delimited, where, "tensor_content");
        t.tensor_content = r.get_bytes();
        break;
      case 5:
        get_floats(r, t.float_val, where, "float_val");
        break;
      case 6:
        get_doubles(r, t.double_val, where, "double_val");
        break;
      default:
        r.skip();
    }
  }
  return t;
}

template <class = void>
HistogramProto decode_histogram(protozero::pbf_reader r, const std::string& where) {
  HistogramProto h;
  static constexpr const char* names[] = {"", "min", "max", "num", "sum", "sum_squares"};
  double* scalars[] = {nullptr, &h.min, &h.max, &h.num, &h.sum, &h.sum_squares};
  while (r.next()) {
    const auto tag = r.tag();
    if (tag >= 1 && tag <= 5) {
      expect_wire(r, pbf_wire_type::fixed64, where, names[tag]);
      *scalars[tag] = r.get_double();
    } else if (tag == 6) {
      get_doubles(r, h.bucket_limit, where, "bucket_limit");
    } else if (tag == 7) {
      get_doubles(r, h.bucket, where, "bucket");
    } else {
      r.skip();
    }
  }
  if (h.bucket.size() != h.bucket_limit.size()) {
    hookfuse::detail::fail<DataLossError>(
        where + ": " + std::to_string(h.bucket_limit.size()) + " bucket_limit values but " +
        std::to_string(h.bucket.size()) + " bucket counts; expected as many of each");
  }
  return h;
}

template <class = void>
SummaryMetadata decode_metadata(protozero::pbf_reader r, const std::string& where) {
  SummaryMetadata m;
  while (r.next()) {
    switch (r.tag()) {
      case 1: {
        expect_wire(r, pbf_wire_type::length_delimited, where, "plugin_data");
        protozero::pbf_reader p = r.get_message();
        while (p.next()) {
          if (p.tag() == 1) {
            expect_wire(p, pbf_wire_type::length_delimited, where + ".plugin_data", "plugin_name");
            m.plugin_name = p.get_string();
          } else if (p.tag() == 2) {
            expect_wire(p, pbf_wire_type::length_delimited, where + ".plugin_data", "content");
            m.plugin_content = p.get_bytes();
          } else {
            p.skip();
          }
        }
        break;
      }
      case 2:
        expect_wire(r, pbf_wire_type::length_delimited, where, "display_name");
        m.display_name = r.get_string();
        break;
      case 3:
        expect_wire(r, pbf_wire_type::length_delimited, where, "summary_description");
        m.summary_description = r.get_string();
        break;
      case 4:
        expect_wire(r, pbf_wire_type::varint, where, "data_class");
        m.data_class = r.get_enum();
        break;
      default:
        r.skip();
    }
  }
  return m;
}

template <class = void>
SummaryValue decode_value(protozero::pbf_reader r, const std::string& where) {
  SummaryValue v;
  while (r.next()) {
    switch (r.tag()) {
      case 1:
        expect_wire(r, pbf_wire_type::length_delimited, where, "tag");
        v.tag = r.get_string();
        break;
      case 2:
        expect_wire(r, pbf_wire_type::fixed32, where, "simple_value");
        v.kind = SummaryValue::Kind::simple_value;
        v.simple_value = r.get_float();
        break;
      case 5:
        expect_wire(r, pbf_wire_type::length_delimited, where, "histo");
        v.kind = SummaryValue::Kind::histo;
        v.histo = decode_histogram(r.get_message(), where + ".histo");
        break;
      case 8:
        expect_wire(r, pbf_wire_type::length_delimited, where, "tensor");
        v.kind = SummaryValue::Kind::tensor;
        v.tensor = decode_tensor(r.get_message(), where + ".tensor");
        break;
      case 9:
        expect_wire(r, pbf_wire_type::length_delimited, where, "metadata");
        v.metadata = decode_metadata(r.get_message(), where + ".metadata");
        break;
      case 3:
      case 4:
      case 6:  // obsolete_old_style_histogram, image, audio: recognised, not decoded
        v.kind = SummaryValue::Kind::other;
        r.skip();
        break;
      default:
        r.skip();
    }
  }
  return v;
}

template <class = void>
Summary decode_summary(protozero::pbf_reader r, const std::string& where) {
  Summary s;
  while (r.next()) {
    if (r.tag() != 1) {
      r.skip();
      continue;
    }
    expect_wire(r, pbf_wire_type::length_delimited, where, "value");
    s.value.push_back(
        decode_value(r.get_message(), where + ".value[" + std::to_string(s.value.size()) + "]"));
  }
  return s;
}

}  // namespace hookfuse::io::detail::proto
