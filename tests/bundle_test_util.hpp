// tests/bundle_test_util.hpp: helpers of the tensor-bundle tests: a unique temporary directory,
// whole-file reads and writes, and the fixture checkpoints (skipped when absent).
#pragma once

#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <stdexcept>
#include <string>
#include <system_error>
#include <vector>

#include "skip.hpp"

namespace hookfuse_test {

/// A fresh directory under the system's temp folder, removed with its contents on destruction.
class TempDir {
 public:
  TempDir() {
    std::random_device rd;
    const auto base = std::filesystem::temp_directory_path();
    for (int attempt = 0;; ++attempt) {
      path_ = base /
              ("hookfuse_bundle_test_" + std::to_string(::getpid()) + "_" + std::to_string(rd()));
      if (std::filesystem::create_directory(path_)) break;
      if (attempt > 100) throw std::runtime_error("cannot create a temporary directory");
    }
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  ~TempDir() {
    std::error_code ec;
    std::filesystem::permissions(path_, std::filesystem::perms::owner_all,
                                 std::filesystem::perm_options::add, ec);
    std::filesystem::remove_all(path_, ec);
  }
  [[nodiscard]] const std::filesystem::path& path() const { return path_; }
  [[nodiscard]] std::filesystem::path operator/(const std::string& name) const {
    return path_ / name;
  }
  /// Names of the files in the directory, sorted.
  [[nodiscard]] std::vector<std::string> files() const {
    std::vector<std::string> names;
    for (const auto& e : std::filesystem::directory_iterator(path_)) {
      names.push_back(e.path().filename().string());
    }
    std::sort(names.begin(), names.end());
    return names;
  }

 private:
  std::filesystem::path path_;
};

inline std::vector<unsigned char> read_bytes(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + p.string());
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

inline void write_bytes(const std::filesystem::path& p, const std::vector<unsigned char>& b) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
  if (!out) throw std::runtime_error("cannot write " + p.string());
}

/// The prefix of fixture checkpoint `rel` ("ckpt_tf1_half_plus_three/variables") under
/// HOOKFUSE_FIXTURES_DIR/tf; skips the test when its index is absent.
inline std::filesystem::path tf_fixture(const std::string& rel) {
  const std::filesystem::path prefix = std::filesystem::path(HOOKFUSE_FIXTURES_DIR) / "tf" / rel;
  if (!std::filesystem::exists(prefix.string() + ".index")) {
    HOOKFUSE_SKIP("fixture " << prefix.string() << ".index not found (HOOKFUSE_FIXTURES_DIR)");
  }
  return prefix;
}

/// Copies a fixture bundle (index and data file) to `dir` under the prefix `dir/name`.
inline std::filesystem::path copy_bundle(const std::filesystem::path& from,
                                         const std::filesystem::path& dir,
                                         const std::string& name) {
  const auto to = dir / name;
  std::filesystem::copy_file(from.string() + ".index", to.string() + ".index");
  std::filesystem::copy_file(from.string() + ".data-00000-of-00001",
                             to.string() + ".data-00000-of-00001");
  return to;
}

}  // namespace hookfuse_test
