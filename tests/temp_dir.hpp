// tests/temp_dir.hpp: a fresh, empty directory per test case, removed when the case ends.
#pragma once

#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <string>
#include <system_error>

namespace hookfuse_test {

/// `<tmp>/hookfuse_<tag>_<pid>_<start of the test name>`, created empty, removed at the end.
struct TempDir {
  std::filesystem::path path;

  explicit TempDir(const std::string& tag) {
    std::string name = "hookfuse_" + tag + "_" + std::to_string(::getpid()) + "_" +
                       Catch::getResultCapture().getCurrentTestName().substr(0, 24);
    for (char& c : name)
      if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'))) c = '_';
    path = std::filesystem::temp_directory_path() / name;
    std::filesystem::remove_all(path);
    std::filesystem::create_directories(path);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
};

}  // namespace hookfuse_test
