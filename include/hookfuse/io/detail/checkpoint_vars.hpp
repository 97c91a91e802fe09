// hookfuse/io/detail/checkpoint_vars.hpp: how the Saver and init_from_checkpoint see a list of
// variables without knowing the session's types, and the check-everything-then-write restore
// they share.
//
// A variable descriptor is any object `v` with
//   v.name   convertible to std::string_view   the checkpoint key ("dense/kernel")
//   v.dtype  io::DataType, or an enum with enumerators float32, float64, int32, int64
//   v.shape  io::TensorShape, or any type whose dims() is a span of int64 dimension sizes
//   v.data   void* (or T*): shape.num_elements() values, row-major, as the bundle stores them
// (the session's CheckpointVariable is one). A variable list is any range of them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "hookfuse/config.hpp"
#include "hookfuse/errors.hpp"
#include "hookfuse/io/bundle_reader.hpp"
#include "hookfuse/io/bundle_writer.hpp"
#include "hookfuse/io/data_type.hpp"
#include "hookfuse/io/errors.hpp"
#include "hookfuse/io/tensor_shape.hpp"

namespace hookfuse::io::detail {

/// The checkpoint dtype of a descriptor's dtype: io::DataType as is; an enum with float32,
/// float64, int32 and int64 enumerators (hookfuse::DType) mapped to DT_FLOAT, DT_DOUBLE,
/// DT_INT32, DT_INT64; DT_INVALID for any other value.
template <class D>
[[nodiscard]] constexpr DataType to_data_type(D d) noexcept {
  if constexpr (std::is_same_v<D, DataType>) {
    return d;
  } else {
    if (d == D::float32) return DataType::DT_FLOAT;
    if (d == D::float64) return DataType::DT_DOUBLE;
    if (d == D::int32) return DataType::DT_INT32;
    if (d == D::int64) return DataType::DT_INT64;
    return DataType::DT_INVALID;
  }
}

/// The TensorFlow shape of a descriptor.
template <class S>
[[nodiscard]] TensorShape to_tensor_shape(const S& s) {
  if constexpr (std::is_same_v<S, TensorShape>) {
    return s;
  } else {
    const auto dims = s.dims();
    return TensorShape(
        std::span<const std::int64_t>(std::data(dims), std::size(dims)));
  }
}

/// What the io layer needs of one variable, taken out of a descriptor.
struct VarView {
  std::string_view name;
  DataType dtype = DataType::DT_INVALID;
  TensorShape shape;
  void* data = nullptr;
  bool optional = false;  // a restore skips it when the checkpoint lacks the name
  std::string_view conflicting_key = {};  // a restore refuses a checkpoint holding this key
  std::string_view conflict_reason = {};  // why, for the message
};

/// The views of every descriptor of `vars`, checked: non-empty unique names, a dtype among
/// float, double, int32, int64, non-negative dimensions, data present when there are elements.
/// `where` prefixes messages ("Saver.save(D/model.ckpt-100)"). Throws hookfuse::ValueError.
template <class Vars>
[[nodiscard]] std::vector<VarView> view_variables(const Vars& vars, const std::string& where) {
  std::vector<VarView> out;
  std::set<std::string_view> names;
  for (const auto& v : vars) {
    VarView view{std::string_view(v.name), to_data_type(v.dtype), to_tensor_shape(v.shape),
                 const_cast<void*>(static_cast<const void*>(v.data))};
    if constexpr (requires { v.optional; }) view.optional = v.optional;
    if constexpr (requires { v.conflicting_key; }) {
      view.conflicting_key = std::string_view(v.conflicting_key);
      view.conflict_reason = std::string_view(v.conflict_reason);
    }
    const std::string name(view.name);
    if (view.name.empty())
      ::hookfuse::detail::fail<ValueError>(where + ": a variable has an empty name");
    if (!names.insert(view.name).second)
      ::hookfuse::detail::fail<ValueError>(where + ": variable '" + name +
                                           "' is listed twice; each variable is saved once");
    if (!is_supported_numeric(view.dtype))
      ::hookfuse::detail::fail<ValueError>(where + ": variable '" + name + "' has " +
                                           describe_data_type(view.dtype) +
                                           ", expected float32, float64, int32 or int64");
    const auto n = checked_num_elements(view.shape.dim_sizes());
    if (!n)
      ::hookfuse::detail::fail<ValueError>(where + ": variable '" + name + "' has shape " +
                                           view.shape.debug_string() +
                                           ", expected non-negative dimensions");
    if (*n > 0 && view.data == nullptr)
      ::hookfuse::detail::fail<ValueError>(where + ": variable '" + name + "' has no data pointer");
    out.push_back(std::move(view));
  }
  return out;
}

/// Appends `v`'s values to a bundle under `key`.
template <class = void>
void add_to_bundle(BundleWriter& writer, std::string_view key, const VarView& v) {
  const auto n = static_cast<std::size_t>(v.shape.num_elements());
  auto add = [&]<class T>(const T*) {
    writer.add(key, v.shape, std::span<const T>(static_cast<const T*>(v.data), n));
  };
  switch (v.dtype) {
    case DataType::DT_FLOAT:
      add(static_cast<const float*>(nullptr));
      break;
    case DataType::DT_DOUBLE:
      add(static_cast<const double*>(nullptr));
      break;
    case DataType::DT_INT32:
      add(static_cast<const std::int32_t*>(nullptr));
      break;
    case DataType::DT_INT64:
      add(static_cast<const std::int64_t*>(nullptr));
      break;
    default:
      break;  // view_variables refused it
  }
}

/// One planned read: checkpoint tensor `tensor` into variable `var`.
struct TensorAssignment {
  const VarView* var = nullptr;
  std::string tensor;
};

/// "'<var>' (<dtype> <shape>)", how messages name a variable.
template <class = void>
[[nodiscard]] std::string describe_var(const VarView& v) {
  return "'" + std::string(v.name) + "' (" + describe_data_type(v.dtype) + " " +
         v.shape.debug_string() + ")";
}

/// The reason tensor `a.tensor` of `reader` cannot be read into `a.var`, or "" when it can: it
/// is missing, sliced, or has another dtype or TensorFlow shape, or the checkpoint holds the
/// variable's conflicting_key (so the tensor means something else there).
template <class = void>
[[nodiscard]] std::string assignment_problem(const BundleReader& reader,
                                             const TensorAssignment& a) {
  const std::string var = describe_var(*a.var);
  if (!reader.contains(a.tensor))
    return "tensor '" + a.tensor + "' for variable " + var + " is not in the checkpoint";
  if (!a.var->conflicting_key.empty() && reader.contains(a.var->conflicting_key))
    return "tensor '" + a.tensor + "' cannot be restored into variable " + var +
           ": the checkpoint also holds '" + std::string(a.var->conflicting_key) + "', so " +
           std::string(a.var->conflict_reason);
  const BundleEntry& e = reader.entry(a.tensor);
  if (e.sliced)
    return "tensor '" + a.tensor + "' for variable " + var +
           " is a partitioned variable, which hookfuse does not read";
  if (e.dtype != a.var->dtype || e.shape != a.var->shape)
    return "variable " + var + " does not match tensor '" + a.tensor + "' (" +
           describe_data_type(e.dtype) + " " + e.shape.debug_string() + ") in the checkpoint";
  return {};
}

/// Reads every assignment, all or nothing: first checks each (assignment_problem; one error
/// listing every problem, NotFoundError when all are missing names, ValueError otherwise), then
/// reads every tensor into a staging buffer (CRC32C checked: DataLossError), and only then
/// copies the values into the variables. On any error no variable has been written.
template <class = void>
void read_all_or_nothing(const BundleReader& reader, const std::vector<TensorAssignment>& plan,
                         const std::string& where) {
  std::string problems;
  bool only_missing = true;
  for (const TensorAssignment& a : plan) {
    const std::string p = assignment_problem(reader, a);
    if (p.empty()) continue;
    if (reader.contains(a.tensor)) only_missing = false;
    problems += "\n  " + p;
  }
  if (!problems.empty()) {
    const std::string msg = where + ": checkpoint " + reader.index_path().string() +
                            " cannot be restored; nothing was written:" + problems;
    if (only_missing) ::hookfuse::detail::fail<NotFoundError>(msg);
    ::hookfuse::detail::fail<ValueError>(msg);
  }
  std::vector<std::vector<std::byte>> staged;
  staged.reserve(plan.size());
  for (const TensorAssignment& a : plan) staged.push_back(reader.lookup_bytes(a.tensor));
  for (std::size_t i = 0; i < plan.size(); ++i)
    if (!staged[i].empty()) std::memcpy(plan[i].var->data, staged[i].data(), staged[i].size());
}

}  // namespace hookfuse::io::detail
