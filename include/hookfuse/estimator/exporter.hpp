// hookfuse/estimator/exporter.hpp: LatestExporter and BestExporter, what an EvalSpec exports
// after each evaluation (tf.estimator.LatestExporter, tf.estimator.BestExporter, exporter.py).
//
// An export is the variables of the checkpoint just evaluated, not a serving graph (hookfuse
// models are C++ types, not graphs), written to <export_path>/<global_step>/ (export_path is
// model_dir/export/<exporter name>, as TensorFlow's _Evaluator passes it) as
//   variables/variables.index, .data-00000-of-00001   a TensorFlow V2 checkpoint, the layout of
//                                                     a SavedModel's variables (load it with
//                                                     tf.train.load_checkpoint)
//   model.safetensors                                 the same tensors as a safetensors file
//   eval_result.json                                  the metrics that chose it:
//                                                     {"checkpoint_path", "global_step",
//                                                      "metrics": {"loss": ..., ...}}
// The directory is written under a temporary name ("temp-<step>") and renamed into place, so
// an export directory named by a number is always complete.
#pragma once

#include <fcntl.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "hookfuse/detail/format.hpp"
#include "hookfuse/errors.hpp"
#include "hookfuse/estimator/estimator.hpp"
#include "hookfuse/io/bundle_writer.hpp"
#include "hookfuse/io/checkpoint_reader.hpp"
#include "hookfuse/io/errors.hpp"
#include "hookfuse/io/safetensors_writer.hpp"
#include "hookfuse/logging.hpp"

namespace hookfuse {

/// BestExporter's default compare_fn (TF: exporter._loss_smaller): true when the current
/// evaluation's "loss" is smaller than the best's. Throws ValueError when either has no loss.
struct LossSmaller {
  bool operator()(const EvalResult& best_eval_result, const EvalResult& current_eval_result) const {
    if (!best_eval_result.metrics.contains("loss"))
      detail::fail<ValueError>("best_eval_result cannot be empty or no loss is found in it.");
    if (!current_eval_result.metrics.contains("loss"))
      detail::fail<ValueError>("current_eval_result cannot be empty or no loss is found in it.");
    return best_eval_result.loss() > current_eval_result.loss();
  }
};

namespace detail {

/// The export directories under `base` (names that are all digits: global steps), by step.
inline std::vector<std::pair<std::int64_t, std::filesystem::path>> export_versions(
    const std::filesystem::path& base) {
  std::vector<std::pair<std::int64_t, std::filesystem::path>> out;
  std::error_code ec;
  for (std::filesystem::directory_iterator it(base, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.empty() || name.size() > 18 ||
        !std::all_of(name.begin(), name.end(), [](char c) { return c >= '0' && c <= '9'; }))
      continue;
    if (!it->is_directory(ec)) continue;
    out.emplace_back(std::stoll(name), it->path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

/// Keeps the `keep` largest export versions under `base` and deletes the rest (TF's
/// _garbage_collect_exports; a failed deletion is logged and skipped, as TensorFlow does).
template <class Lg>
void garbage_collect_exports(const std::filesystem::path& base, std::optional<int> keep,
                             Lg& logger) {
  if (!keep) return;
  auto versions = export_versions(base);
  const std::size_t n = versions.size();
  for (std::size_t i = 0; i + static_cast<std::size_t>(*keep) < n; ++i) {
    std::error_code ec;
    std::filesystem::remove_all(versions[i].second, ec);
    if (ec)
      logger.log(Severity::warning,
                 "Can not delete " + versions[i].second.string() + " recursively: " + ec.message());
  }
}

/// The EvalResult an export recorded in its eval_result.json; nullopt when it has none or it
/// cannot be parsed (a warning is logged). `Json` is a template parameter so that only the
/// translation units that export instantiate nlohmann-json's parser.
template <class Lg, class Json = nlohmann::json>
std::optional<EvalResult> read_export_result(const std::filesystem::path& dir, Lg& logger) {
  const std::filesystem::path file = dir / "eval_result.json";
  std::ifstream in(file);
  if (!in) return std::nullopt;
  const Json j = Json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object() || !j.contains("global_step") ||
      !j["global_step"].is_number_integer() || !j.contains("metrics") ||
      !j["metrics"].is_object()) {
    logger.log(Severity::warning, "Ignoring " + file.string() + ": not an export's metrics");
    return std::nullopt;
  }
  EvalResult r;
  r.global_step = j["global_step"].template get<std::int64_t>();
  for (const auto& [k, v] : j["metrics"].items())
    if (v.is_number()) r.metrics[k] = v.template get<float>();
  return r;
}

template <class T>
void export_tensor(const io::CheckpointReader& reader, const io::BundleEntry& e,
                   io::BundleWriter& bundle, std::vector<std::vector<std::byte>>& held,
                   std::vector<io::safetensors::TensorRef>& refs) {
  const std::vector<T> values = reader.get_tensor<T>(e.key);
  bundle.add(e.key, e.shape, values);
  held.emplace_back(std::as_bytes(std::span<const T>(values)).begin(),
                    std::as_bytes(std::span<const T>(values)).end());
  std::vector<std::uint64_t> shape;
  for (const std::int64_t d : e.shape.dim_sizes()) shape.push_back(static_cast<std::uint64_t>(d));
  refs.push_back(io::safetensors::TensorRef{e.key, io::safetensors::dtype_of<T>, std::move(shape),
                                            std::span<const std::byte>(held.back())});
}

/// Moves the complete directory `temp` to `final_dir`. When `final_dir` exists (a step exported
/// again), the two are exchanged in one step (Linux renameat2 RENAME_EXCHANGE) and the old
/// export, now at `temp`, is removed, so `final_dir` holds a complete export at every instant.
/// Where the exchange is unsupported (EINVAL, ENOSYS: another kernel or file system), the old
/// export is renamed to `aside` first and renamed back when the second rename fails. Throws
/// io::IoError "cannot rename <from> to <to>: <strerror>"; the old export is then in place.
inline void replace_directory(const std::filesystem::path& temp,
                              const std::filesystem::path& final_dir,
                              const std::filesystem::path& aside) {
  const auto fail_rename = [](const std::filesystem::path& from, const std::filesystem::path& to,
                              int err) {
    fail<io::IoError>("cannot rename " + from.string() + " to " + to.string() + ": " +
                      std::strerror(err));
  };
  std::error_code ec;
  if (!std::filesystem::exists(std::filesystem::symlink_status(final_dir, ec))) {
    if (::rename(temp.c_str(), final_dir.c_str()) != 0) fail_rename(temp, final_dir, errno);
    return;
  }
#if defined(__linux__) && defined(RENAME_EXCHANGE)
  if (::renameat2(AT_FDCWD, temp.c_str(), AT_FDCWD, final_dir.c_str(), RENAME_EXCHANGE) == 0) {
    std::filesystem::remove_all(temp, ec);  // the old export
    return;
  }
  if (errno != EINVAL && errno != ENOSYS) fail_rename(temp, final_dir, errno);
#endif
  std::filesystem::remove_all(aside, ec);
  if (::rename(final_dir.c_str(), aside.c_str()) != 0) fail_rename(final_dir, aside, errno);
  if (::rename(temp.c_str(), final_dir.c_str()) != 0) {
    const int err = errno;
    (void)::rename(aside.c_str(), final_dir.c_str());
    fail_rename(temp, final_dir, err);
  }
  std::filesystem::remove_all(aside, ec);
}

/// Writes the export of `checkpoint_path` chosen by `r` to <export_path>/<r.global_step>/ (see
/// the file comment) and returns that path. A directory already there for the step is
/// replaced whole (detail::replace_directory): never removed before the new one is complete. Errors: the checkpoint reader's (NotFoundError, DataLossError), io::IoError naming
/// the path for a file that cannot be written; the temporary <export_path>/temp-<step>/ is then
/// removed. A template for the reason read_export_result is.
template <class Json = nlohmann::json>
std::string write_export(const std::filesystem::path& export_path,
                                const std::string& checkpoint_path, const EvalResult& r) {
  const std::string step = std::to_string(r.global_step);
  const std::filesystem::path final_dir = export_path / step;
  const std::filesystem::path temp_dir = export_path / ("temp-" + step);
  std::error_code ec;
  std::filesystem::remove_all(temp_dir, ec);
  // A failure at any step removes the temporary directory: nothing half-written is left.
  struct RemoveUnlessRenamed {
    const std::filesystem::path& dir;
    bool renamed = false;
    ~RemoveUnlessRenamed() {
      std::error_code rm;
      if (!renamed) std::filesystem::remove_all(dir, rm);
    }
  } guard{temp_dir};
  std::filesystem::create_directories(temp_dir / "variables", ec);
  if (ec)
    fail<io::IoError>("cannot create " + (temp_dir / "variables").string() + ": " + ec.message());
  const io::CheckpointReader reader(checkpoint_path);
  io::BundleWriter bundle(temp_dir / "variables" / "variables");
  std::vector<std::vector<std::byte>> held;  // the bytes the safetensors refs borrow
  held.reserve(reader.bundle().entries().size());
  std::vector<io::safetensors::TensorRef> refs;
  for (const io::BundleEntry& e : reader.bundle().entries()) {
    if (e.sliced) continue;
    switch (e.dtype) {
      case io::DataType::DT_FLOAT:
        export_tensor<float>(reader, e, bundle, held, refs);
        break;
      case io::DataType::DT_DOUBLE:
        export_tensor<double>(reader, e, bundle, held, refs);
        break;
      case io::DataType::DT_INT32:
        export_tensor<std::int32_t>(reader, e, bundle, held, refs);
        break;
      case io::DataType::DT_INT64:
        export_tensor<std::int64_t>(reader, e, bundle, held, refs);
        break;
      default:
        break;  // strings (a TF2 object graph) are no variables
    }
  }
  bundle.finish();
  io::safetensors::save_file(temp_dir / "model.safetensors", refs);
  Json j;
  j["checkpoint_path"] = checkpoint_path;
  j["global_step"] = r.global_step;
  j["metrics"] = Json::object();
  for (const auto& [k, v] : r.metrics) j["metrics"][k] = v;
  {
    std::ofstream out(temp_dir / "eval_result.json", std::ios::trunc);
    out << j.dump(2) << '\n';
    out.flush();
    if (!out) {
      fail<io::IoError>("cannot write " + (temp_dir / "eval_result.json").string() + ": " +
                        std::strerror(errno));
    }
  }
  replace_directory(temp_dir, final_dir, export_path / ("old-" + step));
  guard.renamed = true;
  return final_dir.string();
}

inline void check_exports_to_keep(const char* who, std::optional<int> exports_to_keep,
                                  const char* wording) {
  if (exports_to_keep && *exports_to_keep <= 0)
    fail<ValueError>(std::string(who) + ": `exports_to_keep`, if provided, must be " + wording +
                     ". Got " + std::to_string(*exports_to_keep));
}

}  // namespace detail

/// tf.estimator.LatestExporter(name, serving_input_receiver_fn, exports_to_keep=5): exports
/// after every evaluation and keeps the `exports_to_keep` newest exports (largest global
/// steps; nullopt keeps all). Throws ValueError "LatestExporter: `exports_to_keep`, if
/// provided, must be positive number. Got 0" for exports_to_keep <= 0.
class LatestExporter {
 public:
  explicit LatestExporter(std::string name, std::optional<int> exports_to_keep = 5)
      : name_(std::move(name)), exports_to_keep_(exports_to_keep) {
    detail::check_exports_to_keep("LatestExporter", exports_to_keep_, "positive number");
  }

  const std::string& name() const { return name_; }

  /// TF: Exporter.export(estimator, export_path, checkpoint_path, eval_result,
  /// is_the_final_export) (`export` is a C++ keyword): writes the export and returns its
  /// directory. Errors as detail::write_export.
  template <class Est>
  std::optional<std::string> export_(Est& estimator, const std::string& export_path,
                                     const std::string& checkpoint_path,
                                     const EvalResult& eval_result, bool is_the_final_export) {
    (void)is_the_final_export;
    std::string dir = detail::write_export(export_path, checkpoint_path, eval_result);
    detail::garbage_collect_exports(export_path, exports_to_keep_, estimator.logger());
    return dir;
  }

 private:
  std::string name_;
  std::optional<int> exports_to_keep_;
};

/// tf.estimator.BestExporter(name="best_exporter", serving_input_receiver_fn,
/// event_file_pattern, compare_fn=_loss_smaller, exports_to_keep=5): exports when the
/// evaluation is better than the best so far, `compare_fn(best_eval_result,
/// current_eval_result)` returning true (LossSmaller: a smaller "loss"), and keeps the
/// `exports_to_keep` largest global steps (nullopt keeps all). The first export() of a
/// model_dir reads the best result back from the eval_result.json of the exports already in
/// export_path (TF reads it from the eval event files, `event_file_pattern`), so a restarted
/// run exports only on an evaluation better than every earlier export. Logs TF's "Performing
/// best model export." Throws ValueError "BestExporter: `exports_to_keep`, if provided, must
/// be a positive number. Got 0" for exports_to_keep <= 0; compare_fn's errors from export_().
template <class Compare = LossSmaller>
class BestExporter {
 public:
  explicit BestExporter(std::string name = "best_exporter", Compare compare_fn = {},
                        std::optional<int> exports_to_keep = 5)
      : name_(std::move(name)),
        compare_fn_(std::move(compare_fn)),
        exports_to_keep_(exports_to_keep) {
    detail::check_exports_to_keep("BestExporter", exports_to_keep_, "a positive number");
  }

  const std::string& name() const { return name_; }
  /// The best evaluation result known (read back or exported by this exporter), if any.
  const std::optional<EvalResult>& best_eval_result() const { return best_; }

  /// TF: BestExporter.export(...): the export's directory, or nullopt when the evaluation is
  /// not better than the best.
  template <class Est>
  std::optional<std::string> export_(Est& estimator, const std::string& export_path,
                                     const std::string& checkpoint_path,
                                     const EvalResult& eval_result, bool is_the_final_export) {
    (void)is_the_final_export;
    auto& logger = estimator.logger();
    if (!loaded_from_ || *loaded_from_ != estimator.model_dir()) {
      logger.log(Severity::info, "Loading best metric from exported models.");
      loaded_from_ = estimator.model_dir();
      best_.reset();
      for (const auto& [step, dir] : detail::export_versions(export_path)) {
        auto r = detail::read_export_result(dir, logger);
        if (r && (!best_ || compare_fn_(*best_, *r))) best_ = std::move(r);
      }
    }
    if (best_ && !compare_fn_(*best_, eval_result)) return std::nullopt;
    logger.log(Severity::info, "Performing best model export.");
    best_ = eval_result;
    std::string dir = detail::write_export(export_path, checkpoint_path, eval_result);
    detail::garbage_collect_exports(export_path, exports_to_keep_, logger);
    return dir;
  }

 private:
  std::string name_;
  Compare compare_fn_;
  std::optional<int> exports_to_keep_;
  std::optional<std::string> loaded_from_;
  std::optional<EvalResult> best_;
};

}  // namespace hookfuse
