// hookfuse/estimator/warm_start_settings.hpp: tf.estimator.WarmStartSettings and what an
// Estimator's warm_start_from accepts (a checkpoint path, WarmStartSettings, or io::WarmStart).
//
//     Estimator est(model_fn, config, params,
//                   WarmStartSettings{.ckpt_to_initialize_from = "pretrained/",
//                                     .vars_to_warm_start = "dense/.*",
//                                     .var_name_to_prev_var_name = {{"head/w", "out/w"}}});
//
// The rules are tf.compat.v1.train.warm_start's (tensorflow/python/training/
// warm_starting_util.py: warm_start, _get_grouped_variables); docs/estimator.md lists them and
// where hookfuse differs.
#pragma once

#include <cstddef>
#include <filesystem>
#include <initializer_list>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "hookfuse/errors.hpp"
#include "hookfuse/io/init_from_checkpoint.hpp"
#include "hookfuse/logging.hpp"

namespace hookfuse {

/// WarmStartSettings' vars_to_warm_start (TF accepts a str, a list of str, or None):
///   - a regex string ("dense/.*"; the default ".*"): the trainable variables whose name matches
///     at its start (Python's re.match against TF's tensor name "<name>:0", so "dense" also
///     selects "dense_1/kernel" and "kernel$" selects nothing);
///   - a list of regex strings ({"dense/kernel", "out/"}): the variables any of them matches
///     (TF searches GLOBAL_VARIABLES; hookfuse offers the model's variables only, see
///     docs/estimator.md);
///   - nullptr (TF's None) or an empty string or list: no variable is warm-started (TF then
///     warm-starts only var_name_to_vocab_info's variables, which hookfuse does not have). With
///     nullptr or "", every trainable variable still counts as selected for the check of
///     var_name_to_prev_var_name.
class VarsToWarmStart {
 public:
  VarsToWarmStart() : VarsToWarmStart(".*") {}
  VarsToWarmStart(const char* regex) : regex_(std::string(regex)) {}
  VarsToWarmStart(std::string regex) : regex_(std::move(regex)) {}
  VarsToWarmStart(std::nullptr_t) {}
  VarsToWarmStart(std::vector<std::string> regexes) : list_(std::move(regexes)) {}
  VarsToWarmStart(std::initializer_list<std::string> regexes) : list_(regexes) {}

  bool is_none() const { return !regex_ && !list_; }
  bool is_list() const { return list_.has_value(); }
  /// Python's truth value of the argument: false for None, "" and [].
  bool truthy() const { return regex_ ? !regex_->empty() : list_ ? !list_->empty() : false; }
  /// The regexes: one (string form), the list, or none (nullptr).
  std::vector<std::string> patterns() const {
    if (regex_) return {*regex_};
    if (list_) return *list_;
    return {};
  }
  /// As TensorFlow prints it: '.*', ['a', 'b'], None.
  std::string repr() const {
    if (regex_) return "'" + *regex_ + "'";
    if (!list_) return "None";
    std::string s = "[";
    for (std::size_t i = 0; i < list_->size(); ++i) s += (i ? ", '" : "'") + (*list_)[i] + "'";
    return s + "]";
  }

 private:
  std::optional<std::string> regex_;
  std::optional<std::vector<std::string>> list_;
};

/// tf.estimator.WarmStartSettings(ckpt_to_initialize_from, vars_to_warm_start='.*',
/// var_name_to_vocab_info=None, var_name_to_prev_var_name=None), without vocabularies:
///   ckpt_to_initialize_from     a checkpoint prefix ("A/model.ckpt-100") or a directory (its
///                               latest checkpoint);
///   vars_to_warm_start          which variables (VarsToWarmStart);
///   var_name_to_prev_var_name   current variable name -> its name in the checkpoint; every
///                               entry must name a selected variable.
/// Optimizer slots and global_step are never warm-started: a warm-started train() starts at
/// global step 0 with fresh slots.
struct WarmStartSettings {
  std::string ckpt_to_initialize_from;
  VarsToWarmStart vars_to_warm_start = ".*";
  std::map<std::string, std::string> var_name_to_prev_var_name = {};

  /// TF's repr: WarmStartSettings(ckpt_to_initialize_from='D', vars_to_warm_start='.*', ...).
  std::string repr() const {
    std::string m = "{";
    bool first = true;
    for (const auto& [k, v] : var_name_to_prev_var_name) {
      m += (first ? "'" : ", '") + k + "': '" + v + "'";
      first = false;
    }
    return "WarmStartSettings(ckpt_to_initialize_from='" + ckpt_to_initialize_from +
           "', vars_to_warm_start=" + vars_to_warm_start.repr() +
           ", var_name_to_vocab_info={}, var_name_to_prev_var_name=" + m + "})";
  }

  /// Of `names` (the model's trainable variables, in order), those vars_to_warm_start selects
  /// (TF's _get_grouped_variables keys). ValueError naming the pattern when one is not a valid
  /// regular expression (ECMAScript syntax, std::regex). `Regex` is a template parameter so
  /// that only the translation units that warm start instantiate std::regex.
  template <class Regex = std::regex>
  std::vector<std::string> selected(const std::vector<std::string>& names) const {
    if (vars_to_warm_start.is_none()) return names;  // get_collection(scope=None): all
    std::vector<Regex> res;
    for (const auto& p : vars_to_warm_start.patterns()) {
      try {
        res.emplace_back(p);
      } catch (const std::regex_error& e) {
        detail::fail<ValueError>("WarmStartSettings: vars_to_warm_start '" + p +
                                 "' is not a regular expression: " + e.what());
      }
    }
    std::vector<std::string> out;
    for (const auto& n : names) {
      const std::string tensor_name = n + ":0";  // TF matches the variable's tensor name
      for (const auto& re : res)
        if (std::regex_search(tensor_name, re, std::regex_constants::match_continuous)) {
          out.push_back(n);
          break;
        }
    }
    return out;
  }

  /// The assignment map warm_start applies to `names`: {checkpoint name, variable} for each
  /// selected variable (renamed by var_name_to_prev_var_name). Checks first, as TF does after
  /// its init_from_checkpoint: ValueError "You provided the following variables in
  /// var_name_to_prev_var_name that were not used: {'x'}.  Perhaps you misspelled them?  Here
  /// is the list of viable variable names: [...]" for an entry naming no selected variable.
  template <class Regex = std::regex>
  io::AssignmentMap assignment_map(const std::vector<std::string>& names) const {
    const std::vector<std::string> sel = selected<Regex>(names);
    std::set<std::string> used;
    io::AssignmentMap map;
    for (const auto& n : sel) {
      const auto it = var_name_to_prev_var_name.find(n);
      const bool renamed = it != var_name_to_prev_var_name.end() && !it->second.empty();
      if (renamed) used.insert(n);
      if (vars_to_warm_start.truthy()) map.emplace_back(renamed ? it->second : n, n);
    }
    std::string unused;
    for (const auto& [k, v] : var_name_to_prev_var_name)
      if (!used.count(k)) unused += (unused.empty() ? "'" : ", '") + k + "'";
    if (!unused.empty()) {
      std::string viable;
      for (const auto& n : sel) viable += (viable.empty() ? "'" : ", '") + n + "'";
      detail::fail<ValueError>(
          "WarmStartSettings(" + ckpt_to_initialize_from +
          "): You provided the following variables in var_name_to_prev_var_name that were not "
          "used: {" +
          unused +
          "}.  Perhaps you misspelled them?  Here is the list of viable variable names: [" +
          viable + "]");
    }
    return map;
  }

  /// tf.compat.v1.train.warm_start(*settings) into `vars` (variable descriptors as
  /// io::init_from_checkpoint takes; an Estimator passes its model's variables, neither
  /// global_step nor optimizer slots). Logs "Warm-starting from: D", "Warm-starting variables
  /// only in TRAINABLE_VARIABLES." (string and None forms) and "Warm-started N variables.".
  /// Everything is checked before any variable is written. Errors: ValueError for an unused
  /// var_name_to_prev_var_name entry (assignment_map) or a bad regex; io::init_from_checkpoint's,
  /// prefixed "WarmStartSettings: ": ValueError naming the variable, its dtype and shape, the
  /// checkpoint name and the checkpoint file when that name is not in the checkpoint or its
  /// dtype or shape differ; io::NotFoundError naming the path when there is no checkpoint there.
  template <class Vars, Logger L>
  io::InitFromCheckpointResult apply(const Vars& vars, L& logger) const {
    std::vector<std::string> names;
    for (const auto& v : vars) names.emplace_back(std::string_view(v.name));
    logger.log(Severity::info, "Warm-starting from: " + ckpt_to_initialize_from);
    if (!vars_to_warm_start.is_list())
      logger.log(Severity::info, "Warm-starting variables only in TRAINABLE_VARIABLES.");
    const io::AssignmentMap map = assignment_map(names);
    io::InitFromCheckpointResult r;
    if (!map.empty() || var_name_to_prev_var_name.empty()) {
      try {
        r = io::init_from_checkpoint(ckpt_to_initialize_from, map, vars);
      } catch (const ValueError& e) {
        detail::fail<ValueError>("WarmStartSettings: " + std::string(e.what()));
      } catch (const io::NotFoundError& e) {
        detail::fail<io::NotFoundError>("WarmStartSettings: " + std::string(e.what()));
      }
    }
    logger.log(Severity::info,
               "Warm-started " + std::to_string(r.variables.size()) + " variables.");
    return r;
  }
};

/// What Estimator's warm_start_from holds (TF: a string or a WarmStartSettings,
/// estimator.py _get_default_warm_start_settings):
///   - a path string: WarmStartSettings(ckpt_to_initialize_from=path), or, when
///     path/variables/variables.index exists (an exported SavedModel layout),
///     WarmStartSettings(path/variables/variables);
///   - WarmStartSettings;
///   - io::WarmStart (beyond TF: init_from_checkpoint's assignment map over every model
///     variable).
class WarmStartFrom {
 public:
  WarmStartFrom(WarmStartSettings s) : v_(std::move(s)) {}
  WarmStartFrom(io::WarmStart w) : v_(std::move(w)) {}
  WarmStartFrom(const char* path) : WarmStartFrom(std::string(path)) {}
  WarmStartFrom(std::string path) : v_(WarmStartSettings{std::move(path)}) {
    auto& s = std::get<WarmStartSettings>(v_);
    const std::filesystem::path vars =
        std::filesystem::path(s.ckpt_to_initialize_from) / "variables";
    std::error_code ec;
    if (std::filesystem::exists(vars / "variables.index", ec))
      s.ckpt_to_initialize_from = (vars / "variables").string();
  }

  /// The settings, or nullptr for the io::WarmStart form.
  const WarmStartSettings* settings() const { return std::get_if<WarmStartSettings>(&v_); }

  /// Warm-starts `vars`: WarmStartSettings::apply (after logging "Warm-starting with
  /// WarmStartSettings: <repr>", as the Estimator does) or io::WarmStart::apply.
  template <class Vars, Logger L>
  io::InitFromCheckpointResult apply(const Vars& vars, L& logger) const {
    if (const WarmStartSettings* s = settings()) {
      logger.log(Severity::info, "Warm-starting with WarmStartSettings: " + s->repr());
      return s->apply(vars, logger);
    }
    return std::get<io::WarmStart>(v_).apply(vars, logger);
  }

 private:
  std::variant<WarmStartSettings, io::WarmStart> v_;
};

}  // namespace hookfuse
