// Crash-safe file replacement (hookfuse/io/atomic_file.hpp): the new contents appear whole, and
// every failure leaves the old file intact, no temporary behind, and an IoError naming the path
// and the system's reason. The failures are ones root cannot bypass (tests may run as root, so
// chmod would not block a write): a missing directory, a parent that is a regular file, a final
// name that is a directory, a file-size limit (RLIMIT_FSIZE: EFBIG, like a full disk).
#include <hookfuse/io/atomic_file.hpp>

#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "error_of.hpp"
#include "temp_dir.hpp"

namespace fs = std::filesystem;
using hookfuse::io::AtomicFileWriter;
using hookfuse::io::IoError;
using hookfuse::io::write_file_atomically;
using hookfuse_test::error_of;

namespace {

struct TempDir : hookfuse_test::TempDir {
  TempDir() : hookfuse_test::TempDir("atomic") {}
};

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::vector<std::string> names_in(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir)) names.push_back(entry.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace

TEST_CASE("write_file_atomically creates and then replaces a file") {
  TempDir dir;
  const fs::path file = dir.path / "state";
  write_file_atomically(file, std::string_view("first"));
  CHECK(slurp(file) == "first");
  write_file_atomically(file, std::string_view("second, longer"));
  CHECK(slurp(file) == "second, longer");
  write_file_atomically(file, std::string_view(""));
  CHECK(slurp(file).empty());
  CHECK(fs::exists(file));
  CHECK(names_in(dir.path) == std::vector<std::string>{"state"});  // no temporaries left
}

TEST_CASE("AtomicFileWriter streams pieces and shows nothing before commit") {
  TempDir dir;
  const fs::path file = dir.path / "data";
  write_file_atomically(file, std::string_view("old"));
  AtomicFileWriter out(file);
  const unsigned char bytes[] = {0x00, 0xff, 0x10};
  out.write(std::as_bytes(std::span(bytes)));
  out.write(std::string_view("tail"));
  CHECK(out.size() == 7);
  CHECK(out.temp_path().parent_path() == file.parent_path());
  CHECK(fs::exists(out.temp_path()));
  CHECK(slurp(file) == "old");  // not yet replaced
  out.commit();
  CHECK(slurp(file) == std::string("\x00\xff\x10tail", 7));
  CHECK(!fs::exists(out.temp_path()));
  CHECK(error_of<IoError>([&] { out.write(std::string_view("x")); }).find("already committed") !=
        std::string::npos);
}

TEST_CASE("two writers of one file get distinct temporaries") {
  TempDir dir;
  AtomicFileWriter a(dir.path / "f");
  AtomicFileWriter b(dir.path / "f");
  CHECK(a.temp_path() != b.temp_path());
  CHECK(a.temp_path().filename().string().find(".tmp-" + std::to_string(::getpid()) + "-") !=
        std::string::npos);
}

TEST_CASE("a writer destroyed without commit removes its temporary and keeps the old file") {
  TempDir dir;
  const fs::path file = dir.path / "keep";
  write_file_atomically(file, std::string_view("old contents"));
  fs::path temp;
  {
    AtomicFileWriter out(file);
    out.write(std::string_view("half-written new contents"));
    temp = out.temp_path();
    CHECK(fs::exists(temp));
  }
  CHECK(!fs::exists(temp));
  CHECK(slurp(file) == "old contents");
  CHECK(names_in(dir.path) == std::vector<std::string>{"keep"});
}

TEST_CASE("writing into a missing directory is an IoError naming the path and the reason") {
  TempDir dir;
  const fs::path file = dir.path / "no_such_dir" / "checkpoint";
  const std::string what = error_of<IoError>([&] { write_file_atomically(file, std::string_view("x")); });
  CHECK(what.find(file.string()) != std::string::npos);
  CHECK(what.find(std::strerror(ENOENT)) != std::string::npos);
  CHECK(names_in(dir.path).empty());
}

TEST_CASE("writing under a parent that is a regular file is an IoError, the file intact") {
  TempDir dir;
  const fs::path parent = dir.path / "plain_file";
  write_file_atomically(parent, std::string_view("I am a file"));
  const fs::path file = parent / "checkpoint";
  const std::string what = error_of<IoError>([&] { write_file_atomically(file, std::string_view("x")); });
  CHECK(what.find(file.string()) != std::string::npos);
  CHECK(what.find(std::strerror(ENOTDIR)) != std::string::npos);
  CHECK(slurp(parent) == "I am a file");
  CHECK(names_in(dir.path) == std::vector<std::string>{"plain_file"});
}

TEST_CASE("a failed rename (the final name is a directory) removes the temporary") {
  TempDir dir;
  const fs::path target = dir.path / "taken";
  fs::create_directory(target);
  fs::path temp;
  const std::string what = error_of<IoError>([&] {
    AtomicFileWriter out(target);
    temp = out.temp_path();
    out.write(std::string_view("new"));
    out.commit();
  });
  CHECK(what.find("rename") != std::string::npos);
  CHECK(what.find(target.string()) != std::string::npos);
  CHECK(what.find(std::strerror(EISDIR)) != std::string::npos);
  CHECK(fs::is_directory(target));
  CHECK(!fs::exists(temp));
  CHECK(names_in(dir.path) == std::vector<std::string>{"taken"});
}

TEST_CASE("a write refused by the system (file size limit) keeps the old file") {
  // RLIMIT_FSIZE makes write(2) fail with EFBIG past the limit, the same path through the
  // code as ENOSPC on a full disk; SIGXFSZ, which it also raises, is ignored meanwhile.
  TempDir dir;
  const fs::path file = dir.path / "big";
  write_file_atomically(file, std::string_view("previous"));
  rlimit old_limit{};
  REQUIRE(::getrlimit(RLIMIT_FSIZE, &old_limit) == 0);
  const auto old_handler = ::signal(SIGXFSZ, SIG_IGN);
  rlimit small = old_limit;
  small.rlim_cur = 4096;
  REQUIRE(::setrlimit(RLIMIT_FSIZE, &small) == 0);
  const std::vector<std::byte> payload(10000, std::byte{0x5a});
  std::string what;
  try {
    write_file_atomically(file, payload);
  } catch (const IoError& e) {
    what = e.what();
  }
  ::setrlimit(RLIMIT_FSIZE, &old_limit);
  ::signal(SIGXFSZ, old_handler);
  CHECK(what.find("cannot write " + file.string()) != std::string::npos);
  CHECK(what.find(std::strerror(EFBIG)) != std::string::npos);
  CHECK(slurp(file) == "previous");
  CHECK(names_in(dir.path) == std::vector<std::string>{"big"});
}
