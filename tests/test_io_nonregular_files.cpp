// Readers refuse what is not a regular file (a FIFO, a directory) with an error naming it,
// instead of blocking in open(); the event reader resumes a file that grows after a truncated
// tail; the event writer refuses events above protobuf's 2 GiB - 1 limit; tensor I/O goes in
// chunks of at most kMaxIoChunkBytes, retrying short reads and writes and EINTR (tested with a
// tiny chunk size and simulated system calls, not 2 GiB buffers).
//
// A reader that opened a FIFO without O_NONBLOCK would block forever (no writer ever comes):
// the calls run in the test thread, and the ctest TIMEOUT of this file (tests/CMakeLists.txt)
// turns such a hang into a failure.
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/types.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <hookfuse/data/idx.hpp>
#include <hookfuse/errors.hpp>
#include <hookfuse/io/atomic_file.hpp>
#include <hookfuse/io/checkpoint_state.hpp>
#include <hookfuse/io/detail/posix_file.hpp>
#include <hookfuse/io/event_reader.hpp>
#include <hookfuse/io/safetensors.hpp>
#include <hookfuse/io/summary_writer.hpp>
#include <hookfuse/io/tensor_bundle.hpp>
#include <string>
#include <vector>

#include "error_of.hpp"
#include "io_test_support.hpp"

namespace fs = std::filesystem;
namespace io = hookfuse::io;
using hookfuse_test::CapturingLogger;
using hookfuse_test::error_of;
using hookfuse_test::file_bytes;
using hookfuse_test::ScratchDir;
using hookfuse_test::write_bytes;

namespace {

void make_fifo(const fs::path& p) { REQUIRE(::mkfifo(p.c_str(), 0600) == 0); }

/// `what` contains `part`, reported with both when it does not.
bool contains(const std::string& what, const std::string& part) {
  INFO("message: " << what << "\nexpected to contain: " << part);
  return what.find(part) != std::string::npos;
}

/// A serialized Event with a scalar `tag` = `value` at `step`.
std::string scalar_event(const std::string& tag, double value, std::int64_t step) {
  io::Event e;
  e.wall_time = 1000.0 + static_cast<double>(step);
  e.step = step;
  e.what = io::Event::What::summary;
  e.summary.value.push_back(io::scalar_value(tag, value, io::ScalarForm::simple_value));
  return io::serialize_event(e);
}

}  // namespace

TEST_CASE("a FIFO given as a checkpoint index or data file is refused, not waited on") {
  ScratchDir dir;
  const fs::path prefix = dir / "model.ckpt-1";
  make_fifo(io::meta_filename(prefix));
  const std::string index_msg = error_of<io::IoError>([&] { io::BundleReader r(prefix); });
  CHECK(index_msg == io::meta_filename(prefix).string() + ": is a FIFO, not a regular file");
  CHECK(contains(error_of<io::IoError>([&] { io::CheckpointReader r(prefix); }), "is a FIFO"));

  // A valid index whose data file is a FIFO: the tensor read refuses it.
  const fs::path good = dir / "good.ckpt-1";
  const std::vector<float> v = {1.5f, -2.0f};
  {
    io::BundleWriter w(good);
    w.add("v", {2}, std::span<const float>(v));
    w.finish();
  }
  fs::remove(io::data_filename(good));
  make_fifo(io::data_filename(good));
  const io::BundleReader r(good);
  CHECK(error_of<io::IoError>([&] { (void)r.lookup<float>("v"); }) ==
        io::data_filename(good).string() + ": is a FIFO, not a regular file");
}

TEST_CASE("a directory given as a checkpoint index or data file is refused, naming it") {
  ScratchDir dir;
  const fs::path prefix = dir / "model.ckpt-2";
  fs::create_directory(io::meta_filename(prefix));
  CHECK(error_of<io::IoError>([&] { io::BundleReader r(prefix); }) ==
        io::meta_filename(prefix).string() + ": is a directory, not a regular file");

  const fs::path good = dir / "good.ckpt-2";
  const std::vector<double> v = {3.25};
  {
    io::BundleWriter w(good);
    w.add("v", {1}, std::span<const double>(v));
    w.finish();
  }
  fs::remove(io::data_filename(good));
  fs::create_directory(io::data_filename(good));
  const io::BundleReader r(good);
  CHECK(error_of<io::IoError>([&] { (void)r.lookup<double>("v"); }) ==
        io::data_filename(good).string() + ": is a directory, not a regular file");
}

TEST_CASE("a FIFO or a directory given as a safetensors file is refused") {
  ScratchDir dir;
  const fs::path fifo = dir / "model.safetensors";
  make_fifo(fifo);
  CHECK(error_of<io::IoError>([&] { (void)io::safetensors::SafetensorsFile::open(fifo); }) ==
        fifo.string() + ": is a FIFO, not a regular file");
  CHECK(error_of<io::IoError>([&] { (void)io::safetensors::SafetensorsFile::open(dir.path()); }) ==
        dir.path().string() + ": is a directory, not a regular file");
}

TEST_CASE("a FIFO or a directory given as an event file is refused") {
  ScratchDir dir;
  const fs::path fifo = dir / "events.out.tfevents.1.host";
  make_fifo(fifo);
  const std::string expected = fifo.string() + ": is a FIFO, not a regular file";
  CHECK(error_of<io::IoError>([&] { (void)io::read_events(fifo); }) == expected);
  CHECK(error_of<io::IoError>([&] { io::EventFileReader r(fifo); }) == expected);
  CHECK(error_of<io::IoError>([&] { io::RecordReader r(fifo); }) == expected);
  CHECK(error_of<io::IoError>([&] { (void)io::read_events(dir.path()); }) ==
        dir.path().string() + ": is a directory, not a regular file");
  // event_files() lists regular files only: the FIFO is not among them.
  CHECK(io::event_files(dir.path()).empty());
}

TEST_CASE("a FIFO or a directory given as the checkpoint state file is refused") {
  ScratchDir dir;
  make_fifo(dir / "checkpoint");
  CHECK(error_of<io::IoError>([&] { (void)io::get_checkpoint_state(dir.path()); }) ==
        (dir / "checkpoint").string() + ": is a FIFO, not a regular file");
  fs::remove(dir / "checkpoint");
  fs::create_directory(dir / "checkpoint");
  CHECK(error_of<io::IoError>([&] { (void)io::get_checkpoint_state(dir.path()); }) ==
        (dir / "checkpoint").string() + ": is a directory, not a regular file");
}

TEST_CASE("a FIFO or a directory given as an IDX file is refused") {
  ScratchDir dir;
  const fs::path fifo = dir / "train-images-idx3-ubyte";
  make_fifo(fifo);
  CHECK(contains(
      error_of<hookfuse::data::DataError>([&] { (void)hookfuse::data::read_idx_images(fifo); }),
      fifo.string() + ": is a FIFO, not a regular file"));
  CHECK(contains(error_of<hookfuse::data::DataError>(
                     [&] { (void)hookfuse::data::read_idx_labels(dir.path()); }),
                 dir.path().string() + ": is a directory, not a regular file"));
}

TEST_CASE("open_read_only refuses a FIFO and a directory, and reports a missing file by errno") {
  ScratchDir dir;
  make_fifo(dir / "fifo");
  int err = 0;
  CHECK(error_of<io::IoError>([&] { (void)io::detail::open_read_only(dir / "fifo", err); }) ==
        (dir / "fifo").string() + ": is a FIFO, not a regular file");
  CHECK(error_of<io::IoError>([&] { (void)io::detail::open_read_only(dir.path(), err); }) ==
        dir.path().string() + ": is a directory, not a regular file");
  const io::detail::Fd none = io::detail::open_read_only(dir / "missing", err);
  CHECK_FALSE(none);
  CHECK(err == ENOENT);
  write_bytes(dir / "file", "abc");
  const io::detail::Fd fd = io::detail::open_read_only(dir / "file", err);
  REQUIRE(fd);
  CHECK(err == 0);
  // O_NONBLOCK, used to open without waiting on a FIFO, is cleared again.
  CHECK((::fcntl(fd.get(), F_GETFL) & O_NONBLOCK) == 0);
  CHECK(io::detail::regular_file_size(fd, dir / "file") == 3);
}

TEST_CASE("the event reader resumes a file that grows after a truncated tail") {
  ScratchDir dir;
  const fs::path file = dir / "events.out.tfevents.2.host";
  const std::vector<std::string> payloads = {
      scalar_event("loss", 0.5, 1), scalar_event("loss", 0.25, 2), scalar_event("acc", 0.75, 3),
      scalar_event("loss", 0.125, 4)};
  std::string all;
  std::vector<std::size_t> ends;
  for (const auto& p : payloads) {
    io::append_record(all, p);
    ends.push_back(all.size());
  }
  // Two complete records, then the third cut inside its payload.
  const std::size_t cut = ends[1] + io::kRecordHeaderBytes + 3;
  write_bytes(file, all.substr(0, cut));

  io::EventFileReader reader(file);
  CapturingLogger log;
  const auto first = reader.read_new(log);
  REQUIRE(first.size() == 2);
  CHECK(first[0].step == 1);
  CHECK(first[0].summary.value.at(0).tag == "loss");
  CHECK(first[0].summary.value.at(0).simple_value == 0.5f);
  CHECK(first[1].step == 2);
  CHECK(first[1].summary.value.at(0).simple_value == 0.25f);
  CHECK(reader.truncated());
  CHECK(reader.offset() == ends[1]);
  REQUIRE(log.lines.size() == 1);
  CHECK(log.lines[0].first == hookfuse::Severity::warning);
  CHECK(contains(log.lines[0].second,
                 "record 2 at byte offset " + std::to_string(ends[1]) + " is truncated"));

  // Nothing appended yet: nothing new, and the same truncated record is not warned about twice.
  CHECK(reader.read_new(log).empty());
  CHECK(log.lines.size() == 1);

  // Cut inside the header of the record after it, once the third is whole.
  {
    std::FILE* f = std::fopen(file.c_str(), "ab");
    REQUIRE(f != nullptr);
    const std::string more = all.substr(cut, ends[2] + 5 - cut);
    REQUIRE(std::fwrite(more.data(), 1, more.size(), f) == more.size());
    REQUIRE(std::fclose(f) == 0);
  }
  const auto second = reader.read_new(log);
  REQUIRE(second.size() == 1);
  CHECK(second[0].step == 3);
  CHECK(second[0].summary.value.at(0).tag == "acc");
  CHECK(second[0].summary.value.at(0).simple_value == 0.75f);
  CHECK(second[0].wall_time == 1003.0);
  CHECK(reader.truncated());
  CHECK(log.lines.size() == 2);

  {
    std::FILE* f = std::fopen(file.c_str(), "ab");
    REQUIRE(f != nullptr);
    const std::string rest = all.substr(ends[2] + 5);
    REQUIRE(std::fwrite(rest.data(), 1, rest.size(), f) == rest.size());
    REQUIRE(std::fclose(f) == 0);
  }
  const auto third = reader.read_new(log);
  REQUIRE(third.size() == 1);
  CHECK(third[0].step == 4);
  CHECK(third[0].summary.value.at(0).simple_value == 0.125f);
  CHECK_FALSE(reader.truncated());
  CHECK(reader.events_read() == 4);
  CHECK(reader.offset() == all.size());
  CHECK(reader.read_new(log).empty());
  CHECK(log.lines.size() == 2);
}

TEST_CASE("a growing event file written by SummaryWriter is read as it grows") {
  ScratchDir dir;
  io::SummaryWriter writer(dir.path());
  writer.flush();
  io::EventFileReader reader(writer.path());
  CapturingLogger log;
  const auto start = reader.read_new(log);
  REQUIRE(start.size() == 1);
  CHECK(start[0].what == io::Event::What::file_version);
  writer.add_scalar("x", 2.0, 7);
  writer.flush();
  const auto later = reader.read_new(log);
  REQUIRE(later.size() == 1);
  CHECK(later[0].step == 7);
  CHECK(later[0].summary.value.at(0).tag == "x");
  CHECK(log.lines.empty());
}

TEST_CASE("a CRC mismatch in a complete record stays an error after the file grows") {
  ScratchDir dir;
  const fs::path file = dir / "events.out.tfevents.3.host";
  std::string all;
  io::append_record(all, scalar_event("a", 1.0, 1));
  const std::size_t first_end = all.size();
  io::append_record(all, scalar_event("b", 2.0, 2));
  all[first_end + io::kRecordHeaderBytes + 1] ^= 0x40;  // a payload byte of record 1
  write_bytes(file, all.substr(0, first_end + 4));      // record 1 truncated at first

  io::EventFileReader reader(file);
  CapturingLogger log;
  CHECK(reader.read_new(log).size() == 1);
  CHECK(reader.truncated());
  {
    std::FILE* f = std::fopen(file.c_str(), "ab");
    REQUIRE(f != nullptr);
    const std::string rest = all.substr(first_end + 4);
    REQUIRE(std::fwrite(rest.data(), 1, rest.size(), f) == rest.size());
    REQUIRE(std::fclose(f) == 0);
  }
  const std::string what = error_of<io::DataLossError>([&] { (void)reader.read_new(log); });
  CHECK(what.starts_with(file.string() + ": record 1 at byte offset " + std::to_string(first_end) +
                         ": payload of "));
  CHECK(contains(what, "fails its CRC"));
  CHECK(reader.read_new(log).empty());  // nothing after a corrupt record is trusted
}

TEST_CASE("a file that shrinks below the records read is an IoError") {
  ScratchDir dir;
  const fs::path file = dir / "r.tfrecord";
  std::string all;
  io::append_record(all, "one");
  io::append_record(all, "two");
  write_bytes(file, all);
  io::RecordReader reader(file);
  std::string payload;
  CapturingLogger log;
  REQUIRE(reader.read(payload, log));
  REQUIRE(reader.read(payload, log));
  CHECK(payload == "two");
  fs::resize_file(file, 5);
  CHECK(contains(error_of<io::IoError>([&] { (void)reader.read(payload, log); }),
                 file.string() + ": the file shrank to 5 bytes while being read"));
}

TEST_CASE("events above protobuf's 2 GiB - 1 limit are refused, naming the tag") {
  CHECK(io::kMaxEventBytes == 2147483647u);
  io::Event e;
  e.step = 12;
  e.what = io::Event::What::summary;
  e.summary.value.push_back(io::scalar_value("huge/embedding", 1.0));
  CHECK_NOTHROW(io::check_event_size(0, e));
  CHECK_NOTHROW(io::check_event_size(io::kMaxEventBytes, e));
  const std::string what =
      error_of<hookfuse::ValueError>([&] { io::check_event_size(io::kMaxEventBytes + 1, e); });
  CHECK(what ==
        "event of tag 'huge/embedding' at step 12 serializes to 2147483648 bytes, above "
        "protobuf's limit of 2147483647 bytes (2 GiB - 1) that TensorBoard can read; not written");
  CHECK(contains(error_of<hookfuse::ValueError>(
                     [&] { io::check_event_size(std::uint64_t{5} << 30, io::Event{}); }),
                 "event of the event (no summary tag) at step 0 serializes to 5368709120 bytes"));
}

TEST_CASE("pread_exact reads in chunks of at most max_chunk bytes, identical bytes") {
  ScratchDir dir;
  std::string content(1000, '\0');
  for (std::size_t i = 0; i < content.size(); ++i) content[i] = static_cast<char>((i * 37) % 251);
  write_bytes(dir / "data", content);
  int err = 0;
  const io::detail::Fd fd = io::detail::open_read_only(dir / "data", err);
  REQUIRE(fd);
  for (const std::size_t chunk :
       {std::size_t{1}, std::size_t{3}, std::size_t{7}, std::size_t{64}, std::size_t{4096}}) {
    std::string out(990, '\0');
    std::vector<std::size_t> calls;
    const auto counting = [&](int f, void* buf, std::size_t n, off_t off) {
      calls.push_back(n);
      return ::pread(f, buf, n, off);
    };
    REQUIRE(io::detail::pread_exact(fd, dir / "data", 10, out.data(), out.size(), chunk, counting));
    CHECK(out == content.substr(10));
    for (const std::size_t n : calls) CHECK(n <= chunk);
    CHECK(calls.size() == (out.size() + chunk - 1) / chunk);
  }
  // Past the end: false, not a throw.
  std::string tail(20, '\0');
  CHECK_FALSE(io::detail::pread_exact(fd, dir / "data", 990, tail.data(), tail.size(), 3));
}

TEST_CASE("pread_exact retries short reads and EINTR, and names the file and offset on errors") {
  const std::string source = "0123456789abcdefghij";
  int eintr_left = 2;
  const auto flaky = [&](int, void* buf, std::size_t n, off_t off) -> ssize_t {
    if (eintr_left > 0) {
      --eintr_left;
      errno = EINTR;
      return -1;
    }
    const std::size_t k = std::min<std::size_t>(n, 2);  // at most 2 bytes per call
    std::memcpy(buf, source.data() + off, k);
    return static_cast<ssize_t>(k);
  };
  const io::detail::Fd none;
  std::string out(15, '\0');
  REQUIRE(io::detail::pread_exact(none, "mem", 3, out.data(), out.size(), 4, flaky));
  CHECK(out == source.substr(3, 15));
  CHECK(eintr_left == 0);

  const auto failing = [](int, void*, std::size_t, off_t) -> ssize_t {
    errno = EIO;
    return -1;
  };
  CHECK(error_of<io::IoError>([&] {
          (void)io::detail::pread_exact(none, "/x/data", 8, out.data(), 4, 4, failing);
        }) == "/x/data: read of 4 bytes at offset 8 failed: " + io::detail::errno_text(EIO));
}

TEST_CASE("write_fully writes in chunks, retries short writes and EINTR, reports errors") {
  ScratchDir dir;
  std::string content(777, '\0');
  for (std::size_t i = 0; i < content.size(); ++i) content[i] = static_cast<char>((i * 13) % 256);
  {
    const int fd = ::open((dir / "out").c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    REQUIRE(fd >= 0);
    std::vector<std::size_t> calls;
    const auto counting = [&](int f, const void* buf, std::size_t n) {
      calls.push_back(n);
      return ::write(f, buf, n);
    };
    std::size_t written = 0;
    CHECK(io::detail::write_fully(fd, content.data(), content.size(), written, 5, counting) == 0);
    CHECK(written == content.size());
    REQUIRE(::close(fd) == 0);
    for (const std::size_t n : calls) CHECK(n <= 5);
    CHECK(calls.size() == (content.size() + 4) / 5);
  }
  CHECK(file_bytes(dir / "out") == content);

  // Simulated: one EINTR, then at most 3 bytes per call.
  std::string sink;
  int eintr_left = 1;
  const auto short_writes = [&](int, const void* buf, std::size_t n) -> ssize_t {
    if (eintr_left > 0) {
      --eintr_left;
      errno = EINTR;
      return -1;
    }
    const std::size_t k = std::min<std::size_t>(n, 3);
    sink.append(static_cast<const char*>(buf), k);
    return static_cast<ssize_t>(k);
  };
  std::size_t written = 0;
  CHECK(io::detail::write_fully(-1, content.data(), 100, written, 8, short_writes) == 0);
  CHECK(written == 100);
  CHECK(sink == content.substr(0, 100));

  // ENOSPC after 10 bytes; a call that writes nothing is EIO.
  std::size_t calls = 0;
  const auto full = [&](int, const void*, std::size_t n) -> ssize_t {
    if (calls++ == 0) return static_cast<ssize_t>(std::min<std::size_t>(n, 10));
    errno = ENOSPC;
    return -1;
  };
  CHECK(io::detail::write_fully(-1, content.data(), 50, written, 64, full) == ENOSPC);
  CHECK(written == 10);
  const auto stuck = [](int, const void*, std::size_t) -> ssize_t { return 0; };
  CHECK(io::detail::write_fully(-1, content.data(), 50, written, 64, stuck) == EIO);
  CHECK(written == 0);
}

TEST_CASE("tensor files round-trip through the chunked reads and writes") {
  // kMaxIoChunkBytes bounds every call; the real files go through the same loops.
  CHECK(io::detail::kMaxIoChunkBytes == std::size_t{1} << 30);
  CHECK(io::detail::kMaxIoChunkBytes < 0x7ffff000u);
  ScratchDir dir;
  const fs::path prefix = dir / "rt.ckpt-1";
  std::vector<float> v(10000);
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i) * 0.5f - 7.0f;
  {
    io::BundleWriter w(prefix);
    w.add("v", {100, 100}, std::span<const float>(v));
    w.finish();
  }
  const io::BundleReader r(prefix);
  CHECK(r.lookup<float>("v") == v);

  const fs::path st_file = dir / "rt.safetensors";
  const std::vector<io::safetensors::TensorRef> refs = {
      io::safetensors::tensor_ref("v", {100, 100}, std::span<const float>(v))};
  io::safetensors::save_file(st_file, refs);
  const auto f = io::safetensors::SafetensorsFile::open(st_file);
  CHECK(f.get_tensor<float>("v") == v);
}

TEST_CASE("a failed directory fsync names the file whose rename it makes durable") {
  ScratchDir dir;
  const fs::path missing = dir / "gone";
  const fs::path file = missing / "model.ckpt-1.index";
  // The open of the directory fails here (ENOENT); a failed fsync(2) itself takes the same
  // message path (scripts/fault-injection.sh injects it, io.fault_injection).
  CHECK(error_of<io::IoError>([&] { io::detail::fsync_directory(missing, file); }) ==
        file.string() + ": cannot open its directory " + missing.string() +
            " to fsync it: No such file or directory");
  CHECK(error_of<io::IoError>([&] { io::detail::fsync_directory(missing); }) ==
        missing.string() + ": cannot open directory to fsync it: No such file or directory");
}
