// hookfuse/hooks/device_checkpoint.hpp: a session's or a graph's checkpoint (its variables, the
// optimizer's slots, the global step, the hooks' state) saved to and restored from a
// caller-given byte buffer, standing in for flash: the layout of io/buffer_checkpoint.hpp. No
// heap, no file system, no exceptions; every function returns the io layer's result.
//
//     alignas(4) static std::byte flash[1024];
//     auto saved = save_checkpoint_to_buffer(session, flash);      // saved.size bytes written
//     ...                                                          // reset, a fresh session
//     auto restored = restore_checkpoint_from_buffer(session, flash);
//     if (!restored) report(io::name(restored.error), restored.tensor);
//
// The tensors are the session's checkpoint variables (session.variables(): the model's
// Variables in tape order, the optimizer's slots, the hooks' state fields) without
// "global_step", which goes into the header; a restore sets the global step from it. Restore
// right after creating the session and before its first run. A hook that reads the global step
// in after_create_session (StopAtStepHook{.num_steps}) saw the step before the restore: give
// such hooks absolute values (StopAtStepHook{.last_step}).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "hookfuse/hooks/checkpoint_variables.hpp"
#include "hookfuse/io/buffer_checkpoint.hpp"
#include "hookfuse/optim/global_step.hpp"

namespace hookfuse {
namespace detail {

constexpr io::BufferDType buffer_dtype(DType d) {
  switch (d) {
    case DType::float32:
      return io::BufferDType::float32;
    case DType::float64:
      return io::BufferDType::float64;
    case DType::int32:
      return io::BufferDType::int32;
    case DType::int64:
      return io::BufferDType::int64;
  }
  return io::BufferDType::float32;
}

inline bool is_global_step(const CheckpointVariable& v) {
  return v.name == "global_step" && v.dtype == DType::int64 && v.shape.rank == 0;
}

/// A VariableList as the io layer's tensor list (size(), operator[] giving io::BufferTensor),
/// without its "global_step" entry, which `step` points to (nullptr when the list has none).
class BufferTensorView {
 public:
  explicit BufferTensorView(VariableList vars) : vars_(vars) {
    for (std::size_t i = 0; i < vars.size(); ++i)
      if (is_global_step(vars[i])) {
        skip_ = i;
        step = static_cast<std::int64_t*>(vars[i].data);
        break;
      }
  }
  std::size_t size() const { return vars_.size() - (step != nullptr ? 1 : 0); }
  io::BufferTensor operator[](std::size_t i) const {
    const CheckpointVariable& v = vars_[i >= skip_ ? i + 1 : i];
    io::BufferTensor t;
    t.name = v.name;
    t.dtype = buffer_dtype(v.dtype);
    t.rank = v.shape.rank;
    for (int d = 0; d < v.shape.rank && d < io::BufferTensor::max_rank; ++d)
      t.dims[static_cast<std::size_t>(d)] = v.shape.dim_sizes[static_cast<std::size_t>(d)];
    t.data = v.data;
    t.optional = v.optional;
    return t;
  }
  std::int64_t* step = nullptr;

 private:
  VariableList vars_;
  std::size_t skip_ = static_cast<std::size_t>(-1);
};

}  // namespace detail

/// Bytes a buffer checkpoint of `vars` takes (0 when a variable cannot be stored: an empty or
/// over-long name, rank above 4).
inline std::size_t buffer_checkpoint_size(VariableList vars) {
  return io::buffer_checkpoint_size(detail::BufferTensorView(vars));
}

/// Saves `vars` into `out` (io::save_buffer_checkpoint): every variable but "global_step" as a
/// record, in list order, the value of "global_step" (int64, shape []) in the header (0 when
/// the list has none). Errors: too_small (nothing written), bad_tensor.
inline io::BufferSaveResult save_checkpoint_to_buffer(VariableList vars, std::span<std::byte> out) {
  const detail::BufferTensorView view(vars);
  return io::save_buffer_checkpoint(view, view.step != nullptr ? *view.step : 0, out);
}

/// Restores `vars` from the checkpoint at the start of `in` (io::restore_buffer_checkpoint):
/// every record must name a variable of the list with its dtype and TensorFlow shape, and every
/// non-optional variable must have a record; otherwise nothing is written and the result names
/// the error and the tensor. On success the list's "global_step" is set to the saved step.
inline io::BufferRestoreResult restore_checkpoint_from_buffer(VariableList vars,
                                                              std::span<const std::byte> in) {
  const detail::BufferTensorView view(vars);
  const io::BufferRestoreResult r = io::restore_buffer_checkpoint(view, in);
  if (r && view.step != nullptr) *view.step = r.global_step;
  return r;
}

/// Checks, writing nothing, that the checkpoint in `in` holds exactly the values of `vars` and
/// their global step (io::verify_buffer_checkpoint): the restore's checks, then value_mismatch
/// naming the first variable that differs. For reading back a flash write, or comparing runs.
inline io::BufferRestoreResult verify_checkpoint_in_buffer(VariableList vars,
                                                           std::span<const std::byte> in) {
  const detail::BufferTensorView view(vars);
  return io::verify_buffer_checkpoint(view, view.step != nullptr ? *view.step : 0, in);
}

/// A session's checkpoint (session.variables(): variables, slots, hook state, global step).
template <class Session>
requires requires(Session& s) { s.variables().data(); }
io::BufferSaveResult save_checkpoint_to_buffer(Session& session, std::span<std::byte> out) {
  const auto vars = session.variables();
  return save_checkpoint_to_buffer(VariableList(vars.data(), vars.size()), out);
}
template <class Session>
requires requires(Session& s) { s.variables().data(); }
io::BufferRestoreResult restore_checkpoint_from_buffer(Session& session,
                                                       std::span<const std::byte> in) {
  const auto vars = session.variables();
  return restore_checkpoint_from_buffer(VariableList(vars.data(), vars.size()), in);
}

template <class Session>
requires requires(Session& s) { s.variables().data(); }
io::BufferRestoreResult verify_checkpoint_in_buffer(Session& session,
                                                    std::span<const std::byte> in) {
  const auto vars = session.variables();
  return verify_checkpoint_in_buffer(VariableList(vars.data(), vars.size()), in);
}

/// A bare graph's checkpoint (checkpoint_variables(graph, global_step): its Variables in tape
/// order and the global step), without a session.
template <class GraphT>
requires requires(GraphT& g) {
  g.for_each_variable([](auto&) {});
}
io::BufferSaveResult save_checkpoint_to_buffer(GraphT& graph, GlobalStep& global_step,
                                               std::span<std::byte> out) {
  const auto vars = checkpoint_variables(graph, global_step);
  return save_checkpoint_to_buffer(VariableList(vars.data(), vars.size()), out);
}
template <class GraphT>
requires requires(GraphT& g) {
  g.for_each_variable([](auto&) {});
}
io::BufferRestoreResult restore_checkpoint_from_buffer(GraphT& graph, GlobalStep& global_step,
                                                       std::span<const std::byte> in) {
  const auto vars = checkpoint_variables(graph, global_step);
  return restore_checkpoint_from_buffer(VariableList(vars.data(), vars.size()), in);
}

}  // namespace hookfuse
