// fuzz/fuzz_util.hpp: what the libFuzzer targets share: a private temporary directory per
// process, written-through files, and the exception types a reader documents. A target catches
// only those; anything else escapes to libFuzzer ("deadly signal"), as does any crash,
// sanitizer report, oversized allocation (-malloc_limit_mb) or slow input (-timeout).
#pragma once

#include <stdlib.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <string_view>

namespace hookfuse_fuzz {

/// A directory of this process's own under $TMPDIR (or /tmp), created on first use and removed
/// at exit.
inline const std::filesystem::path& work_dir() {
  static const std::filesystem::path dir = [] {
    const char* tmp = std::getenv("TMPDIR");
    std::string templ = std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") +
                        "/hookfuse_fuzz_XXXXXX";
    if (::mkdtemp(templ.data()) == nullptr) {
      std::perror("hookfuse fuzz: mkdtemp");
      std::abort();
    }
    std::atexit([] {
      std::error_code ec;
      std::filesystem::remove_all(work_dir(), ec);
    });
    return std::filesystem::path(templ);
  }();
  return dir;
}

/// Writes `bytes` to `path` (replacing it); aborts when the system refuses (not a finding of
/// the reader, but the run cannot go on).
inline void write_file(const std::filesystem::path& path, const void* bytes, std::size_t size) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr || (size > 0 && std::fwrite(bytes, 1, size, f) != size) ||
      std::fclose(f) != 0) {
    std::perror(("hookfuse fuzz: cannot write " + path.string()).c_str());
    std::abort();
  }
}

inline void write_file(const std::filesystem::path& path, std::string_view bytes) {
  write_file(path, bytes.data(), bytes.size());
}

/// Reads a little-endian uint32 at `p`.
inline std::uint32_t le32(const std::uint8_t* p) {
  return std::uint32_t{p[0]} | std::uint32_t{p[1]} << 8 | std::uint32_t{p[2]} << 16 |
         std::uint32_t{p[3]} << 24;
}

}  // namespace hookfuse_fuzz
