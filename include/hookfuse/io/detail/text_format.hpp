// hookfuse/io/detail/text_format.hpp: the corner of protobuf's text format that flat messages
// of strings and doubles use (TensorFlow's `checkpoint` state file), both directions.
//
// Printing follows Python's `google.protobuf.text_format.MessageToString`, which TensorFlow
// uses to write the file: strings C-escaped as `text_encoding.CEscape` does (\n \r \t \" \' \\,
// other bytes below 0x20 or from 0x7f as three-digit octal), doubles as Python's `repr`.
// Scanning accepts what `text_format.Merge` accepts for such messages: whitespace and `#`
// comments anywhere, `name: value` with an optional `,` or `;` after it, `name: [v, ...]` for
// repeated fields, single- or double-quoted strings (adjacent ones concatenated) with C
// escapes, and float literals (`1.5`, `-2e3`, `7`, `.5`, `1.5f`, `inf`, `-Infinity`, `nan`).
// Every read is bounds-checked; errors name the file, line and column.
#pragma once

#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <system_error>

#include "hookfuse/config.hpp"
#include "hookfuse/io/errors.hpp"

namespace hookfuse::io::detail {

/// Appends `bytes` C-escaped as protobuf's Python text_format prints a string field.
template <class = void>
void append_c_escaped(std::string& out, std::string_view bytes) {
  for (const char ch : bytes) {
    const auto c = static_cast<unsigned char>(ch);
    switch (c) {
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      case '"':
        out += "\\\"";
        break;
      case '\'':
        out += "\\'";
        break;
      case '\\':
        out += "\\\\";
        break;
      default:
        if (c < 0x20 || c >= 0x7f) {
          out += '\\';
          out += static_cast<char>('0' + ((c >> 6) & 7));
          out += static_cast<char>('0' + ((c >> 3) & 7));
          out += static_cast<char>('0' + (c & 7));
        } else {
          out += ch;
        }
    }
  }
}

/// Appends `v` as Python's `repr(float)` writes it (shortest round-trip digits; fixed notation
/// when 1e-4 <= |v| < 1e16, with ".0" for whole numbers; otherwise `d.ddde+XX`): 1700000000.5,
/// 1700000200.0, 1e+16, 1.5e-05, inf, -inf, nan.
template <class = void>
void append_python_repr(std::string& out, double v) {
  if (std::isnan(v)) {
    out += "nan";
    return;
  }
  if (std::isinf(v)) {
    out += v < 0 ? "-inf" : "inf";
    return;
  }
  char buf[64];
  // Shortest round-trip digits in scientific form: [-]d[.ddd]e(+|-)XX.
  const auto res = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::scientific);
  const std::string_view sci(buf, static_cast<std::size_t>(res.ptr - buf));
  std::size_t i = 0;
  if (sci[0] == '-') {
    out += '-';
    i = 1;
  }
  const std::size_t e_pos = sci.find('e');
  std::string digits;
  for (std::size_t k = i; k < e_pos; ++k)
    if (sci[k] != '.') digits += sci[k];
  int exponent = 0;
  std::from_chars(sci.data() + e_pos + (sci[e_pos + 1] == '+' ? 2 : 1), sci.data() + sci.size(),
                  exponent);
  const int decpt = exponent + 1;  // v = 0.d1d2... * 10^decpt
  const auto ndigits = static_cast<int>(digits.size());
  if (decpt > -4 && decpt <= 16) {
    if (decpt <= 0) {
      out += "0.";
      out.append(static_cast<std::size_t>(-decpt), '0');
      out += digits;
    } else if (decpt >= ndigits) {
      out += digits;
      out.append(static_cast<std::size_t>(decpt - ndigits), '0');
      out += ".0";
    } else {
      out.append(digits, 0, static_cast<std::size_t>(decpt));
      out += '.';
      out.append(digits, static_cast<std::size_t>(decpt));
    }
    return;
  }
  out += digits[0];
  if (ndigits > 1) {
    out += '.';
    out.append(digits, 1);
  }
  const int e = decpt - 1;
  out += e < 0 ? "e-" : "e+";
  const int mag = e < 0 ? -e : e;
  if (mag < 10) out += '0';
  out += std::to_string(mag);
}

/// A bounds-checked cursor over text-format input. `file` names the input in errors.
template <class = void>
class BasicTextFormatScanner {
 public:
  BasicTextFormatScanner(std::string_view text, std::string file)
      : text_(text), file_(std::move(file)) {}

  /// Skips whitespace and `#` comments (to the end of the line).
  void skip_space() {
    while (pos_ < text_.size()) {
      const char c = text_[pos_];
      if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f') {
        ++pos_;
      } else if (c == '#') {
        while (pos_ < text_.size() && text_[pos_] != '\n') ++pos_;
      } else {
        break;
      }
    }
  }

  [[nodiscard]] bool at_end() {
    skip_space();
    return pos_ >= text_.size();
  }

  /// Consumes `c` (after whitespace) if it is next.
  bool consume(char c) {
    skip_space();
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }

  [[nodiscard]] bool peek_is(char c) {
    skip_space();
    return pos_ < text_.size() && text_[pos_] == c;
  }

  /// Where the next token starts, for error messages.
  [[nodiscard]] std::size_t position() {
    skip_space();
    return pos_;
  }

  /// An identifier [A-Za-z_][A-Za-z0-9_]*, or an error.
  std::string_view identifier() {
    skip_space();
    const std::size_t start = pos_;
    while (pos_ < text_.size() && is_ident_char(text_[pos_], pos_ == start)) ++pos_;
    if (pos_ == start) error_at(start, "expected a field name, found " + describe_next(start));
    return text_.substr(start, pos_ - start);
  }

  /// One or more adjacent quoted strings, unescaped and concatenated.
  std::string string_value(std::string_view field) {
    skip_space();
    if (pos_ >= text_.size() || (text_[pos_] != '"' && text_[pos_] != '\''))
      error_at(pos_, "field \"" + std::string(field) + "\": expected a quoted string, found " +
                         describe_next(pos_));
    std::string value;
    while (pos_ < text_.size() && (text_[pos_] == '"' || text_[pos_] == '\'')) {
      read_quoted(value, field);
      skip_space();
    }
    return value;
  }

  /// A float literal (see the file comment), or an error naming `field`.
  double double_value(std::string_view field) {
    skip_space();
    const std::size_t start = pos_;
    std::size_t p = pos_;
    const bool negative = p < text_.size() && text_[p] == '-';
    if (negative) ++p;
    std::size_t end = p;
    while (end < text_.size() && (text_[end] == '.' || text_[end] == '+' || text_[end] == '-' ||
                                  is_ident_char(text_[end], false)))
      ++end;
    std::string_view token = text_.substr(p, end - p);
    if (!token.empty() && (token.back() == 'f' || token.back() == 'F') && !is_special(token))
      token.remove_suffix(1);
    double value = 0;
    if (is_special(token)) {
      const char first = static_cast<char>(token[0] | 0x20);
      value = first == 'n' ? std::nan("") : HUGE_VAL;
    } else {
      const bool shape_ok = !token.empty() && token.front() != '+' && token.front() != '-';
      const auto res = std::from_chars(token.data(), token.data() + token.size(), value);
      if (!shape_ok || res.ec == std::errc::invalid_argument ||
          res.ptr != token.data() + token.size())
        error_at(start, "field \"" + std::string(field) + "\": expected a number, found " +
                            describe_next(start));
      if (res.ec == std::errc::result_out_of_range)
        error_at(start, "field \"" + std::string(field) + "\": number out of the range of double");
    }
    pos_ = end;
    return negative ? -value : value;
  }

  /// Throws DataLossError "<file>:<line>:<column>: <message>" for the input offset `at`.
  [[noreturn]] void error_at(std::size_t at, const std::string& message) const {
    std::size_t line = 1, column = 1;
    for (std::size_t k = 0; k < at && k < text_.size(); ++k) {
      if (text_[k] == '\n') {
        ++line;
        column = 1;
      } else {
        ++column;
      }
    }
    ::hookfuse::detail::fail<DataLossError>(file_ + ":" + std::to_string(line) + ":" +
                                            std::to_string(column) + ": " + message);
  }

  /// A short, printable description of the input at `at` for messages.
  std::string describe_next(std::size_t at) const {
    if (at >= text_.size()) return "the end of the file";
    std::string shown;
    append_c_escaped(shown, text_.substr(at, 16));
    return "\"" + shown + "\"";
  }

 private:
  static bool is_ident_char(char c, bool first) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
           (!first && c >= '0' && c <= '9');
  }

  static bool is_special(std::string_view t) {
    auto eq = [&](std::string_view word) {
      if (t.size() != word.size()) return false;
      for (std::size_t k = 0; k < t.size(); ++k)
        if (static_cast<char>(t[k] | 0x20) != word[k]) return false;
      return true;
    };
    return eq("inf") || eq("inff") || eq("infinity") || eq("infinityf") || eq("nan") || eq("nanf");
  }

  static int hex_value(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  }

  /// Reads one quoted string at pos_ (its quote character included) into `out`.
  void read_quoted(std::string& out, std::string_view field) {
    const std::size_t start = pos_;
    const char quote = text_[pos_++];
    auto unterminated = [&] {
      error_at(start, "field \"" + std::string(field) + "\": unterminated string");
    };
    while (true) {
      if (pos_ >= text_.size() || text_[pos_] == '\n') unterminated();
      const char c = text_[pos_++];
      if (c == quote) return;
      if (c != '\\') {
        out += c;
        continue;
      }
      if (pos_ >= text_.size()) unterminated();
      const std::size_t escape_at = pos_ - 1;
      const char e = text_[pos_++];
      switch (e) {
        case 'n':
          out += '\n';
          break;
        case 'r':
          out += '\r';
          break;
        case 't':
          out += '\t';
          break;
        case 'a':
          out += '\a';
          break;
        case 'b':
          out += '\b';
          break;
        case 'f':
          out += '\f';
          break;
        case 'v':
          out += '\v';
          break;
        case '\\':
        case '\'':
        case '"':
        case '?':
          out += e;
          break;
        case 'x': {
          int value = 0, n = 0;
          for (; n < 2 && pos_ < text_.size() && hex_value(text_[pos_]) >= 0; ++n)
            value = value * 16 + hex_value(text_[pos_++]);
          if (n == 0)
            error_at(escape_at, "field \"" + std::string(field) + "\": \\x without hex digits");
          out += static_cast<char>(value);
          break;
        }
        default:
          if (e >= '0' && e <= '7') {
            int value = e - '0';
            for (int n = 1;
                 n < 3 && pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '7'; ++n)
              value = value * 8 + (text_[pos_++] - '0');
            if (value > 0xff)
              error_at(escape_at, "field \"" + std::string(field) + "\": octal escape above \\377");
            out += static_cast<char>(value);
          } else {
            error_at(escape_at,
                     "field \"" + std::string(field) + "\": invalid escape \\" + std::string(1, e));
          }
      }
    }
  }

  std::string_view text_;
  std::string file_;
  std::size_t pos_ = 0;
};

/// A class template only so that its member functions compile where they are used
/// (docs/checkpoints.md, "Compile time").
using TextFormatScanner = BasicTextFormatScanner<void>;

}  // namespace hookfuse::io::detail
