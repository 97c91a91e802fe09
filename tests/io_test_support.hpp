// tests/io_test_support.hpp: helpers for the io tests: a scratch directory, a logger that keeps
// what it is told, the event-file fixtures (skipping by name when absent), file bytes.
#pragma once

#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <hookfuse/logging.hpp>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "skip.hpp"

namespace hookfuse_test {

/// A fresh directory under the system's temporary directory, removed with its contents when
/// the object goes out of scope.
class ScratchDir {
 public:
  ScratchDir() {
    static std::atomic<int> counter{0};
    path_ = std::filesystem::temp_directory_path() /
            ("hookfuse_io_test_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(const std::string& name) const { return path_ / name; }

 private:
  std::filesystem::path path_;
};

/// A Logger that records every line with its severity.
struct CapturingLogger {
  std::vector<std::pair<hookfuse::Severity, std::string>> lines;
  void log(hookfuse::Severity s, std::string_view line) {
    lines.emplace_back(s, std::string(line));
  }
};

inline std::string file_bytes(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  REQUIRE(in);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

inline void write_bytes(const std::filesystem::path& path, std::string_view bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  REQUIRE(out);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  REQUIRE(out);
}

/// The single file in `<fixtures>/tf/<dir>`, if the fixtures are present.
inline std::optional<std::filesystem::path> event_fixture(const std::string& dir) {
#ifdef HOOKFUSE_FIXTURES_DIR
  const std::filesystem::path folder = std::filesystem::path(HOOKFUSE_FIXTURES_DIR) / "tf" / dir;
  std::error_code ec;
  for (std::filesystem::directory_iterator it(folder, ec), end; !ec && it != end; it.increment(ec))
    if (it->path().filename().string().find("tfevents") != std::string::npos) return it->path();
#endif
  return std::nullopt;
}

}  // namespace hookfuse_test

/// Declares `var`, the event file in <fixtures>/tf/<dir>, or reports the test as skipped.
#define HF_REQUIRE_EVENT_FIXTURE(var, dir)                                                  \
  const std::optional<std::filesystem::path> var##_opt = hookfuse_test::event_fixture(dir); \
  if (!var##_opt) HOOKFUSE_SKIP("event-file fixture tf/" << dir << " not found");           \
  const std::filesystem::path var = *var##_opt
