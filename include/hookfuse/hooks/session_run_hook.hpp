// hookfuse/hooks/session_run_hook.hpp: what hooks exchange with the session on every run
// (tf.compat.v1.train.SessionRunArgs, SessionRunContext, SessionRunValues).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string_view>
#include <tuple>
#include "hookfuse/config.hpp"
#include "hookfuse/detail/eigen.hpp"
#include "hookfuse/detail/format.hpp"

#include "hookfuse/fixed_string.hpp"

namespace hookfuse {

/// What a hook's before_run asks the session to compute in this run: the names of model tensors
/// ("loss", "accuracy", "global_step"), or "gradients/<name>" for d loss / d <name> (a variable
/// such as "gradients/dense/kernel", or any tensor the loss depends on), like tf.gradients.
/// The names are checked against the model at compile time.
/// `active == false` is TensorFlow's `return None`: nothing is requested this run, so a tensor
/// outside the loss's graph (a metric) is not computed.
template <fixed_string... Names>
struct SessionRunArgs {
  bool active = true;
  /// The "return None" value of before_run.
  static constexpr SessionRunArgs none() { return SessionRunArgs{false}; }
};

/// What a before_run that also feeds placeholders returns, TensorFlow's
/// `SessionRunArgs(fetches, feed_dict)`: the fetches part is a SessionRunArgs<Names...> (its
/// names, its `active`), `feed_dict` holds feed<"x">(...) entries (autodiff/feeds.hpp; any data
/// a feed<...>() overload accepts). Build it with with_feeds(SessionRunArgs<...>{}, feeds...).
/// When `active` is true the session applies the feeds to this run after the input's (and the
/// caller's) feeds, checked like session.run(feed<"x">(...)): scalar type and placeholder at
/// compile time, shape before the forward pass (ShapeError naming the placeholder). When it is
/// false (TF's `return None`) nothing is fetched or fed. Two hooks feeding one placeholder, or a
/// hook and the caller's run(feed<...>), is a compile error naming the placeholder (TF's
/// RuntimeError "Same tensor is fed by two hooks." / "... by a SessionRunHook and user."); a
/// hook feed replaces the input object's feed of the same placeholder for that run (TF: a
/// feed_dict entry replaces any tensor's value, an input pipeline's included). The data must
/// stay valid until the run's after_run calls are over.
template <class Fetches, class... Feeds>
struct SessionRunArgsWithFeeds : Fetches {
  std::tuple<Feeds...> feed_dict;
};

/// `with_feeds(SessionRunArgs<"loss">{}, feed<"x">(xs, rows))`: fetches and a feed_dict.
template <fixed_string... Names, class... Feeds>
constexpr SessionRunArgsWithFeeds<SessionRunArgs<Names...>, Feeds...> with_feeds(
    SessionRunArgs<Names...> fetches, Feeds... feeds) {
  return {fetches, std::tuple<Feeds...>(feeds...)};
}

/// The element type of a fetched tensor.
enum class DType { float32, float64, int32, int64 };

/// Bytes per element of `d`: 4 for float32 and int32, 8 for float64 and int64.
constexpr std::size_t dtype_size(DType d) {
  return d == DType::float32 || d == DType::int32 ? 4 : 8;
}

/// A fetched tensor: a read-only view of [rows, cols] values owned by the session, valid until
/// the next run. Scalars (the loss, metrics, global_step) are [1, 1]; read them with item().
struct TensorValue {
  const void* data = nullptr;
  Eigen::Index rows = 0;
  Eigen::Index cols = 0;
  Eigen::Index row_stride = 0;  // elements between rows (row-major storage)
  Eigen::Index col_stride = 1;  // elements between columns
  DType dtype = DType::float32;

  Eigen::Index size() const { return rows * cols; }
  /// Element (i, j) converted to host_float (double; float in embedded builds). Throws std::out_of_range naming the index and the
  /// shape when (i, j) is outside [rows, cols] (an empty tensor has no element).
  host_float at(Eigen::Index i, Eigen::Index j) const {
    check_index(i, j);
    const Eigen::Index k = i * row_stride + j * col_stride;
    switch (dtype) {
      case DType::float32: return static_cast<host_float>(static_cast<const float*>(data)[k]);
      case DType::float64: return static_cast<host_float>(static_cast<const double*>(data)[k]);
      case DType::int32:
        return static_cast<host_float>(static_cast<const std::int32_t*>(data)[k]);
      case DType::int64:
        return detail::intfmt::from_int64<host_float>(static_cast<const std::int64_t*>(data)[k]);
    }
    return 0;
  }
  /// The first element as host_float (double; float in embedded builds), like numpy's item()
  /// on a one-element array; throws std::out_of_range for an empty tensor (numpy: ValueError).
  host_float item() const { return at(0, 0); }
  /// The first element as an integer (global_step); std::out_of_range for an empty tensor.
  std::int64_t item_int() const {
#ifdef HOOKFUSE_EMBEDDED
    // From the value's bits: a float-to-int64 cast is software double arithmetic on 32-bit
    // targets.
    if (dtype != DType::int64) return detail::intfmt::truncate_to_int64(item());
#else
    if (dtype != DType::int64) return static_cast<std::int64_t>(item());
#endif
    check_index(0, 0);
    return *static_cast<const std::int64_t*>(data);
  }

 private:
  void check_index(Eigen::Index i, Eigen::Index j) const {
    if (i < 0 || j < 0 || i >= rows || j >= cols)
      detail::fail<std::out_of_range>(
          (detail::ErrorMessage() << "TensorValue: element (" << static_cast<long long>(i)
                                  << ", " << static_cast<long long>(j)
                                  << ") is outside the [" << static_cast<long long>(rows) << ", "
                                  << static_cast<long long>(cols) << "] tensor")
              .str());
  }
};

namespace detail {
template <class T>
constexpr DType dtype_of() {
  if constexpr (std::is_same_v<T, float>) return DType::float32;
  else if constexpr (std::is_same_v<T, double>) return DType::float64;
  else if constexpr (std::is_same_v<T, std::int32_t>) return DType::int32;
  else return DType::int64;
}
template <class M>
TensorValue tensor_value(const M& m) {
  using T = std::remove_const_t<typename M::Scalar>;
  const bool row_major = (M::Flags & Eigen::RowMajorBit) != 0;
  return {m.data(), m.rows(), m.cols(), row_major ? m.outerStride() : 1,
          row_major ? 1 : m.outerStride(), dtype_of<T>()};
}

inline constexpr std::string_view gradients_prefix = "gradients/";

/// "gradients/dense/kernel" -> "dense/kernel"; "" for a name without the prefix.
constexpr std::string_view gradient_target(std::string_view name) {
  return name.starts_with(gradients_prefix) ? name.substr(gradients_prefix.size())
                                            : std::string_view{};
}

/// The fixed_string after "gradients/" of a gradient fetch name.
template <fixed_string Name>
constexpr auto gradient_target_name() {
  constexpr std::size_t n = Name.size() - gradients_prefix.size();
  fixed_string<n + 1> out;
  for (std::size_t i = 0; i < n; ++i) out.data[i] = Name.data[gradients_prefix.size() + i];
  return out;
}

template <fixed_string Name, fixed_string... Names>
constexpr std::size_t position() {
  std::size_t i = 0, found = sizeof...(Names);
  (void)((Names == Name ? (found = i, true) : (++i, false)) || ...);
  return found;
}
}  // namespace detail

/// What after_run receives: the values of the tensors that the hook's before_run requested, in
/// this run (tensors computed before the variables were updated; "global_step" is the value
/// before this run's increment, as in TensorFlow). A requested Variable is a view of the
/// variable itself, so in after_run it already shows this run's update. Read one with `values.get<"loss">()`.
template <fixed_string... Names>
struct SessionRunValues {
  TensorValue results[sizeof...(Names) == 0 ? 1 : sizeof...(Names)];

  template <fixed_string Name>
  const TensorValue& get() const {
    constexpr std::size_t i = detail::position<Name, Names...>();
    static_assert(i < sizeof...(Names),
                  "hookfuse: after_run reads a tensor that this hook's before_run did not request");
    return results[i < sizeof...(Names) ? i : 0];  // no out-of-bounds warning after the assert
  }
};

/// What the caller passed to this run, as TensorFlow's `run_context.original_args`
/// (a SessionRunArgs(fetches, feed_dict)): `fetches` are the names of the tensors the caller
/// asked run<"loss", "accuracy">() for, in that order; empty for a plain run().
struct OriginalArgs {
  std::span<const std::string_view> fetches{};
};

namespace detail {
/// The names of a fetch list, in static storage (what OriginalArgs::fetches views).
template <fixed_string... Names>
inline constexpr std::array<std::string_view, sizeof...(Names)> fetch_names{Names.view()...};
}  // namespace detail

/// The tag of a hooked run that does not train: `session.run(no_train)`,
/// `session.run<"loss">(no_train, feed<"x">(...), ...)` on a MonitoredTrainingSession, as
/// TensorFlow's `sess.run(loss)` (fetches that are not the train op) inside a
/// MonitoredTrainingSession. Every hook's before_run and after_run is called
/// (run_context.trains() is false); nothing is trained, nor the global step changed.
struct NoTrain {
  explicit NoTrain() = default;
};
inline constexpr NoTrain no_train{};

/// Passed to before_run and after_run: lets a hook stop training (request_stop), read the
/// global step and see what the caller asked the run for (original_args). Mirrors
/// tf.compat.v1.train.SessionRunContext; trains() has no TensorFlow counterpart (a TF hook
/// cannot tell whether the run contains the train op).
class SessionRunContext {
 public:
  explicit SessionRunContext(const std::int64_t* global_step, OriginalArgs original_args = {},
                             std::int64_t global_step_increment = 1, bool trains = true)
      : global_step_(global_step),
        original_args_(original_args),
        global_step_increment_(global_step_increment),
        trains_(trains) {}
  /// Ends training after this run; the session's should_stop() becomes true.
  void request_stop() { stop_requested_ = true; }
  bool stop_requested() const { return stop_requested_; }
  /// The global step now (in after_run: after this run's increment).
  std::int64_t global_step() const { return *global_step_; }
  /// The caller's arguments to this run (TensorFlow's run_context.original_args).
  const OriginalArgs& original_args() const { return original_args_; }
  /// The train op's global_step_increment (>= 0), the `steps_per_run` of TensorFlow's
  /// step-based hooks: what a training run adds to the global step, so that the global step
  /// after it is the stale one fetched in before_run plus this. Unchanged in a run that does
  /// not train (trains() false), where the global step stays put: TF's hooks keep their
  /// steps_per_run, and assume it, in every run.
  std::int64_t global_step_increment() const { return global_step_increment_; }
  /// Whether this run trains (runs the train op: backward pass, update, global-step increment):
  /// false in session.run(no_train, ...) and in an evaluation session's runs.
  bool trains() const { return trains_; }

 private:
  const std::int64_t* global_step_;
  OriginalArgs original_args_;
  std::int64_t global_step_increment_;
  bool trains_;
  bool stop_requested_ = false;
};

}  // namespace hookfuse
