// The errors of docs/errors.md that only a failing system call provokes: an open, fstat, read,
// pread, fsync, close, write, rename or renameat2 refused, and a file that shrinks between the size check
// and the read. This executable defines those libc functions itself (symbol interposition, as
// the LD_PRELOAD shim tests/kill/fault_shim.c does for whole programs): each passes the call on
// to libc (dlsym RTLD_NEXT) unless a test armed a fault (FaultPlan) for that kind of call on a
// path containing a given text, in which case its n-th such call fails with the errno given, or
// (shrink) the file is first truncated to a given size, then the call goes ahead. Calls from
// libstdc++ (std::ifstream, std::ofstream, std::filesystem::rename) reach them too, as the
// executable exports what libstdc++ uses. Every message is checked whole where its parts are
// known: the file, what was being done, expected and found, and strerror's text.
#include <dlfcn.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cerrno>
#include <cstdarg>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <hookfuse/data/idx.hpp>
#include <hookfuse/estimator/exporter.hpp>
#include <hookfuse/io/atomic_file.hpp>
#include <hookfuse/io/checkpoint_state.hpp>
#include <hookfuse/io/safetensors.hpp>
#include <hookfuse/io/tensor_bundle.hpp>
#include <hookfuse/io/tfrecord.hpp>
#include <string>
#include <vector>

#include "error_of.hpp"
#include "io_test_support.hpp"

namespace fs = std::filesystem;
namespace io = hookfuse::io;
using hookfuse_test::error_of;
using hookfuse_test::file_bytes;
using hookfuse_test::ScratchDir;
using hookfuse_test::write_bytes;

namespace {

enum class Call { none, open, fopen, fstat, read, pread, write, fsync, close, rename, renameat2 };

/// The one fault armed at a time: the `nth` call of kind `call` on a path containing `part`
/// (ending with it when `suffix`) fails with `err`, or, with `shrink_to` >= 0, first truncates
/// that file to `shrink_to` bytes and then proceeds. A descriptor's path is the kernel's
/// (/proc/self/fd: symbolic links resolved). Touched by the test thread only.
struct FaultPlan {
  Call call = Call::none;
  std::string part;
  bool suffix = false;
  int nth = 1;
  int err = EIO;
  long long shrink_to = -1;
  int seen = 0;  // matching calls so far
  bool fired = false;
};
FaultPlan g_plan;

/// Arms a fault for the scope of the object.
struct Arm {
  explicit Arm(FaultPlan p) { g_plan = std::move(p); }
  Arm(const Arm&) = delete;
  Arm& operator=(const Arm&) = delete;
  ~Arm() { g_plan = FaultPlan{}; }
  [[nodiscard]] bool fired() const { return g_plan.fired; }
};

template <class F>
F real(const char* name) {
  return reinterpret_cast<F>(::dlsym(RTLD_NEXT, name));
}

std::string fd_path(int fd) {
  char link[64];
  char out[4096];
  std::snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  const ssize_t n = ::readlink(link, out, sizeof out - 1);
  return std::string(out, n > 0 ? static_cast<std::size_t>(n) : 0);
}

/// Whether this call fails: true with errno set; a shrink truncates the file and returns false.
bool fault(Call call, const char* path) {
  FaultPlan& p = g_plan;
  if (p.call != call || p.fired || path == nullptr) return false;
  const std::string_view s(path);
  const bool match = p.suffix ? s.ends_with(p.part) : s.find(p.part) != std::string_view::npos;
  if (!match || ++p.seen != p.nth) return false;
  p.fired = true;
  if (p.shrink_to >= 0) {
    // Never throws (libc's callers are not all C++): a failed truncate shows as not fired.
    p.fired = ::truncate(path, static_cast<off_t>(p.shrink_to)) == 0;
    return false;
  }
  errno = p.err;
  return true;
}

bool fd_fault(Call call, int fd) {
  if (g_plan.call != call || g_plan.fired) return false;
  const std::string path = fd_path(fd);
  return fault(call, path.c_str());
}

mode_t mode_arg(int flags, va_list ap) {
  return (flags & (O_CREAT | O_TMPFILE)) != 0 ? static_cast<mode_t>(va_arg(ap, int)) : 0;
}

}  // namespace

extern "C" {

int open(const char* path, int flags, ...) {
  va_list ap;
  va_start(ap, flags);
  const mode_t mode = mode_arg(flags, ap);
  va_end(ap);
  if (fault(Call::open, path)) return -1;
  static const auto next = real<int (*)(const char*, int, ...)>("open");
  return next(path, flags, mode);
}

int open64(const char* path, int flags, ...) {
  va_list ap;
  va_start(ap, flags);
  const mode_t mode = mode_arg(flags, ap);
  va_end(ap);
  if (fault(Call::open, path)) return -1;
  static const auto next = real<int (*)(const char*, int, ...)>("open64");
  return next(path, flags, mode);
}

FILE* fopen(const char* path, const char* mode) {
  if (fault(Call::fopen, path)) return nullptr;
  static const auto next = real<FILE* (*)(const char*, const char*)>("fopen");
  return next(path, mode);
}

FILE* fopen64(const char* path, const char* mode) {
  if (fault(Call::fopen, path)) return nullptr;
  static const auto next = real<FILE* (*)(const char*, const char*)>("fopen64");
  return next(path, mode);
}

int fstat(int fd, struct stat* st) noexcept {
  if (fd_fault(Call::fstat, fd)) return -1;
  static const auto next = real<int (*)(int, struct stat*)>("fstat");
  return next(fd, st);
}

ssize_t read(int fd, void* buf, size_t n) {
  if (fd_fault(Call::read, fd)) return -1;
  static const auto next = real<ssize_t (*)(int, void*, size_t)>("read");
  return next(fd, buf, n);
}

ssize_t pread(int fd, void* buf, size_t n, off_t offset) {
  if (fd_fault(Call::pread, fd)) return -1;
  static const auto next = real<ssize_t (*)(int, void*, size_t, off_t)>("pread");
  return next(fd, buf, n, offset);
}

ssize_t write(int fd, const void* buf, size_t n) {
  if (fd_fault(Call::write, fd)) return -1;
  static const auto next = real<ssize_t (*)(int, const void*, size_t)>("write");
  return next(fd, buf, n);
}

int fsync(int fd) {
  if (fd_fault(Call::fsync, fd)) return -1;
  static const auto next = real<int (*)(int)>("fsync");
  return next(fd);
}

/// A failed close(2) still releases the descriptor (Linux), so it closes, then reports.
int close(int fd) {
  const bool fail = fd_fault(Call::close, fd);
  static const auto next = real<int (*)(int)>("close");
  const int r = next(fd);
  if (fail) {
    errno = g_plan.err;
    return -1;
  }
  return r;
}

int rename(const char* from, const char* to) noexcept {
  if (fault(Call::rename, from)) return -1;
  static const auto next = real<int (*)(const char*, const char*)>("rename");
  return next(from, to);
}

int renameat2(int from_dir, const char* from, int to_dir, const char* to,
              unsigned int flags) noexcept {
  if (fault(Call::renameat2, from)) return -1;
  static const auto next =
      real<int (*)(int, const char*, int, const char*, unsigned int)>("renameat2");
  return next(from_dir, from, to_dir, to, flags);
}

}  // extern "C"

namespace {

const std::string kEio = std::strerror(EIO);        // "Input/output error"
const std::string kEnospc = std::strerror(ENOSPC);  // "No space left on device"

/// Names of the files in `dir`, sorted.
std::vector<std::string> names_in(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

/// A one-shard bundle at `prefix`: "a" and "b", 100 floats each.
void make_bundle(const fs::path& prefix) {
  io::BundleWriter w(prefix);
  const std::vector<float> a(100, 1.0f);
  const std::vector<float> b(100, 2.0f);
  w.add("a", {100}, a);
  w.add("b", {100}, b);
  w.finish();
}

}  // namespace

TEST_CASE("the interposed calls reach libc when no fault is armed, and fail when one is") {
  ScratchDir dir;
  write_bytes(dir / "f", "hello");
  CHECK(file_bytes(dir / "f") == "hello");
  {
    Arm arm({.call = Call::open, .part = "/f", .suffix = true, .err = ENOSPC});
    errno = 0;
    CHECK(::open((dir / "f").c_str(), O_RDONLY) == -1);
    CHECK(errno == ENOSPC);
    CHECK(arm.fired());
  }
  const int fd = ::open((dir / "f").c_str(), O_RDONLY);
  REQUIRE(fd >= 0);
  ::close(fd);
}

TEST_CASE("checkpoint index and data files that cannot be opened or fstat'ed name the file") {
  ScratchDir dir;
  const fs::path prefix = dir / "model.ckpt-1";
  make_bundle(prefix);
  const std::string index = prefix.string() + ".index";
  const std::string data = prefix.string() + ".data-00000-of-00001";
  {
    Arm arm({.call = Call::open, .part = ".index", .suffix = true});
    CHECK(error_of<io::IoError>([&] { io::BundleReader r(prefix); }) ==
          index + ": cannot open the checkpoint index: " + kEio);
    CHECK(arm.fired());
  }
  {
    // open_read_only's own fstat is the first; regular_file_size's, which sizes the read, the
    // second.
    Arm arm({.call = Call::fstat, .part = ".index", .suffix = true, .nth = 2});
    CHECK(error_of<io::IoError>([&] { io::BundleReader r(prefix); }) ==
          index + ": cannot stat: " + kEio);
    CHECK(arm.fired());
  }
  io::BundleReader reader(prefix);
  {
    Arm arm({.call = Call::open, .part = ".data-00000-of-00001", .suffix = true, .err = EACCES});
    CHECK(error_of<io::IoError>([&] { (void)reader.lookup<float>("a"); }) ==
          data + ": cannot open the checkpoint data file (the bundle's only shard): " +
              std::strerror(EACCES));
    CHECK(arm.fired());
  }
  // A failed open is retried by the next read.
  CHECK(reader.lookup<float>("a") == std::vector<float>(100, 1.0f));
}

TEST_CASE("a checkpoint index that shrinks while being read is DataLossError naming both sizes") {
  ScratchDir dir;
  const fs::path prefix = dir / "model.ckpt-1";
  make_bundle(prefix);
  const std::string index = prefix.string() + ".index";
  const auto size = fs::file_size(index);
  REQUIRE(size > 10);
  // Cut to 10 bytes after the reader took the size, before its first pread.
  Arm arm({.call = Call::pread, .part = ".index", .suffix = true, .shrink_to = 10});
  CHECK(error_of<io::DataLossError>([&] { io::BundleReader r(prefix); }) ==
        index + ": file shrank while being read: expected " + std::to_string(size) +
            " bytes, found fewer");
  CHECK(arm.fired());
  CHECK(fs::file_size(index) == 10);
}

TEST_CASE("a checkpoint state file that cannot be opened or read names the file and reason") {
  ScratchDir dir;
  const fs::path state = dir / "checkpoint";
  write_bytes(state, "model_checkpoint_path: \"model.ckpt-1\"\n");
  {
    Arm arm({.call = Call::open, .part = "/checkpoint", .suffix = true});
    CHECK(error_of<io::IoError>([&] { (void)io::get_checkpoint_state(dir.path()); }) ==
          "cannot open " + state.string() + ": " + kEio);
    CHECK(arm.fired());
  }
  {
    Arm arm({.call = Call::read, .part = "/checkpoint", .suffix = true});
    CHECK(error_of<io::IoError>([&] { (void)io::get_checkpoint_state(dir.path()); }) ==
          "cannot read " + state.string() + ": " + kEio);
    CHECK(arm.fired());
  }
  const auto ok = io::get_checkpoint_state(dir.path());
  REQUIRE(ok);
  CHECK(ok->model_checkpoint_path.ends_with("model.ckpt-1"));
}

TEST_CASE("a TFRecord file that cannot be opened is IoError naming it") {
  ScratchDir dir;
  const fs::path file = dir / "records.tfrecord";
  write_bytes(file, "");
  Arm arm({.call = Call::open, .part = "records.tfrecord", .suffix = true});
  CHECK(error_of<io::IoError>([&] { io::RecordReader r(file); }) ==
        file.string() + ": cannot open for reading: " + kEio);
  CHECK(arm.fired());
}

TEST_CASE("safetensors files that cannot be opened, stat'ed or read, or shrink, name the file") {
  ScratchDir dir;
  const fs::path file = dir / "m.safetensors";
  // The format's layout by hand: an 8-byte little-endian header length, the JSON header, data.
  const std::string header = R"({"x":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})";
  std::string bytes(8, '\0');
  bytes[0] = static_cast<char>(header.size());
  bytes += header;
  bytes += std::string("\0\0\x80\x3f", 4);  // 1.0f
  write_bytes(file, bytes);
  REQUIRE(io::safetensors::SafetensorsFile::open(file).get_tensor<float>("x") ==
          std::vector<float>{1.0f});
  {
    Arm arm({.call = Call::open, .part = "m.safetensors", .suffix = true});
    CHECK(error_of<io::IoError>([&] { (void)io::safetensors::SafetensorsFile::open(file); }) ==
          "cannot open " + file.string() + ": " + kEio);
    CHECK(arm.fired());
  }
  {
    Arm arm({.call = Call::fstat, .part = "m.safetensors", .suffix = true, .nth = 2});
    CHECK(error_of<io::IoError>([&] { (void)io::safetensors::SafetensorsFile::open(file); }) ==
          "cannot stat " + file.string() + ": " + kEio);
    CHECK(arm.fired());
  }
  {
    Arm arm({.call = Call::pread, .part = "m.safetensors", .suffix = true});
    CHECK(error_of<io::IoError>([&] { (void)io::safetensors::SafetensorsFile::open(file); }) ==
          "cannot read " + file.string() + ": " + kEio);
    CHECK(arm.fired());
  }
  {
    // The length read, the file cut to 8 + 10 bytes before the header's read.
    Arm arm(
        {.call = Call::pread, .part = "m.safetensors", .suffix = true, .nth = 2, .shrink_to = 18});
    CHECK(error_of<io::DataLossError>([&] {
            (void)io::safetensors::SafetensorsFile::open(file);
          }) == file.string() + ": truncated while reading the header: expected " +
                    std::to_string(header.size()) + " bytes at offset 8, the file ended first");
    CHECK(arm.fired());
  }
}

TEST_CASE("an IDX file that cannot be opened or read is DataError naming it") {
  ScratchDir dir;
  const fs::path file = dir / "labels-idx1-ubyte";
  // IDX1 by hand: magic 0x00000801, count 3 (big-endian), then the labels.
  write_bytes(file, std::string("\0\0\x08\x01\0\0\0\x03\x01\x02\x03", 11));
  REQUIRE(hookfuse::data::read_idx_labels(file).labels.size() == 3);
  {
    Arm arm({.call = Call::fopen, .part = "labels-idx1-ubyte", .suffix = true});
    CHECK(error_of<hookfuse::data::DataError>([&] {
            (void)hookfuse::data::read_idx_labels(file);
          }) == file.string() + ": cannot open for reading: " + kEio);
    CHECK(arm.fired());
  }
  {
    Arm arm({.call = Call::read, .part = "labels-idx1-ubyte", .suffix = true});
    CHECK(error_of<hookfuse::data::DataError>([&] {
            (void)hookfuse::data::read_idx_labels(file);
          }) == file.string() + ": read error after 0 bytes: " + kEio);
    CHECK(arm.fired());
  }
}

TEST_CASE("atomic writes: fsync, close failures keep the old file") {
  ScratchDir dir;
  const fs::path file = dir / "state.json";
  io::write_file_atomically(file, std::string_view("old"));
  {
    Arm arm({.call = Call::fsync, .part = ".tmp-"});
    CHECK(error_of<io::IoError>([&] {
            io::write_file_atomically(file, std::string_view("new"));
          }) == "cannot fsync " + file.string() + ": " + kEio);
    CHECK(arm.fired());
  }
  {
    Arm arm({.call = Call::close, .part = ".tmp-", .err = ENOSPC});
    CHECK(error_of<io::IoError>([&] {
            io::write_file_atomically(file, std::string_view("new"));
          }) == "cannot close " + file.string() + ": " + kEnospc);
    CHECK(arm.fired());
  }
  CHECK(file_bytes(file) == "old");
  CHECK(names_in(dir.path()) == std::vector<std::string>{"state.json"});
  {
    // Only the directory's own path ends with its name: its fsync fails, after the rename, so
    // the new file is in place, and the message says so.
    Arm arm({.call = Call::fsync, .part = fs::canonical(dir.path()).string(), .suffix = true});
    CHECK(error_of<io::IoError>([&] {
            io::write_file_atomically(file, std::string_view("new"));
          }) == "renamed into place, but fsync of its directory failed, for " + file.string() +
                    ": " + kEio);
    CHECK(arm.fired());
  }
  CHECK(file_bytes(file) == "new");
  CHECK(names_in(dir.path()) == std::vector<std::string>{"state.json"});
}

TEST_CASE("checkpoint files: fsync, close failures keep the old bundle") {
  ScratchDir dir;
  const fs::path prefix = dir / "model.ckpt-1";
  make_bundle(prefix);
  const auto before = names_in(dir.path());
  const std::string data = prefix.string() + ".data-00000-of-00001";
  const std::string index = prefix.string() + ".index";
  // A rewrite of the prefix: the index is written and synced first, then the data file is
  // synced and closed, then the index closed; only then is anything replaced.
  {
    Arm arm({.call = Call::fsync, .part = ".tempstate"});
    const std::string what = error_of<io::IoError>([&] { make_bundle(prefix); });
    CHECK_THAT(what, Catch::StartsWith(index + ": fsync of " + index + ".tempstate") &&
                         Catch::EndsWith(" failed: " + kEio));
    CHECK(arm.fired());
  }
  {
    Arm arm({.call = Call::fsync, .part = ".tempstate", .nth = 2, .err = ENOSPC});
    const std::string what = error_of<io::IoError>([&] { make_bundle(prefix); });
    CHECK_THAT(what, Catch::StartsWith(data + ": fsync of " + data + ".tempstate") &&
                         Catch::EndsWith(" failed: " + kEnospc));
    CHECK(arm.fired());
  }
  {
    Arm arm({.call = Call::close, .part = ".tempstate"});
    const std::string what = error_of<io::IoError>([&] { make_bundle(prefix); });
    CHECK_THAT(what, Catch::StartsWith(data + ": close of " + data + ".tempstate") &&
                         Catch::EndsWith(" failed: " + kEio));
    CHECK(arm.fired());
  }
  {
    Arm arm({.call = Call::close, .part = ".tempstate", .nth = 2, .err = ENOSPC});
    const std::string what = error_of<io::IoError>([&] { make_bundle(prefix); });
    CHECK_THAT(what, Catch::StartsWith(index + ": close of " + index + ".tempstate") &&
                         Catch::EndsWith(" failed: " + kEnospc));
    CHECK(arm.fired());
  }
  CHECK(names_in(dir.path()) == before);  // the old bundle, no temporary
  io::BundleReader reader(prefix);
  CHECK(reader.lookup<float>("b") == std::vector<float>(100, 2.0f));
}

TEST_CASE("an exporter's failures name the file or both directories and leave no temporary") {
  ScratchDir dir;
  const fs::path ckpt = dir / "model.ckpt-5";
  make_bundle(ckpt);
  const fs::path exports = dir / "export";
  const hookfuse::EvalResult r{.global_step = 5, .metrics = {{"loss", 0.5f}}};
  const fs::path temp = exports / "temp-5";
  {
    // A regular file where the export directory goes: mkdir(2) under it fails with ENOTDIR.
    write_bytes(dir / "file", "x");
    CHECK(error_of<io::IoError>([&] {
            (void)hookfuse::detail::write_export(dir / "file", ckpt.string(), r);
          }) == "cannot create " + (dir / "file" / "temp-5" / "variables").string() + ": " +
                    std::strerror(ENOTDIR));
  }
  {
    Arm arm({.call = Call::write, .part = "eval_result.json", .suffix = true, .err = ENOSPC});
    CHECK(error_of<io::IoError>([&] {
            (void)hookfuse::detail::write_export(exports, ckpt.string(), r);
          }) == "cannot write " + (temp / "eval_result.json").string() + ": " + kEnospc);
    CHECK(arm.fired());
  }
  CHECK_FALSE(fs::exists(temp));  // a failed export leaves no temporary directory
  {
    Arm arm({.call = Call::rename, .part = "temp-5", .suffix = true});
    CHECK(error_of<io::IoError>([&] {
            (void)hookfuse::detail::write_export(exports, ckpt.string(), r);
          }) == "cannot rename " + temp.string() + " to " + (exports / "5").string() + ": " + kEio);
    CHECK(arm.fired());
  }
  CHECK_FALSE(fs::exists(temp));
  CHECK_FALSE(fs::exists(exports / "5"));
  CHECK(hookfuse::detail::write_export(exports, ckpt.string(), r) == (exports / "5").string());
  CHECK(fs::exists(exports / "5" / "eval_result.json"));
}

TEST_CASE("an export of a step exported before replaces it whole, never removing it first") {
  ScratchDir dir;
  const fs::path ckpt = dir / "model.ckpt-5";
  make_bundle(ckpt);
  const fs::path exports = dir / "export";
  const fs::path final_dir = exports / "5";
  const auto loss_in = [&](const fs::path& d) {
    const std::string json = file_bytes(d / "eval_result.json");
    const auto at = json.find("\"loss\": ");
    REQUIRE(at != std::string::npos);
    return std::stof(json.substr(at + 8));
  };
  const auto write = [&](float loss) {
    return hookfuse::detail::write_export(
        exports, ckpt.string(), hookfuse::EvalResult{.global_step = 5, .metrics = {{"loss", loss}}});
  };
  CHECK(write(0.5f) == final_dir.string());
  CHECK(write(0.25f) == final_dir.string());  // exchanged with the first, which is removed
  CHECK(loss_in(final_dir) == 0.25f);
  CHECK(names_in(exports) == std::vector<std::string>{"5"});
  {
    // The exchange fails: the error names both directories; the old export stays, whole.
    Arm arm({.call = Call::renameat2, .part = "temp-5", .suffix = true});
    CHECK(error_of<io::IoError>([&] { (void)write(0.125f); }) ==
          "cannot rename " + (exports / "temp-5").string() + " to " + final_dir.string() + ": " +
              kEio);
    CHECK(arm.fired());
  }
  CHECK(loss_in(final_dir) == 0.25f);
  CHECK(fs::exists(final_dir / "variables" / "variables.index"));
  CHECK(names_in(exports) == std::vector<std::string>{"5"});
  {
    // A file system without RENAME_EXCHANGE (EINVAL): the old export is renamed aside, the new
    // one into place, and the old one removed.
    Arm arm({.call = Call::renameat2, .part = "temp-5", .suffix = true, .err = EINVAL});
    CHECK(write(0.125f) == final_dir.string());
    CHECK(arm.fired());
  }
  CHECK(loss_in(final_dir) == 0.125f);
  CHECK(names_in(exports) == std::vector<std::string>{"5"});
}

TEST_CASE("merge_bundles: a failure after the data renames moves them back to the inputs") {
  ScratchDir dir;
  const fs::path parts = dir / "parts";
  fs::create_directory(parts);
  const std::vector<fs::path> inputs{parts / "a", parts / "b"};
  for (const auto& p : inputs) {
    io::BundleWriter w(p);
    w.add(p.filename().string(), {2}, std::vector<float>{1.0f, 2.0f});
    w.finish();
  }
  const fs::path merged = dir / "model.ckpt-1";
  const std::string shard0 = merged.string() + ".data-00000-of-00002";
  const std::string shard1 = merged.string() + ".data-00001-of-00002";
  {
    // The second input's data file cannot be renamed: the first is moved back.
    Arm arm({.call = Call::rename, .part = "b.data-00000-of-00001", .suffix = true});
    CHECK(error_of<io::IoError>([&] { io::merge_bundles(inputs, merged); }) ==
          shard1 + ": cannot rename " + (parts / "b.data-00000-of-00001").string() +
              " to it: " + kEio);
    CHECK(arm.fired());
  }
  CHECK(names_in(dir.path()) == std::vector<std::string>{"parts"});
  {
    // Both renamed, then the fsync of their directory fails: both are moved back.
    Arm arm({.call = Call::fsync, .part = fs::canonical(dir.path()).string(), .suffix = true});
    CHECK(error_of<io::IoError>([&] { io::merge_bundles(inputs, merged); }) ==
          shard1 + ": fsync of its directory " + dir.path().string() + " failed: " + kEio);
    CHECK(arm.fired());
  }
  CHECK(names_in(dir.path()) == std::vector<std::string>{"parts"});
  for (const auto& p : inputs)  // the inputs whole
    CHECK(io::BundleReader(p).lookup<float>(p.filename().string()) ==
          std::vector<float>{1.0f, 2.0f});
  io::merge_bundles(inputs, merged);
  CHECK(io::BundleReader(merged).lookup<float>("b") == std::vector<float>{1.0f, 2.0f});
  CHECK(fs::exists(shard0));
}
