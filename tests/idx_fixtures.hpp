// tests/idx_fixtures.hpp: locating the Fashion-MNIST IDX fixtures (HOOKFUSE_FIXTURES_DIR) and
// skipping, by name, a test that needs them when they are absent.
#pragma once

#include <catch2/catch.hpp>
#include <filesystem>
#include <optional>
#include <string>

#include "skip.hpp"

namespace hookfuse_test {

inline constexpr const char* kImages = "fmnist-t10k-first100-images-idx3-ubyte";
inline constexpr const char* kLabels = "fmnist-t10k-first100-labels-idx1-ubyte";

/// The configured fixtures directory, for messages.
inline std::string fixtures_setting() {
#ifdef HOOKFUSE_FIXTURES_DIR
  return HOOKFUSE_FIXTURES_DIR;
#else
  return "(HOOKFUSE_FIXTURES_DIR not defined)";
#endif
}

/// The directory holding the IDX fixtures, raw and gzip (<root>/idx or <root> itself), if any.
inline std::optional<std::filesystem::path> idx_fixtures() {
#ifdef HOOKFUSE_FIXTURES_DIR
  const std::filesystem::path root = HOOKFUSE_FIXTURES_DIR;
  for (const std::filesystem::path& dir : {root / "idx", root}) {
    std::error_code ec;
    bool all = true;
    for (const std::string name : {kImages, kLabels})
      all = all && std::filesystem::exists(dir / name, ec) &&
            std::filesystem::exists(dir / (name + ".gz"), ec);
    if (all) return dir;
  }
#endif
  return std::nullopt;
}

}  // namespace hookfuse_test

/// Declares `dir`, the fixtures directory, or reports the current test as skipped (exit code
/// 77, see skip.hpp).
#define HF_REQUIRE_FIXTURES(dir)                                                          \
  const std::optional<std::filesystem::path> dir = hookfuse_test::idx_fixtures();         \
  if (!dir) {                                                                             \
    HOOKFUSE_SKIP("fixtures dir " << hookfuse_test::fixtures_setting() << " not found (needs " \
                                  << hookfuse_test::kImages << ")");                      \
  }
