// hookfuse/hooks/final_ops_hook.hpp: FinalOpsHook (tf.compat.v1.train.FinalOpsHook).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <utility>
#include <vector>

#include "hookfuse/fixed_string.hpp"
#include "hookfuse/hooks/session_run_hook.hpp"

namespace hookfuse {

/// A tensor's value kept by a hook after its session is gone: a row-major copy of [rows, cols]
/// values of `dtype`. value() views it as a TensorValue (item(), item_int(), at(i, j)); the
/// view is valid while this object lives and is not changed.
struct KeptTensor {
  Eigen::Index rows = 0;
  Eigen::Index cols = 0;
  DType dtype = DType::float32;
  std::vector<unsigned char> bytes;

  TensorValue value() const { return {bytes.data(), rows, cols, cols, 1, dtype}; }

  /// A copy of `t` (any strides; the copy is row-major).
  static KeptTensor copy_of(const TensorValue& t) {
    KeptTensor k;
    k.rows = t.rows;
    k.cols = t.cols;
    k.dtype = t.dtype;
    const std::size_t width = dtype_size(t.dtype);
    k.bytes.resize(static_cast<std::size_t>(t.rows * t.cols) * width);
    const auto* src = static_cast<const unsigned char*>(t.data);
    std::size_t out = 0;
    for (Eigen::Index i = 0; i < t.rows; ++i)
      for (Eigen::Index j = 0; j < t.cols; ++j, out += width)
        std::memcpy(k.bytes.data() + out,
                    src + static_cast<std::size_t>(i * t.row_stride + j * t.col_stride) * width,
                    width);
    return k;
  }

};

/// Evaluates the named tensors `Names...` once, when the session ends (end(): close(), the
/// destructor, or the input running out and then close), and keeps their values, as
/// TensorFlow's FinalOpsHook(final_ops). Each is what session.fetch<"name">() gives at that
/// point: a model tensor or extra computed for the last batch fed, "global_step" (the final
/// step), or "gradients/<name>" (a stored gradient). The names are checked at compile time
/// (a name the model lacks is a compile error). Nothing happens during the runs: no fetch, no
/// allocation; end() allocates the copies.
///
/// Read them with final_ops_values() (std::nullopt before end() was called; TF: None) or
/// value<"name">(). Errors: a tensor that reads a placeholder never fed (the session ended before
/// any step) throws ShapeError from end(), as TF's session.run fails for an unfed placeholder.
/// In a session fed by the caller (caller_feeds), a run's feeds last for that run only (TF's
/// feed_dict), so a tensor the last run did not compute (not fetched by the caller or a hook)
/// and that reads a placeholder throws ShapeError from end() too: the caller's batch may be gone
/// (TF: a FinalOpsHook on such a tensor needs final_ops_feed_dict).
/// Differences from TF: no final_ops_feed_dict (the last batch fed is what the tensors see; a
/// caller-fed session can run<"name">(feed<...>(...)) instead); the names are a compile-time
/// list, not a dict or list of tensors.
template <fixed_string... Names>
class FinalOpsHook {
  static_assert(sizeof...(Names) > 0, "hookfuse: FinalOpsHook<\"name\", ...>: name the tensors");

 public:
  using values_type = std::array<KeptTensor, sizeof...(Names)>;

  template <class Session>
  void end(Session& session) {
    values_type v;
    std::size_t i = 0;
    ((v[i++] = KeptTensor::copy_of(session.template fetch<Names>())), ...);
    values_ = std::move(v);
  }

  /// The values, in the order of Names, once end() ran.
  const std::optional<values_type>& final_ops_values() const { return values_; }

  /// The value of `Name` (one of Names) once end() ran; empty before.
  template <fixed_string Name>
  std::optional<TensorValue> value() const {
    constexpr std::size_t i = detail::position<Name, Names...>();
    static_assert(i < sizeof...(Names),
                  "hookfuse: FinalOpsHook::value<Name>: not one of its names");
    if (!values_) return std::nullopt;
    return (*values_)[i < sizeof...(Names) ? i : 0].value();
  }

 private:
  std::optional<values_type> values_;
};

}  // namespace hookfuse
