// Rows of docs/errors.md provoked with real files: an index whose keys are out of order and one
// holding a partitioned variable (LevelDB's own table builder, entries by hand from
// tensor_bundle.proto), a data file and a TFRecord file cut after the reader took their size,
// and an event whose histogram has more bucket limits than counts (bytes by hand from
// summary.proto and event.proto).
#include <leveldb/comparator.h>
#include <leveldb/env.h>
#include <leveldb/options.h>
#include <leveldb/table_builder.h>

#include <catch2/catch.hpp>
#include <cstdint>
#include <filesystem>
#include <hookfuse/io/event_reader.hpp>
#include <hookfuse/io/tensor_bundle.hpp>
#include <hookfuse/io/tfrecord.hpp>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "error_of.hpp"
#include "io_test_support.hpp"

namespace fs = std::filesystem;
namespace io = hookfuse::io;
using hookfuse_test::CapturingLogger;
using hookfuse_test::error_of;
using hookfuse_test::ScratchDir;
using hookfuse_test::write_bytes;

namespace {

std::string bytes_of(std::initializer_list<unsigned> b) {
  std::string s;
  for (unsigned v : b) s.push_back(static_cast<char>(v));
  return s;
}

/// BundleHeaderProto{num_shards: 1, version {producer: 1}}.
const std::string kHeader = bytes_of({0x08, 0x01, 0x1a, 0x02, 0x08, 0x01});

/// A comparator under which every key is greater than the one before it: LevelDB's builder
/// then stores keys in the order they are added, whatever that order (the reader still
/// iterates them in stored order). Index separators are left as the keys themselves.
struct AsAdded : leveldb::Comparator {
  int Compare(const leveldb::Slice& a, const leveldb::Slice& b) const override {
    return a == b ? 0 : 1;
  }
  const char* Name() const override { return "hookfuse_test.AsAdded"; }
  void FindShortestSeparator(std::string*, const leveldb::Slice&) const override {}
  void FindShortSuccessor(std::string*) const override {}
};

/// `prefix`.index: a LevelDB table of `entries` in the order given; a data file of `data_size`
/// zero bytes.
void write_index(const fs::path& prefix,
                 const std::vector<std::pair<std::string, std::string>>& entries,
                 std::size_t data_size) {
  leveldb::WritableFile* raw = nullptr;
  REQUIRE(leveldb::Env::Default()->NewWritableFile(prefix.string() + ".index", &raw).ok());
  const std::unique_ptr<leveldb::WritableFile> file(raw);
  const AsAdded order;
  leveldb::Options o;
  o.compression = leveldb::kNoCompression;
  o.comparator = &order;
  leveldb::TableBuilder b(o, file.get());
  for (const auto& [k, v] : entries) b.Add(k, v);
  REQUIRE(b.Finish().ok());
  REQUIRE(file->Close().ok());
  write_bytes(prefix.string() + ".data-00000-of-00001", std::string(data_size, '\0'));
}

// BundleEntryProto fields: dtype 1 (varint), shape 2 (TensorShapeProto), shard_id 3, offset 4,
// size 5 (varints), crc32c 6 (fixed32), slices 7 (repeated TensorSliceProto).
/// DT_FLOAT, shape [] (a scalar), offset 0, size 4.
const std::string kScalarEntry = bytes_of({0x08, 0x01, 0x12, 0x00, 0x28, 0x04});

}  // namespace

TEST_CASE("an index whose keys are out of order is DataLossError naming the key") {
  ScratchDir dir;
  const fs::path prefix = dir / "model.ckpt-1";
  write_index(prefix, {{"", kHeader}, {"b", kScalarEntry}, {"a", kScalarEntry}}, 4);
  CHECK(error_of<io::DataLossError>([&] { io::BundleReader r(prefix); }) ==
        prefix.string() + ".index: key 'a' is out of order (keys must increase bytewise)");
  // A key repeated is out of order too ("b" is not greater than "b").
  write_index(prefix,
              {{"", kHeader}, {"a", kScalarEntry}, {"c", kScalarEntry}, {"b", kScalarEntry}}, 4);
  CHECK(error_of<io::DataLossError>([&] { io::BundleReader r(prefix); }) ==
        prefix.string() + ".index: key 'b' is out of order (keys must increase bytewise)");
  // The same entries in order open.
  write_index(prefix, {{"", kHeader}, {"a", kScalarEntry}, {"b", kScalarEntry}}, 4);
  CHECK(io::BundleReader(prefix).entries().size() == 2);
}

TEST_CASE("a partitioned variable is listed but reading it is ValueError naming it") {
  ScratchDir dir;
  const fs::path prefix = dir / "model.ckpt-1";
  // "w": DT_FLOAT [4], stored in slices (one empty TensorSliceProto, field 7), no bytes of its
  // own, as TensorFlow writes a partitioned variable's full entry.
  write_index(prefix,
              {{"", kHeader},
               {"w", bytes_of({0x08, 0x01, 0x12, 0x04, 0x12, 0x02, 0x08, 0x04, 0x3a, 0x00})}},
              0);
  const io::BundleReader reader(prefix);
  REQUIRE(reader.contains("w"));
  CHECK(reader.entry("w").sliced);
  const std::string expected = prefix.string() +
                               ".index: tensor 'w': a partitioned variable (stored in slices), "
                               "which hookfuse does not read";
  CHECK(error_of<hookfuse::ValueError>([&] { (void)reader.lookup<float>("w"); }) == expected);
  CHECK(error_of<hookfuse::ValueError>([&] { (void)reader.lookup_bytes("w"); }) == expected);
}

TEST_CASE("a data file that shrinks after its first read is DataLossError naming the tensor") {
  ScratchDir dir;
  const fs::path prefix = dir / "model.ckpt-1";
  {
    io::BundleWriter w(prefix);
    const std::vector<float> a(100, 1.0f), b(100, 2.0f);
    w.add("a", {100}, a);  // bytes [0, 400)
    w.add("b", {100}, b);  // bytes [400, 800)
    w.finish();
  }
  const fs::path data = prefix.string() + ".data-00000-of-00001";
  REQUIRE(fs::file_size(data) == 800);
  const io::BundleReader reader(prefix);
  CHECK(reader.lookup<float>("a") == std::vector<float>(100, 1.0f));  // opens the data file
  fs::resize_file(data, 500);  // the reader still holds its size, 800
  CHECK(error_of<io::DataLossError>([&] { (void)reader.lookup<float>("b"); }) ==
        data.string() +
            ": tensor 'b': the file ends before the tensor's 400 bytes at offset 400 (expected "
            "them; it shrank while being read)");
}

TEST_CASE("a TFRecord file cut inside a record after it was opened is IoError naming both") {
  ScratchDir dir;
  const fs::path file = dir / "records.tfrecord";
  {
    io::RecordWriter w(file);
    w.write(std::string(20, 'x'));  // bytes [0, 36): 12 header, 20 payload, 4 CRC
    w.write(std::string(20, 'y'));
    w.close();
  }
  REQUIRE(fs::file_size(file) == 72);
  io::RecordReader reader(file);  // takes the size, 72
  fs::resize_file(file, 20);      // header complete, payload cut
  std::string payload;
  CapturingLogger logger;
  CHECK(error_of<io::IoError>([&] { (void)reader.read(payload, logger); }) ==
        file.string() +
            ": record 0 at byte offset 0: the file shrank while being read (expected 20 bytes "
            "at byte offset 12)");
}

TEST_CASE("a histogram with unequal bucket arrays is DataLossError") {
  ScratchDir dir;
  const fs::path file = dir / "events.out.tfevents.1.host";
  // Event 0: {file_version: "brain.Event:2"} (field 3).
  const std::string version = bytes_of({0x1a, 0x0d}) + "brain.Event:2";
  // Event 1: {wall_time: 0 (field 1), step: 5 (field 2), summary (field 5): {value (1):
  // {tag (1): "h", histo (5): {bucket_limit (6): [1.0, 2.0], bucket (7): [3.0]}}}}.
  const std::string one = bytes_of({0, 0, 0, 0, 0, 0, 0xf0, 0x3f});
  const std::string two = bytes_of({0, 0, 0, 0, 0, 0, 0, 0x40});
  const std::string three = bytes_of({0, 0, 0, 0, 0, 0, 0x08, 0x40});
  const std::string histo = bytes_of({0x32, 0x10}) + one + two + bytes_of({0x3a, 0x08}) + three;
  const std::string value = bytes_of({0x0a, 0x01}) + "h" + bytes_of({0x2a, 28}) + histo;
  const std::string summary = bytes_of({0x0a, 33}) + value;
  const std::string event =
      bytes_of({0x09, 0, 0, 0, 0, 0, 0, 0, 0, 0x10, 0x05, 0x2a, 35}) + summary;
  REQUIRE(histo.size() == 28);
  REQUIRE(value.size() == 33);
  REQUIRE(summary.size() == 35);
  {
    io::RecordWriter w(file);  // the framing: length, its CRC, payload, its CRC
    w.write(version);          // record 0: bytes [0, 31)
    w.write(event);            // record 1 at byte offset 31
    w.close();
  }
  CapturingLogger logger;
  CHECK(error_of<io::DataLossError>([&] { (void)io::read_events(file, logger); }) ==
        file.string() +
            ": record 1 at byte offset 31: Event.summary.value[0].histo: 2 bucket_limit values "
            "but 1 bucket counts; expected as many of each");
}
