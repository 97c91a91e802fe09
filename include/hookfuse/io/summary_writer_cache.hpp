// hookfuse/io/summary_writer_cache.hpp: one SummaryWriter per log directory, shared by everyone
// who writes there (TF 1's `tf.compat.v1.summary.FileWriterCache`, which SummarySaverHook and
// StepCounterHook use through `SummaryWriterCache.get(output_dir)`).
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>

#include "hookfuse/config.hpp"
#include "hookfuse/errors.hpp"
#include "hookfuse/io/summary_writer.hpp"

namespace hookfuse::io {

/// A process-wide map from log directory to its shared SummaryWriter. Directories are compared
/// after normalisation (absolute, `.` and `..` resolved lexically, no trailing separator), so
/// "d", "d/" and "./d" share one writer; symbolic links are not resolved. Thread-safe.
///
/// A hook stores the returned `std::shared_ptr<SummaryWriter>`: copying the hook copies the
/// pointer, never opening a second file.
template <class = void>
class BasicSummaryWriterCache {
 public:
  /// The writer for `logdir`, created with `options` on first use (later calls return the same
  /// writer and ignore `options`, as TensorFlow's cache ignores later arguments). Throws as the
  /// SummaryWriter constructor does (IoError, ValueError for an empty logdir).
  [[nodiscard]] static std::shared_ptr<SummaryWriter> get(
      const std::filesystem::path& logdir, const SummaryWriterOptions& options = {}) {
    if (logdir.empty()) {
      hookfuse::detail::fail<ValueError>(
          "SummaryWriterCache: logdir is empty; expected a directory");
    }
    const std::string key = normalize(logdir).string();
    State& s = state();
    const std::lock_guard<std::mutex> lock(s.mutex);
    auto it = s.writers.find(key);
    if (it == s.writers.end()) {
      it = s.writers.emplace(key, std::make_shared<SummaryWriter>(logdir, options)).first;
    }
    return it->second;
  }

  /// Closes every cached writer and empties the cache (TF's `FileWriterCache.clear()`); holders
  /// of a writer keep a closed writer (`reopen()` starts a new file).
  static void clear() {
    State& s = state();
    const std::lock_guard<std::mutex> lock(s.mutex);
    for (auto& [key, writer] : s.writers) writer->close();
    s.writers.clear();
  }

  /// The key a directory is cached under: absolute, lexically normal, no trailing separator.
  [[nodiscard]] static std::filesystem::path normalize(const std::filesystem::path& logdir) {
    std::filesystem::path p = std::filesystem::absolute(logdir).lexically_normal();
    if (!p.has_filename() && p.has_relative_path()) p = p.parent_path();
    return p;
  }

 private:
  struct State {
    std::mutex mutex;
    std::map<std::string, std::shared_ptr<SummaryWriter>> writers;
  };
  static State& state() {
    static State s;
    return s;
  }
};

/// A class template only so that its member functions compile where they are used
/// (docs/checkpoints.md, "Compile time").
using SummaryWriterCache = BasicSummaryWriterCache<void>;

}  // namespace hookfuse::io
