// hookfuse/io/init_from_checkpoint.hpp: warm start, TensorFlow's
// tf.compat.v1.train.init_from_checkpoint(ckpt_dir_or_file, assignment_map): sets variables'
// values from tensors of another checkpoint, renamed by a map of names or scopes.
//
//     io::init_from_checkpoint("pretrained/", {{"old_scope/", "new_scope/"}}, vars);
//
// Variables are descriptors as the Saver's (io/detail/checkpoint_vars.hpp).
#pragma once

#include <algorithm>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "hookfuse/config.hpp"
#include "hookfuse/errors.hpp"
#include "hookfuse/io/bundle_reader.hpp"
#include "hookfuse/io/checkpoint_state.hpp"
#include "hookfuse/io/detail/checkpoint_vars.hpp"
#include "hookfuse/io/errors.hpp"
#include "hookfuse/logging.hpp"

namespace hookfuse::io {

/// TensorFlow's assignment_map: pairs {name or scope in the checkpoint, name or scope in the
/// model}. {"/", "/"}: every model variable from the tensor of the same name; {"old/",
/// "new/"}: every model variable under "new/" from the tensor of the same name under "old/"
/// (both scopes end with '/'); {"old/w", "new/w"}: one variable from one tensor. Applied in
/// the order of the checkpoint names, as TensorFlow sorts them; a variable mapped twice takes
/// the later one.
using AssignmentMap = std::vector<std::pair<std::string, std::string>>;

/// One variable set by init_from_checkpoint: the model variable and the checkpoint tensor.
struct InitializedVariable {
  std::string variable;
  std::string tensor;
  bool operator==(const InitializedVariable&) const = default;
};

/// What init_from_checkpoint loaded: the checkpoint prefix read, and each variable set, in
/// the order of `vars`.
struct InitFromCheckpointResult {
  std::string checkpoint;
  std::vector<InitializedVariable> variables;
};

namespace detail {

/// The checkpoint prefix of `ckpt_dir_or_prefix`: a directory resolves through its state file
/// (latest_checkpoint); NotFoundError when it has none.
template <class = void>
std::filesystem::path resolve_checkpoint(const std::filesystem::path& ckpt_dir_or_prefix) {
  std::error_code ec;
  if (!std::filesystem::is_directory(ckpt_dir_or_prefix, ec)) return ckpt_dir_or_prefix;
  const std::optional<std::filesystem::path> latest = latest_checkpoint(ckpt_dir_or_prefix);
  if (!latest)
    ::hookfuse::detail::fail<NotFoundError>(
        "init_from_checkpoint: couldn't find 'checkpoint' file or checkpoints in given "
        "directory " +
        ckpt_dir_or_prefix.string() + " (no " +
        (ckpt_dir_or_prefix / kCheckpointStateFilename).string() + ")");
  return *latest;
}

}  // namespace detail

/// Sets variables of `vars` from checkpoint `ckpt_dir_or_prefix` (a checkpoint prefix, or a
/// directory whose latest checkpoint is used) as `assignment_map` says (AssignmentMap), and
/// returns which were set. Everything is checked before any variable is written; errors
/// (hookfuse::ValueError unless said otherwise), each naming the checkpoint names, the model
/// names and their dtypes and shapes:
///   - a checkpoint name the mapping needs is not in the checkpoint;
///   - a tensor's dtype or TensorFlow shape differs from its variable's;
///   - a pair whose model side is not a variable of `vars` and is not a scope mapping: both
///     sides must then end with '/' ("old_scope/": "new_scope/"), and the model scope must hold
///     at least one variable;
///   - io::NotFoundError: no checkpoint at the prefix, or none in the directory;
///   - io::DataLossError: a CRC mismatch (checked on every tensor read).
/// It only sets values: a session restoring its own checkpoint afterwards overwrites them.
template <class Vars>
InitFromCheckpointResult init_from_checkpoint(const std::filesystem::path& ckpt_dir_or_prefix,
                                              const AssignmentMap& assignment_map,
                                              const Vars& vars) {
  const std::string where = "init_from_checkpoint(" + ckpt_dir_or_prefix.string() + ")";
  const auto views = detail::view_variables(vars, where);
  const std::filesystem::path prefix = detail::resolve_checkpoint(ckpt_dir_or_prefix);
  const BundleReader reader(prefix);

  auto find_var = [&](std::string_view name) -> const detail::VarView* {
    for (const auto& v : views)
      if (v.name == name) return &v;
    return nullptr;
  };
  AssignmentMap sorted = assignment_map;
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<std::optional<std::string>> tensor_of(views.size());  // per variable
  auto assign = [&](const detail::VarView* v, std::string tensor) {
    tensor_of[static_cast<std::size_t>(v - views.data())] = std::move(tensor);
  };
  for (const auto& [ckpt_name, model_name] : sorted) {
    const std::string pair = "assignment_map {'" + ckpt_name + "': '" + model_name + "'}";
    if (const detail::VarView* v = find_var(model_name)) {
      assign(v, ckpt_name);
      continue;
    }
    if (!ckpt_name.ends_with('/') || !model_name.ends_with('/'))
      ::hookfuse::detail::fail<ValueError>(
          where + ": " + pair + ": '" + model_name +
          "' is not a variable of the model, and a scope mapping needs both names to end with "
          "'/' ('old_scope/': 'new_scope/', or '/': '/' for all variables)");
    const std::string scope =
        model_name == "/" ? std::string() : model_name.substr(0, model_name.size() - 1);
    bool any = false;
    for (const auto& v : views) {
      if (!scope.empty() && !(v.name.starts_with(scope) && v.name.size() > scope.size() &&
                              v.name[scope.size()] == '/'))
        continue;
      const std::string rest(scope.empty() ? v.name : v.name.substr(scope.size() + 1));
      assign(&v, ckpt_name == "/" ? rest : ckpt_name + rest);
      any = true;
    }
    if (!any)
      ::hookfuse::detail::fail<ValueError>(
          where + ": " + pair + ": the model has no variable in scope '" + model_name + "'");
  }

  std::vector<detail::TensorAssignment> plan;
  InitFromCheckpointResult result{prefix.string(), {}};
  for (std::size_t i = 0; i < views.size(); ++i) {
    if (!tensor_of[i]) continue;
    plan.push_back({&views[i], *tensor_of[i]});
    result.variables.push_back({std::string(views[i].name), *tensor_of[i]});
  }
  std::string problems;
  for (const auto& a : plan)
    if (std::string p = detail::assignment_problem(reader, a); !p.empty()) problems += "\n  " + p;
  if (!problems.empty())
    ::hookfuse::detail::fail<ValueError>(
        where + ": checkpoint " + reader.index_path().string() +
        " cannot initialise the model; nothing was written:" + problems);
  detail::read_all_or_nothing(reader, plan, where);
  return result;
}

/// init_from_checkpoint, then one INFO line per variable set, as TensorFlow logs them
/// ("Initialize variable new/w from checkpoint D with old/w").
template <class Vars, Logger L>
InitFromCheckpointResult init_from_checkpoint(const std::filesystem::path& ckpt_dir_or_prefix,
                                              const AssignmentMap& assignment_map, const Vars& vars,
                                              L& logger) {
  InitFromCheckpointResult r = init_from_checkpoint(ckpt_dir_or_prefix, assignment_map, vars);
  for (const auto& v : r.variables)
    logger.log(Severity::info, "Initialize variable " + v.variable + " from checkpoint " +
                                   ckpt_dir_or_prefix.string() + " with " + v.tensor);
  return r;
}

/// A warm start: which checkpoint initialises which variables, the arguments of
/// init_from_checkpoint (TF: Estimator's `warm_start_from`, a checkpoint path or
/// `tf.estimator.WarmStartSettings(ckpt_to_initialize_from, var_name_to_prev_var_name)`).
/// SessionOptions::warm_start_from holds one: `.warm_start_from = io::WarmStart{"pretrained/"}`
/// loads every variable of the same name, `{"pretrained/", {{"old/", "new/"}}}` renames.
struct WarmStart {
  /// A checkpoint prefix ("D/model.ckpt-1200") or a directory (its latest checkpoint).
  std::string ckpt_dir_or_prefix;
  /// AssignmentMap: {checkpoint name or scope, model name or scope}; default every variable.
  AssignmentMap assignment_map = {{"/", "/"}};

  /// init_from_checkpoint(ckpt_dir_or_prefix, assignment_map, vars, logger): errors as there,
  /// thrown before any variable is written.
  template <class Vars, Logger L>
  InitFromCheckpointResult apply(const Vars& vars, L& logger) const {
    return init_from_checkpoint(ckpt_dir_or_prefix, assignment_map, vars, logger);
  }
};

}  // namespace hookfuse::io
