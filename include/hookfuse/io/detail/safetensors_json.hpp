// hookfuse/io/detail/safetensors_json.hpp: the JSON header of a safetensors file, parsed with
// nlohmann-json's SAX interface against its fixed schema (no document tree, no exceptions from
// the parser), and JSON string escaping as serde_json writes it.
//
//   {"__metadata__": {"k": "v", ...},                       optional, or null
//    "<name>": {"dtype": "F32", "shape": [d0, ...], "data_offsets": [begin, end]}, ...}
//
// As the reference reader (serde): duplicate tensor names, duplicate fields and missing fields
// are errors; unknown fields inside a tensor entry are skipped. Numbers must be non-negative
// integers. The caller checks the values (dtype names, sizes, offsets).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace hookfuse::io::safetensors::detail {

/// One tensor entry as written in the header, before validation.
struct RawEntry {
  std::string name;
  std::string dtype;
  std::vector<std::uint64_t> shape;
  std::uint64_t begin = 0;
  std::uint64_t end = 0;
};

struct RawHeader {
  std::map<std::string, std::string> metadata;
  std::vector<RawEntry> entries;  // in header order
};

/// SAX handler for the header; on failure `error` says what and where (tensor, field).
class HeaderSax {
 public:
  using json = nlohmann::json;
  explicit HeaderSax(RawHeader& out) : out_(out) {}

  std::string error;

  bool null() {
    if (skip_depth_ > 0 || skipping_scalar()) return true;
    if (where_ == Where::top_value && current_is_metadata_)
      return done_value();  // "__metadata__": null
    return bad_value("null");
  }
  bool boolean(bool) { return skip_depth_ > 0 || skipping_scalar() || bad_value("a boolean"); }
  bool number_integer(json::number_integer_t v) {
    if (skip_depth_ > 0 || skipping_scalar()) return true;
    if (v < 0) return bad_value("a negative number");
    return number_unsigned(static_cast<json::number_unsigned_t>(v));
  }
  bool number_unsigned(json::number_unsigned_t v) {
    if (skip_depth_ > 0 || skipping_scalar()) return true;
    if (where_ == Where::shape) {
      out_.entries.back().shape.push_back(v);
      return true;
    }
    if (where_ == Where::offsets) {
      if (offsets_seen_ >= 2) return fail_field("has more than 2 values, expected [begin, end]");
      (offsets_seen_++ == 0 ? out_.entries.back().begin : out_.entries.back().end) = v;
      return true;
    }
    return bad_value("a number");
  }
  bool number_float(json::number_float_t, const std::string& text) {
    if (skip_depth_ > 0 || skipping_scalar()) return true;
    return bad_value("the number " + text + " (not a non-negative integer within 64 bits)");
  }
  bool string(std::string& s) {
    if (skip_depth_ > 0 || skipping_scalar()) return true;
    if (where_ == Where::metadata) {
      out_.metadata[metadata_key_] = s;
      return true;
    }
    if (where_ == Where::tensor && field_ == "dtype") {
      out_.entries.back().dtype = s;
      return true;
    }
    return bad_value("a string");
  }
  bool binary(json::binary_t&) { return bad_value("binary data"); }

  bool start_object(std::size_t) {
    if (skip_depth_ > 0 || skip_next_) return enter_skip();
    switch (where_) {
      case Where::start:
        where_ = Where::top;
        return true;
      case Where::top_value:
        where_ = current_is_metadata_ ? Where::metadata : Where::tensor;
        seen_fields_ = 0;
        return true;
      default:
        return bad_value("an object");
    }
  }
  bool key(std::string& k) {
    if (skip_depth_ > 0) return true;
    if (where_ == Where::top) {
      if (!names_.insert(k).second)
        return fail(k == "__metadata__" ? "\"__metadata__\" appears twice"
                                        : "tensor \"" + k + "\" appears twice");
      current_is_metadata_ = k == "__metadata__";
      if (!current_is_metadata_) out_.entries.push_back(RawEntry{k, {}, {}, 0, 0});
      where_ = Where::top_value;
      return true;
    }
    if (where_ == Where::metadata) {
      if (out_.metadata.count(k) != 0)
        return fail("\"__metadata__\": key \"" + k + "\" appears twice");
      metadata_key_ = k;
      return true;
    }
    // where_ == tensor
    field_ = k;
    const unsigned bit = k == "dtype" ? 1u : k == "shape" ? 2u : k == "data_offsets" ? 4u : 0u;
    if (bit == 0) {
      skip_next_ = true;  // unknown field: ignored, as by the reference reader
      return true;
    }
    if ((seen_fields_ & bit) != 0) return fail_field("appears twice");
    seen_fields_ |= bit;
    return true;
  }
  bool end_object() {
    if (skip_depth_ > 0) return leave_skip();
    if (where_ == Where::metadata) return done_value();
    if (where_ == Where::tensor) {
      for (const auto& [bit, name] : {std::pair{1u, "dtype"}, {2u, "shape"}, {4u, "data_offsets"}})
        if ((seen_fields_ & bit) == 0) {
          field_ = name;
          return fail_field("is missing");
        }
      return done_value();
    }
    where_ = Where::finished;  // the top-level object
    return true;
  }
  bool start_array(std::size_t) {
    if (skip_depth_ > 0 || skip_next_) return enter_skip();
    if (where_ == Where::tensor && field_ == "shape") {
      where_ = Where::shape;
      return true;
    }
    if (where_ == Where::tensor && field_ == "data_offsets") {
      where_ = Where::offsets;
      offsets_seen_ = 0;
      return true;
    }
    return bad_value("an array");
  }
  bool end_array() {
    if (skip_depth_ > 0) return leave_skip();
    if (where_ == Where::offsets && offsets_seen_ != 2) {
      where_ = Where::tensor;
      return fail_field("has " + std::to_string(offsets_seen_) + " values, expected [begin, end]");
    }
    where_ = Where::tensor;
    return true;
  }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& ex) {
    if (error.empty()) error = std::string("invalid JSON: ") + ex.what();
    return false;
  }

 private:
  enum class Where { start, top, top_value, metadata, tensor, shape, offsets, finished };

  bool skipping_scalar() {
    if (!skip_next_) return false;
    skip_next_ = false;
    return true;
  }
  bool enter_skip() {
    skip_next_ = false;
    ++skip_depth_;
    return true;
  }
  bool leave_skip() {
    --skip_depth_;
    return true;
  }
  bool done_value() {
    where_ = Where::top;
    return true;
  }
  bool fail(std::string message) {
    error = std::move(message);
    return false;
  }
  bool fail_field(const std::string& what) {
    return fail("tensor \"" + out_.entries.back().name + "\": field \"" + field_ + "\" " + what);
  }
  bool bad_value(const std::string& found) {
    switch (where_) {
      case Where::start:
        return fail("the header is " + found + ", expected a JSON object");
      case Where::top_value:
        return current_is_metadata_
                   ? fail("\"__metadata__\" is " + found + ", expected an object of strings")
                   : fail("tensor \"" + out_.entries.back().name + "\" is " + found +
                          ", expected an object {dtype, shape, data_offsets}");
      case Where::metadata:
        return fail("\"__metadata__\": value of \"" + metadata_key_ + "\" is " + found +
                    ", expected a string");
      case Where::tensor:
        return fail_field(std::string("is ") + found + ", expected " +
                          (field_ == "dtype" ? "a string" : "an array of integers"));
      case Where::shape:
      case Where::offsets:
        return fail_field("holds " + found + ", expected non-negative integers");
      default:
        return fail("unexpected " + found);
    }
  }

  RawHeader& out_;
  Where where_ = Where::start;
  bool current_is_metadata_ = false;
  bool skip_next_ = false;
  std::size_t skip_depth_ = 0;
  unsigned seen_fields_ = 0;
  unsigned offsets_seen_ = 0;
  std::string field_;
  std::string metadata_key_;
  std::set<std::string, std::less<>> names_;
};

/// Parses `text` (the header bytes after the length); on failure returns false with `error`.
template <class Json = nlohmann::json>
bool parse_header(std::string_view text, RawHeader& out, std::string& error) {
  // nlohmann's lexer takes a NUL byte for the end of the input; JSON text never holds one raw.
  if (const std::size_t nul = text.find('\0'); nul != std::string_view::npos) {
    error = "invalid JSON: a NUL byte at header offset " + std::to_string(nul);
    return false;
  }
  HeaderSax sax(out);
  const bool ok = Json::sax_parse(text.begin(), text.end(), &sax);
  if (!ok) error = sax.error.empty() ? "invalid JSON header" : sax.error;
  return ok;
}

/// True if `s` is well-formed UTF-8 (no overlongs, surrogates or code points past U+10FFFF), as
/// JSON text and the reference's Rust strings require.
inline bool is_utf8(std::string_view s) {
  std::size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    std::size_t n = 0;
    std::uint32_t cp = 0;
    if (c < 0x80) {
      ++i;
      continue;
    }
    if ((c & 0xE0) == 0xC0) {
      n = 1;
      cp = c & 0x1Fu;
    } else if ((c & 0xF0) == 0xE0) {
      n = 2;
      cp = c & 0x0Fu;
    } else if ((c & 0xF8) == 0xF0) {
      n = 3;
      cp = c & 0x07u;
    } else
      return false;
    if (n > s.size() - 1 - i) return false;  // truncated sequence
    for (std::size_t k = 1; k <= n; ++k) {
      const auto cc = static_cast<unsigned char>(s[i + k]);
      if ((cc & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (cc & 0x3Fu);
    }
    constexpr std::uint32_t min_for[] = {0, 0x80, 0x800, 0x10000};
    if (cp < min_for[n] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
    i += n + 1;
  }
  return true;
}

/// Appends `s` as a JSON string literal the way serde_json does: `"` and `\` escaped, control
/// characters as \b \t \n \f \r or \u00xx, everything else (UTF-8 included) as is.
inline void append_json_string(std::string& out, std::string_view s) {
  out += '"';
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\f':
        out += "\\f";
        break;
      case '\r':
        out += "\\r";
        break;
      default:
        if (c < 0x20) {
          constexpr char hex[] = "0123456789abcdef";
          out += "\\u00";
          out += hex[c >> 4];
          out += hex[c & 15];
        } else {
          out += ch;
        }
    }
  }
  out += '"';
}

}  // namespace hookfuse::io::safetensors::detail
