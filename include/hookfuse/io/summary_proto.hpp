// hookfuse/io/summary_proto.hpp: TensorFlow's Summary protos (summary.proto, tensor.proto) as
// plain structs, and the scalar summary value tf.summary.scalar writes. Their wire encoding is
// in hookfuse/io/detail/summary_codec.hpp.
#pragma once

#include <bit>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace hookfuse::io {

/// tensorflow.TensorProto, the part summaries use: dtype, shape and the values as
/// `tensor_content` (raw little-endian bytes, row-major) or `float_val` / `double_val`.
struct TensorProto {
  /// TensorFlow DataType values (types.proto) that summaries use.
  static constexpr std::int32_t DT_INVALID = 0;
  static constexpr std::int32_t DT_FLOAT = 1;
  static constexpr std::int32_t DT_DOUBLE = 2;
  static constexpr std::int32_t DT_INT32 = 3;
  static constexpr std::int32_t DT_STRING = 7;
  static constexpr std::int32_t DT_INT64 = 9;

  std::int32_t dtype = DT_INVALID;  // field 1
  bool has_shape = false;           // field 2 present (TF writes `12 00` for a scalar)
  std::vector<std::int64_t> shape;  // tensor_shape.dim[i].size; empty: rank 0
  std::string tensor_content;       // field 4
  std::vector<float> float_val;     // field 5 (packed)
  std::vector<double> double_val;   // field 6 (packed)

  /// The value of a rank-0 (or one-element) DT_FLOAT / DT_DOUBLE tensor, from tensor_content
  /// or float_val / double_val; nullopt for anything else.
  [[nodiscard]] std::optional<double> scalar() const {
    for (std::int64_t d : shape) {
      if (d != 1) return std::nullopt;
    }
    if (dtype == DT_FLOAT) {
      if (tensor_content.size() == 4) {
        return static_cast<double>(std::bit_cast<float>(load_le<std::uint32_t>(0)));
      }
      if (tensor_content.empty() && float_val.size() == 1) {
        return static_cast<double>(float_val[0]);
      }
    } else if (dtype == DT_DOUBLE) {
      if (tensor_content.size() == 8) return std::bit_cast<double>(load_le<std::uint64_t>(0));
      if (tensor_content.empty() && double_val.size() == 1) return double_val[0];
    }
    return std::nullopt;
  }

  /// A rank-0 DT_FLOAT tensor with its 4 bytes in tensor_content, as `tf.summary.scalar` writes.
  [[nodiscard]] static TensorProto float_scalar(float value) {
    TensorProto t;
    t.dtype = DT_FLOAT;
    t.has_shape = true;
    const auto bits = std::bit_cast<std::uint32_t>(value);
    for (int i = 0; i < 4; ++i)
      t.tensor_content.push_back(static_cast<char>((bits >> (8 * i)) & 0xFFu));
    return t;
  }

 private:
  template <class U>
  [[nodiscard]] U load_le(std::size_t at) const {
    U v = 0;
    for (std::size_t i = 0; i < sizeof(U); ++i) {
      v |= static_cast<U>(static_cast<unsigned char>(tensor_content[at + i])) << (8 * i);
    }
    return v;
  }
};

/// tensorflow.HistogramProto: min, max, num, sum, sum_squares (fields 1-5, doubles), then
/// bucket_limit (6) and bucket (7), packed doubles of equal length. bucket[i] counts the
/// values in [bucket_limit[i-1], bucket_limit[i]) (the first bucket starts at -DBL_MAX).
struct HistogramProto {
  double min = 0.0;
  double max = 0.0;
  double num = 0.0;
  double sum = 0.0;
  double sum_squares = 0.0;
  std::vector<double> bucket_limit;
  std::vector<double> bucket;
};

/// tensorflow.SummaryMetadata: plugin_data {plugin_name (1), content (2)} (field 1),
/// display_name (2), summary_description (3), data_class (4: 0 unknown, 1 scalar, 2 tensor,
/// 3 blob sequence).
struct SummaryMetadata {
  std::string plugin_name;
  std::string plugin_content;
  std::string display_name;
  std::string summary_description;
  std::int32_t data_class = 0;
};

/// tensorflow.Summary.Value: a tag and one of simple_value (2), histo (5), tensor (8), with
/// optional metadata (9). Image (4), audio (6) and the obsolete histogram (3) are decoded as
/// Kind::other without their contents.
struct SummaryValue {
  enum class Kind { none, simple_value, histo, tensor, other };

  std::string tag;
  Kind kind = Kind::none;
  float simple_value = 0.0f;
  HistogramProto histo;
  TensorProto tensor;
  std::optional<SummaryMetadata> metadata;

  /// The scalar this value holds: a simple_value, or a one-element DT_FLOAT / DT_DOUBLE
  /// tensor; nullopt otherwise.
  [[nodiscard]] std::optional<double> scalar() const {
    if (kind == Kind::simple_value) return static_cast<double>(simple_value);
    if (kind == Kind::tensor) return tensor.scalar();
    return std::nullopt;
  }
};

/// tensorflow.Summary: `repeated Value value = 1`.
struct Summary {
  std::vector<SummaryValue> value;
};

/// How a scalar summary is stored: `tensor`, a rank-0 DT_FLOAT tensor with plugin metadata
/// "scalars", as TF 2's `tf.summary.scalar` writes it (TensorBoard's recommended form); or
/// `simple_value`, the float field of TF 1's `tf.compat.v1.summary.scalar` (read by every tool,
/// including the legacy EventAccumulator.Scalars()).
enum class ScalarForm { tensor, simple_value };

/// A scalar Summary.Value `tag` = `value`, stored as float32 (DT_FLOAT) in `form`. The tensor
/// form carries metadata {plugin_data {plugin_name: "scalars"}} on every value, exactly as
/// TensorFlow 2.x writes it (no content, no data_class).
template <class = void>
[[nodiscard]] SummaryValue scalar_value(std::string_view tag, double value,
                                        ScalarForm form = ScalarForm::tensor) {
  SummaryValue v;
  v.tag = std::string(tag);
  if (form == ScalarForm::simple_value) {
    v.kind = SummaryValue::Kind::simple_value;
    v.simple_value = static_cast<float>(value);
    return v;
  }
  v.kind = SummaryValue::Kind::tensor;
  v.tensor = TensorProto::float_scalar(static_cast<float>(value));
  v.metadata = SummaryMetadata{};
  v.metadata->plugin_name = "scalars";
  return v;
}

}  // namespace hookfuse::io
