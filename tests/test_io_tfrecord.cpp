// TFRecord framing: the bytes against a file TensorFlow wrote (fixtures/tf/events_tf2_scalar)
// and FORMATS.md §2, both CRCs checked on read, truncated final records read up to the last
// complete one with a warning, corrupt lengths rejected without allocating.
#include <atomic>
#include <catch2/catch.hpp>
#include <cstdlib>
#include <hookfuse/io/tfrecord.hpp>
#include <new>
#include <string>
#include <vector>

#include "error_of.hpp"
#include "io_test_support.hpp"

// The largest single request to the global operator new, to show that reading a record with a
// corrupt or forged length never asks for what the file cannot hold. Every form of operator new
// and delete is replaced (malloc / aligned_alloc and free), as in tests/alloc_counter.hpp.
namespace {
std::atomic<std::size_t> largest_allocation{0};
void note_size(std::size_t n) {
  std::size_t seen = largest_allocation.load(std::memory_order_relaxed);
  while (n > seen && !largest_allocation.compare_exchange_weak(seen, n)) {
  }
}
void* sized_malloc(std::size_t n) {
  note_size(n);
  return std::malloc(n == 0 ? 1 : n);
}
void* sized_aligned_alloc(std::size_t n, std::align_val_t align) {
  note_size(n);
  std::size_t a = static_cast<std::size_t>(align);
  if (a < sizeof(void*)) a = sizeof(void*);
  return std::aligned_alloc(a, n == 0 ? a : (n + a - 1) / a * a);
}
void* or_throw(void* p) {
  if (p == nullptr) throw std::bad_alloc();
  return p;
}
}  // namespace
void* operator new(std::size_t n) { return or_throw(sized_malloc(n)); }
void* operator new[](std::size_t n) { return or_throw(sized_malloc(n)); }
void* operator new(std::size_t n, const std::nothrow_t&) noexcept { return sized_malloc(n); }
void* operator new[](std::size_t n, const std::nothrow_t&) noexcept { return sized_malloc(n); }
void* operator new(std::size_t n, std::align_val_t a) {
  return or_throw(sized_aligned_alloc(n, a));
}
void* operator new[](std::size_t n, std::align_val_t a) {
  return or_throw(sized_aligned_alloc(n, a));
}
void* operator new(std::size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
  return sized_aligned_alloc(n, a);
}
void* operator new[](std::size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
  return sized_aligned_alloc(n, a);
}
// malloc paired with free on purpose (GCC 12 with the sanitizers misreads the pairing once a
// replaced delete is inlined: see tests/alloc_counter.hpp).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t, const std::nothrow_t&) noexcept { std::free(p); }
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

namespace io = hookfuse::io;
using hookfuse_test::CapturingLogger;
using hookfuse_test::error_of;
using hookfuse_test::file_bytes;
using hookfuse_test::ScratchDir;
using hookfuse_test::write_bytes;

namespace {

/// Three records of 0, 5 and 300 bytes, written with RecordWriter.
std::vector<std::string> sample_payloads() {
  return {std::string(), std::string("hello"), std::string(300, '\x7f')};
}

std::filesystem::path write_sample(const ScratchDir& dir) {
  const auto path = dir / "sample.tfrecord";
  io::RecordWriter w(path);
  for (const auto& p : sample_payloads()) w.write(p);
  w.close();
  return path;
}

/// Byte offsets at which the records of `bytes` start.
std::vector<std::size_t> record_offsets(const std::string& bytes) {
  std::vector<std::size_t> at;
  std::size_t pos = 0;
  while (pos + 12 <= bytes.size()) {
    at.push_back(pos);
    std::uint64_t len = 0;
    for (int i = 7; i >= 0; --i) len = (len << 8) | static_cast<unsigned char>(bytes[pos + i]);
    pos += 16 + len;
  }
  return at;
}

}  // namespace

TEST_CASE("every record is length, masked CRC of the length, payload, masked CRC of the payload") {
  HF_REQUIRE_EVENT_FIXTURE(fixture, "events_tf2_scalar");
  const std::string tf = file_bytes(fixture);
  // FORMATS.md §2: a 24-byte first record starts 18 00 00 00 00 00 00 00 a3 7f 4b 22.
  const std::string expected_header("\x18\0\0\0\0\0\0\0\xa3\x7f\x4b\x22", 12);
  REQUIRE(tf.substr(0, 12) == expected_header);
  // Framing the fixture's first payload again gives TensorFlow's 40 bytes exactly.
  std::string framed;
  io::append_record(framed, std::string_view(tf).substr(12, 24));
  CHECK(framed == tf.substr(0, 40));
  CHECK(framed.size() == 24 + io::kRecordOverheadBytes);
}

TEST_CASE("RecordWriter appends records that RecordReader reads back") {
  ScratchDir dir;
  const auto path = write_sample(dir);
  CHECK(std::filesystem::file_size(path) == 0 + 5 + 300 + 3 * 16);
  // A second writer appends to the same file.
  {
    io::RecordWriter w(path);
    w.write("more");
    CHECK(w.records_written() == 1);
  }
  CapturingLogger log;
  const auto records = io::read_records(path, log);
  auto expected = sample_payloads();
  expected.push_back("more");
  CHECK(records == expected);
  CHECK(log.lines.empty());
}

TEST_CASE("RecordWriter hands only whole records to the file, at flush") {
  ScratchDir dir;
  const auto path = dir / "buffered.tfrecord";
  io::RecordWriter w(path);
  w.write("abc");
  w.write("defg");
  CHECK(std::filesystem::file_size(path) == 0);  // still in the writer's buffer
  CHECK(w.size_bytes() == 3 + 4 + 32);
  w.flush();
  CHECK(std::filesystem::file_size(path) == 3 + 4 + 32);
  w.close();
  CHECK_FALSE(w.is_open());
  CHECK(error_of<io::IoError>([&] { w.write("x"); }).find("closed") != std::string::npos);
}

TEST_CASE("RecordWriter: a file that cannot be opened is an IoError naming it") {
  ScratchDir dir;
  write_bytes(dir / "plain_file", "x");
  const auto bad = dir / "plain_file" / "records.tfrecord";  // a directory that is a file
  const std::string what = error_of<io::IoError>([&] { io::RecordWriter w(bad); });
  CHECK(what.find(bad.string()) != std::string::npos);
  CHECK(what.find("cannot open for writing") != std::string::npos);
}

TEST_CASE("RecordReader: a flipped payload byte is a DataLossError naming file, record, offset") {
  ScratchDir dir;
  const std::string good = file_bytes(write_sample(dir));
  const auto at = record_offsets(good);
  REQUIRE(at.size() == 3);
  std::string bad = good;
  bad[at[2] + 12 + 100] =
      static_cast<char>(bad[at[2] + 12 + 100] ^ 0x01);  // inside the third record's payload
  const auto path = dir / "flipped.tfrecord";
  write_bytes(path, bad);
  io::RecordReader reader(path);
  std::string payload;
  CHECK(reader.read(payload));
  CHECK(reader.read(payload));
  const std::string what = error_of<io::DataLossError>([&] { reader.read(payload); });
  CHECK(what.find(path.string()) != std::string::npos);
  CHECK(what.find("record 2 at byte offset " + std::to_string(at[2])) != std::string::npos);
  CHECK(what.find("payload of 300 bytes fails its CRC") != std::string::npos);
  CHECK_FALSE(reader.read(payload));  // nothing is trusted after a corrupt record
}

TEST_CASE("RecordReader: a flipped CRC byte is a DataLossError too") {
  ScratchDir dir;
  const std::string good = file_bytes(write_sample(dir));
  const auto at = record_offsets(good);
  const auto path = dir / "crc.tfrecord";
  SECTION("payload CRC") {
    std::string bad = good;
    bad[at[1] + 12 + 5] =
        static_cast<char>(bad[at[1] + 12 + 5] ^ 0x7f);  // first byte of record 1's footer
    write_bytes(path, bad);
    const std::string what = error_of<io::DataLossError>([&] { (void)io::read_records(path); });
    CHECK(what.find("record 1 at byte offset " + std::to_string(at[1])) != std::string::npos);
    CHECK(what.find("fails its CRC") != std::string::npos);
  }
  SECTION("length CRC") {
    std::string bad = good;
    bad[at[1] + 9] = static_cast<char>(bad[at[1] + 9] ^ 0x10);
    write_bytes(path, bad);
    const std::string what = error_of<io::DataLossError>([&] { (void)io::read_records(path); });
    CHECK(what.find(path.string() + ": record 1 at byte offset " + std::to_string(at[1]) +
                    ": length field (5 bytes) fails its CRC") != std::string::npos);
  }
}

TEST_CASE("RecordReader: a file cut inside its last record reads to the last complete record") {
  ScratchDir dir;
  const std::string good = file_bytes(write_sample(dir));
  const auto at = record_offsets(good);
  const auto path = dir / "cut.tfrecord";
  // Every cut inside the last record: in its length, its length CRC, payload or footer.
  for (std::size_t cut = at[2] + 1; cut < good.size(); ++cut) {
    write_bytes(path, std::string_view(good).substr(0, cut));
    CapturingLogger log;
    io::RecordReader reader(path);
    std::vector<std::string> got;
    std::string payload;
    while (reader.read(payload, log)) got.push_back(payload);
    INFO("cut at byte " << cut);
    CHECK(got == std::vector<std::string>{"", "hello"});
    CHECK(reader.truncated());
    CHECK(reader.offset() == at[2]);
    REQUIRE(log.lines.size() == 1);
    CHECK(log.lines[0].first == hookfuse::Severity::warning);
    CHECK(log.lines[0].second.find(path.string() + ": record 2 at byte offset " +
                                   std::to_string(at[2]) + " is truncated") != std::string::npos);
  }
  // A cut exactly between records is a complete shorter file: no warning.
  write_bytes(path, std::string_view(good).substr(0, at[2]));
  CapturingLogger log;
  CHECK(io::read_records(path, log).size() == 2);
  CHECK(log.lines.empty());
}

TEST_CASE("RecordReader: a huge length is rejected without allocating it") {
  ScratchDir dir;
  const std::string good = file_bytes(write_sample(dir));
  const auto path = dir / "huge.tfrecord";
  std::string bad = good;
  for (int i = 0; i < 8; ++i) bad[static_cast<std::size_t>(16 + i)] = '\xff';  // record 1's length
  SECTION("corrupt length (its CRC no longer matches): DataLossError") {
    write_bytes(path, bad);
    largest_allocation = 0;
    const std::string what = error_of<io::DataLossError>([&] { (void)io::read_records(path); });
    CHECK(largest_allocation < 4096);
    CHECK(what.find("record 1 at byte offset 16: length field (18446744073709551615 bytes) "
                    "fails its CRC") != std::string::npos);
  }
  SECTION("forged length with a valid CRC: more than the file holds, so a truncated record") {
    // 1 GiB: an allocation that would succeed, so only the bound against the file prevents it.
    for (int i = 0; i < 8; ++i) bad[static_cast<std::size_t>(16 + i)] = i == 3 ? '\x40' : '\0';
    const std::uint32_t crc = io::masked_crc32c(bad.data() + 16, 8);
    for (int i = 0; i < 4; ++i)
      bad[static_cast<std::size_t>(24 + i)] = static_cast<char>(crc >> (8 * i));
    write_bytes(path, bad);
    largest_allocation = 0;
    CapturingLogger log;
    const auto records = io::read_records(path, log);
    CHECK(largest_allocation < 4096);
    CHECK(records.size() == 1);
    REQUIRE(log.lines.size() == 1);
    CHECK(log.lines[0].second.find("is truncated") != std::string::npos);
  }
}

TEST_CASE("RecordReader: missing file, directory, empty file") {
  ScratchDir dir;
  const auto missing = dir / "missing.tfrecord";
  CHECK(error_of<io::NotFoundError>([&] { io::RecordReader r(missing); }) ==
        missing.string() + ": no such file");
  CHECK(error_of<io::IoError>([&] { io::RecordReader r(dir.path()); }).find("not a regular file") !=
        std::string::npos);
  write_bytes(dir / "empty", "");
  CapturingLogger log;
  CHECK(io::read_records(dir / "empty", log).empty());
  CHECK(log.lines.empty());
}
