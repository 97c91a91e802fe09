// Tensor bundles against bad input and a hostile file system: corrupt, truncated, forged and
// missing files give clean errors naming the file and tensor (and no out-of-bounds access
// under ASan); failed writes leave nothing under the final names and earlier bundles intact.
#include <leveldb/env.h>
#include <leveldb/options.h>
#include <leveldb/table_builder.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cstdint>
#include <hookfuse/io/tensor_bundle.hpp>
#include <memory>
#include <new>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "bundle_test_util.hpp"
#include "error_of.hpp"

namespace io = hookfuse::io;
using hookfuse_test::copy_bundle;
using hookfuse_test::error_of;
using hookfuse_test::read_bytes;
using hookfuse_test::TempDir;
using hookfuse_test::tf_fixture;
using hookfuse_test::write_bytes;

namespace {

using Bytes = std::vector<unsigned char>;

std::string bytes_of(std::initializer_list<unsigned> b) {
  std::string s;
  for (unsigned v : b) s.push_back(static_cast<char>(v));
  return s;
}

const std::string kHeader = bytes_of({0x08, 0x01, 0x1a, 0x02, 0x08, 0x01});

/// Writes `prefix`.index as a LevelDB table of the given (sorted) entries, with LevelDB's own
/// builder (not BundleWriter), and a data file of `data_size` zero bytes.
void write_raw_bundle(const std::filesystem::path& prefix,
                      const std::vector<std::pair<std::string, std::string>>& entries,
                      std::size_t data_size) {
  leveldb::WritableFile* raw = nullptr;
  REQUIRE(leveldb::Env::Default()->NewWritableFile(io::meta_filename(prefix).string(), &raw).ok());
  std::unique_ptr<leveldb::WritableFile> file(raw);
  leveldb::Options o;
  o.compression = leveldb::kNoCompression;
  leveldb::TableBuilder b(o, file.get());
  for (const auto& [k, v] : entries) b.Add(k, v);
  REQUIRE(b.Finish().ok());
  REQUIRE(file->Close().ok());
  write_bytes(io::data_filename(prefix), Bytes(data_size, 0));
}

/// The DataLossError message of opening the bundle at `prefix`.
std::string open_error(const std::filesystem::path& prefix) {
  return error_of<io::DataLossError>([&] { io::BundleReader r(prefix); });
}

/// Little-endian base-128 varint at b[pos], advancing pos.
std::uint64_t varint(const Bytes& b, std::size_t& pos) {
  std::uint64_t v = 0;
  for (int shift = 0;; shift += 7) {
    const unsigned char c = b.at(pos++);
    v |= std::uint64_t{c & 0x7fu} << shift;
    if ((c & 0x80u) == 0) return v;
  }
}

void make_bundle(const std::filesystem::path& prefix, float value) {
  io::BundleWriter w(prefix);
  const std::vector<float> v(100, value);
  w.add("w", {10, 10}, v);
  w.finish();
}

}  // namespace

TEST_CASE("a flipped byte in a data file is a CRC error naming the file and the tensor") {
  const auto fixture = tf_fixture("ckpt_tf1_half_plus_three/variables");
  TempDir dir;
  const auto prefix = copy_bundle(fixture, dir.path(), "copy");
  auto data = read_bytes(io::data_filename(prefix));
  data[5] ^= 0x01;  // inside b = 3.0f (bytes 4..7)
  write_bytes(io::data_filename(prefix), data);

  const io::CheckpointReader r(prefix);  // the index is intact: opening succeeds
  const auto msg = error_of<io::DataLossError>([&] { (void)r.get_tensor<float>("b"); });
  CHECK_THAT(msg, Catch::Contains(io::data_filename(prefix).string()) &&
                      Catch::Contains("tensor 'b'") && Catch::Contains("CRC32C mismatch") &&
                      Catch::Contains("0xc382d6ef"));
  CHECK(r.get_tensor<float>("a") == std::vector<float>{0.5f});
  CHECK(r.get_tensor<float>("c") == std::vector<float>{3.0f});
}

TEST_CASE("a flipped byte in a matrix of the houseprices checkpoint names that matrix") {
  const auto fixture = tf_fixture("ckpt_tf1_saver_houseprices/model.ckpt");
  TempDir dir;
  const auto prefix = copy_bundle(fixture, dir.path(), "model.ckpt");
  auto data = read_bytes(io::data_filename(prefix));
  data[10808 + 1000] ^= 0x80;  // Variable_2 [100,5] spans bytes 10808..12807 (README)
  write_bytes(io::data_filename(prefix), data);
  const io::CheckpointReader r(prefix);
  CHECK_THAT(error_of<io::DataLossError>([&] { (void)r.get_tensor<float>("Variable_2"); }),
             Catch::Contains("tensor 'Variable_2'") && Catch::Contains("CRC32C mismatch"));
  CHECK_NOTHROW(r.get_tensor<float>("Variable_1/Adam_1"));
}

TEST_CASE("a flipped byte in an index is a checksum error naming the file and its tensors") {
  const auto fixture = tf_fixture("ckpt_tf1_half_plus_three/variables");
  TempDir dir;
  const auto prefix = copy_bundle(fixture, dir.path(), "copy");
  auto index = read_bytes(io::meta_filename(prefix));
  index[30] ^= 0x04;  // inside the one data block (entries "", a, b, c)
  write_bytes(io::meta_filename(prefix), index);
  const auto msg = open_error(prefix);
  CHECK_THAT(msg, Catch::Contains(io::meta_filename(prefix).string()) &&
                      Catch::Contains("checksum mismatch") && Catch::Contains("'b'"));
}

TEST_CASE("every single-byte flip of an index is detected or harmless, never a crash") {
  const auto fixture = tf_fixture("ckpt_tf1_half_plus_three/variables");
  TempDir dir;
  const auto prefix = copy_bundle(fixture, dir.path(), "copy");
  const Bytes good = read_bytes(io::meta_filename(prefix));
  // The footer's first block handle is the metaindex block, which follows the data block and
  // its 5-byte trailer: every byte before it belongs to the CRC-protected data block.
  std::size_t pos = good.size() - 48;
  const auto metaindex_offset = varint(good, pos);
  REQUIRE(metaindex_offset > 0);
  int detected = 0;
  for (std::size_t i = 0; i < good.size(); ++i) {
    Bytes bad = good;
    bad[i] ^= 0xff;
    write_bytes(io::meta_filename(prefix), bad);
    bool threw = false;
    try {
      const io::CheckpointReader r(prefix);
      CHECK(r.get_tensor<float>("a") == std::vector<float>{0.5f});
      CHECK(r.get_tensor<float>("c") == std::vector<float>{3.0f});
    } catch (const io::DataLossError&) {
      threw = true;
      ++detected;
    }
    if (i < metaindex_offset) {
      INFO("flipped byte " << i);
      CHECK(threw);
    }
  }
  CHECK(detected >= static_cast<int>(metaindex_offset));
}

TEST_CASE("every truncation of an index and of a data file is a clean error") {
  const auto fixture = tf_fixture("ckpt_tf1_half_plus_three/variables");
  TempDir dir;
  const auto prefix = copy_bundle(fixture, dir.path(), "copy");
  const Bytes index = read_bytes(io::meta_filename(prefix));
  for (std::size_t n = 0; n < index.size(); ++n) {
    write_bytes(io::meta_filename(prefix),
                Bytes(index.begin(), index.begin() + static_cast<long>(n)));
    INFO("index truncated to " << n << " bytes");
    CHECK_THROWS_AS(io::BundleReader(prefix), io::DataLossError);
  }
  write_bytes(io::meta_filename(prefix), index);

  const Bytes data = read_bytes(io::data_filename(prefix));
  write_bytes(io::data_filename(prefix), Bytes(data.begin(), data.begin() + 6));
  // b occupies bytes 4..7: reading it fails, a (bytes 0..3) still reads.
  const io::BundleReader r(prefix);
  CHECK(r.lookup<float>("a") == std::vector<float>{0.5f});
  CHECK_THAT(error_of<io::DataLossError>([&] { (void)r.lookup<float>("b"); }),
             Catch::Contains(io::data_filename(prefix).string()) && Catch::Contains("tensor 'b'") &&
                 Catch::Contains("data file has 6 bytes"));
}

TEST_CASE("missing files are NotFoundError naming the file") {
  const auto fixture = tf_fixture("ckpt_tf1_half_plus_three/variables");
  TempDir dir;
  const auto prefix = copy_bundle(fixture, dir.path(), "copy");
  std::filesystem::remove(io::data_filename(prefix));
  // The data file is opened when a tensor is read (TensorFlow's BundleReader::GetValue).
  const io::BundleReader without_data(prefix);
  CHECK_THAT(error_of<io::NotFoundError>([&] { (void)without_data.lookup<float>("a"); }),
             Catch::Contains(io::data_filename(prefix).string()) &&
                 Catch::Contains("data file not found") && Catch::Contains("tensor 'a'"));
  std::filesystem::remove(io::meta_filename(prefix));
  CHECK_THAT(error_of<io::NotFoundError>([&] { io::CheckpointReader r(prefix); }),
             Catch::Contains(io::meta_filename(prefix).string()) && Catch::Contains("not found"));
  CHECK_THROWS_AS(io::list_variables(dir / "never_written"), io::NotFoundError);
}

TEST_CASE("garbage and forged indexes are DataLossError, never an out-of-bounds read") {
  TempDir dir;
  const auto prefix = dir / "junk";
  write_bytes(io::data_filename(prefix), Bytes(16, 0));

  std::mt19937 gen(12345);
  Bytes noise(300);
  for (auto& b : noise) b = static_cast<unsigned char>(gen());
  for (const Bytes& index : {Bytes{}, Bytes{1, 2, 3}, Bytes(48, 0), noise}) {
    write_bytes(io::meta_filename(prefix), index);
    INFO("index of " << index.size() << " bytes");
    CHECK_THAT(open_error(prefix), Catch::Contains(io::meta_filename(prefix).string()) &&
                                       Catch::Contains("not a valid checkpoint index"));
  }

  // A footer with the right magic whose block handles lie: past the end, and a size whose
  // sum with the 5-byte block trailer wraps around 2^64.
  const Bytes magic = {0x57, 0xfb, 0x80, 0x8b, 0x24, 0x75, 0x47, 0xdb};
  auto footer = [&](Bytes handles) {
    Bytes f(100, 0);
    handles.resize(40, 0);
    f.insert(f.end(), handles.begin(), handles.end());
    f.insert(f.end(), magic.begin(), magic.end());
    return f;
  };
  const Bytes wrap = {0x00, 0xfd, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01};
  Bytes handles = {0x00, 0x08};                             // metaindex (0, 8)
  handles.insert(handles.end(), wrap.begin(), wrap.end());  // index (0, 2^64 - 3)
  for (const Bytes& index : {footer({0x00, 0x08, 0x90, 0x4e, 0x10}), footer(handles)}) {
    write_bytes(io::meta_filename(prefix), index);
    CHECK_THROWS_AS(io::BundleReader(prefix), io::DataLossError);
  }
}

TEST_CASE("forged entries and headers are DataLossError saying what was expected") {
  TempDir dir;
  const auto p = dir / "forged";
  const auto f1 = bytes_of({0x08, 0x01});  // dtype DT_FLOAT

  write_raw_bundle(p, {{"", kHeader}, {"w", bytes_of({0x0d, 0x01, 0, 0, 0, 0x12, 0x00})}}, 4);
  CHECK_THAT(open_error(p), Catch::Contains("tensor 'w'") &&
                                Catch::Contains("dtype (field 1) has wire type 5 (32-bit), "
                                                "expected 0 (varint)"));
  // shape [-1] (a 10-byte varint)
  write_raw_bundle(p,
                   {{"", kHeader},
                    {"w", f1 + bytes_of({0x12, 0x0d, 0x12, 0x0b, 0x08, 0xff, 0xff, 0xff, 0xff, 0xff,
                                         0xff, 0xff, 0xff, 0xff, 0x01})}},
                   4);
  CHECK_THAT(open_error(p), Catch::Contains("tensor 'w'") && Catch::Contains("is -1") &&
                                Catch::Contains("expected a size >= 0"));
  // shape [2^62, 2^62]: more elements than int64 holds
  const std::string big =
      bytes_of({0x12, 0x0a, 0x08, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x40});
  write_raw_bundle(p, {{"", kHeader}, {"w", f1 + bytes_of({0x12, 0x18}) + big + big}}, 4);
  CHECK_THAT(open_error(p), Catch::Contains("tensor 'w'") && Catch::Contains("int64"));
  // float [2] but size 4
  write_raw_bundle(
      p, {{"", kHeader}, {"w", f1 + bytes_of({0x12, 0x04, 0x12, 0x02, 0x08, 0x02, 0x28, 0x04})}},
      8);
  CHECK_THAT(open_error(p), Catch::Contains("size 4 bytes, expected 2 elements x 4 bytes of "
                                            "DT_FLOAT for shape [2]"));
  // float [] at offset 8 in an 8-byte data file
  write_raw_bundle(p, {{"", kHeader}, {"w", f1 + bytes_of({0x12, 0x00, 0x20, 0x08, 0x28, 0x04})}},
                   8);
  CHECK_THAT(error_of<io::DataLossError>([&] { (void)io::BundleReader(p).lookup<float>("w"); }),
             Catch::Contains(io::data_filename(p).string()) && Catch::Contains("tensor 'w'") &&
                 Catch::Contains("data file has 8 bytes"));
  // shard 1 of a one-shard bundle
  write_raw_bundle(p, {{"", kHeader}, {"w", f1 + bytes_of({0x12, 0x00, 0x18, 0x01, 0x28, 0x04})}},
                   4);
  CHECK_THAT(open_error(p), Catch::Contains("shard_id (field 3) is 1, expected 0 (the header's "
                                            "num_shards is 1)"));
  // a varint cut off
  write_raw_bundle(p, {{"", kHeader}, {"w", bytes_of({0x08, 0x81})}}, 4);
  CHECK_THAT(open_error(p),
             Catch::Contains("tensor 'w'") && Catch::Contains("malformed BundleEntryProto"));

  // Headers: big-endian, no shard, missing, a reader too old, a bad consumer.
  write_raw_bundle(p, {{"", bytes_of({0x08, 0x01, 0x10, 0x01, 0x1a, 0x02, 0x08, 0x01})}}, 0);
  CHECK_THAT(open_error(p), Catch::Contains("big-endian"));
  write_raw_bundle(p, {{"", bytes_of({0x1a, 0x02, 0x08, 0x01})}}, 0);  // num_shards 0, omitted
  CHECK_THAT(open_error(p), Catch::Contains("num_shards (field 1) is 0, expected >= 1"));
  write_raw_bundle(p, {{"a", f1 + bytes_of({0x12, 0x00})}}, 0);
  CHECK_THAT(open_error(p), Catch::Contains("no header entry"));
  write_raw_bundle(p, {{"", bytes_of({0x08, 0x01, 0x1a, 0x04, 0x08, 0x01, 0x10, 0x02})}}, 0);
  CHECK_THAT(open_error(p), Catch::Contains("version >= 2"));
  write_raw_bundle(p, {{"", bytes_of({0x08, 0x01, 0x1a, 0x04, 0x08, 0x01, 0x18, 0x01})}}, 0);
  CHECK_THAT(open_error(p), Catch::Contains("bad consumer"));
}

TEST_CASE("more forged headers and entries name the file, the field and both values") {
  TempDir dir;
  const auto p = dir / "forged2";
  const std::string index = io::meta_filename(p).string();
  const auto f1 = bytes_of({0x08, 0x01});  // dtype DT_FLOAT
  // endianness 2
  write_raw_bundle(p, {{"", bytes_of({0x08, 0x01, 0x10, 0x02, 0x1a, 0x02, 0x08, 0x01})}}, 0);
  CHECK(open_error(p) == index + ": header: BundleHeaderProto.endianness (field 2) is 2, "
                                 "expected 0 (LITTLE) or 1 (BIG)");
  // producer -1 (a 10-byte varint)
  write_raw_bundle(p,
                   {{"", bytes_of({0x08, 0x01, 0x1a, 0x0b, 0x08, 0xff, 0xff, 0xff, 0xff, 0xff,
                                   0xff, 0xff, 0xff, 0xff, 0x01})}},
                   0);
  CHECK(open_error(p) == index + ": header: VersionDef.producer (field 1) is -1, expected >= 0");
  // dtype 2^31
  write_raw_bundle(p, {{"", kHeader}, {"w", bytes_of({0x08, 0x80, 0x80, 0x80, 0x80, 0x08})}}, 4);
  CHECK(open_error(p) ==
        index + ": tensor 'w': BundleEntryProto.dtype (field 1) = 2147483648 does not fit int32");
  // unknown rank
  write_raw_bundle(p, {{"", kHeader}, {"w", f1 + bytes_of({0x12, 0x02, 0x18, 0x01})}}, 4);
  CHECK(open_error(p) == index + ": tensor 'w': shape has unknown rank, expected a known shape");
  // offset -1
  write_raw_bundle(p,
                   {{"", kHeader},
                    {"w", f1 + bytes_of({0x12, 0x00, 0x20, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
                                         0xff, 0xff, 0xff, 0x01, 0x28, 0x04})}},
                   4);
  CHECK(open_error(p) == index + ": tensor 'w': BundleEntryProto.offset (field 4) -1 and size "
                                 "(field 5) 4, expected both >= 0");
}

TEST_CASE("a malformed string tensor names the data file, the tensor and the byte") {
  TempDir dir;
  const auto p = dir / "strings";
  const std::string data = io::data_filename(p).string();
  // DT_STRING (7) of shape [n], `size` bytes at offset 0 of a data file holding `bytes`.
  auto write = [&](unsigned n, const Bytes& bytes) {
    write_raw_bundle(p,
                     {{"", kHeader},
                      {"s", bytes_of({0x08, 0x07, 0x12, 0x04, 0x12, 0x02, 0x08, n, 0x28,
                                      static_cast<unsigned>(bytes.size())})}},
                     0);
    write_bytes(io::data_filename(p), bytes);
  };
  auto error = [&] {
    return error_of<io::DataLossError>([&] { (void)io::BundleReader(p).lookup_strings("s"); });
  };
  write(2, {0x00});
  CHECK(error() == data + ": tensor 's': 2 strings cannot fit in 1 bytes");
  write(1, {0x80});
  CHECK(error() == data + ": tensor 's': string length 0 is cut off at byte 1 of the 1-byte "
                          "tensor, expected a complete varint");
  write(1, {0x00});
  CHECK(error() == data + ": tensor 's': lengths' checksum is cut off: expected 4 bytes at byte "
                          "1, the 1-byte tensor has 0");
  // Well-formed lengths (their masked CRC32C follows them), then too few or too many bytes.
  auto with_lengths_crc = [](std::uint32_t len, Bytes tail) {
    const std::uint32_t crc = io::masked_crc32c(&len, 4);
    Bytes b{static_cast<unsigned char>(len)};
    for (int i = 0; i < 4; ++i) b.push_back(static_cast<unsigned char>((crc >> (8 * i)) & 0xffu));
    b.insert(b.end(), tail.begin(), tail.end());
    return b;
  };
  write(1, with_lengths_crc(5, {}));
  CHECK(error() == data + ": tensor 's': string of 5 bytes reaches past the 5-byte tensor");
  write(1, with_lengths_crc(0, {'x'}));
  CHECK(error() == data + ": tensor 's': 1 bytes left after the last string, expected none");
}

TEST_CASE("a dtype hookfuse does not read is listed, and reading it says so") {
  TempDir dir;
  const auto p = dir / "half";
  // DT_HALF (19) [2]: 4 bytes at offset 0 with the CRC of 4 zero bytes.
  const std::array<unsigned char, 4> zeros{};
  const std::uint32_t crc = io::masked_crc32c(zeros.data(), 4);
  std::string entry = bytes_of({0x08, 0x13, 0x12, 0x04, 0x12, 0x02, 0x08, 0x02, 0x28, 0x04, 0x35});
  for (int i = 0; i < 4; ++i) entry.push_back(static_cast<char>((crc >> (8 * i)) & 0xffu));
  write_raw_bundle(p, {{"", kHeader}, {"h", entry}}, 4);
  const io::CheckpointReader r(p);
  CHECK(static_cast<int>(r.get_variable_to_dtype_map().at("h")) == 19);
  CHECK(r.get_variable_to_shape_map().at("h") == io::TensorShape{2});
  CHECK_THAT(error_of<hookfuse::ValueError>([&] { (void)r.get_tensor<float>("h"); }),
             Catch::Contains("tensor 'h'") && Catch::Contains("unsupported dtype 19 (DT_HALF)"));
  CHECK(r.bundle().lookup_bytes("h").size() == 4);  // the raw bytes, CRC-checked
}

TEST_CASE("an unwritable location is an IoError naming the path, and earlier bundles survive") {
  TempDir dir;
  const auto earlier = dir / "model.ckpt-1";
  make_bundle(earlier, 1.5f);
  const Bytes earlier_index = read_bytes(io::meta_filename(earlier));
  const Bytes earlier_data = read_bytes(io::data_filename(earlier));

  // A directory that is a regular file (chmod does not stop root; this stops everyone).
  write_bytes(dir / "file", Bytes{1});
  const auto under_file = dir / "file" / "model.ckpt-2";
  CHECK_THAT(error_of<io::IoError>([&] { io::BundleWriter w(under_file); }),
             Catch::Contains(io::data_filename(under_file).string()) &&
                 Catch::Contains("Not a directory"));
  // A directory that does not exist.
  const auto missing = dir / "no_such_dir" / "model.ckpt-2";
  CHECK_THAT(error_of<io::IoError>([&] { io::BundleWriter w(missing); }),
             Catch::Contains(io::data_filename(missing).string()) &&
                 Catch::Contains("No such file or directory"));

  CHECK(dir.files() ==
        std::vector<std::string>{"file", "model.ckpt-1.data-00000-of-00001", "model.ckpt-1.index"});
  CHECK(read_bytes(io::meta_filename(earlier)) == earlier_index);
  CHECK(read_bytes(io::data_filename(earlier)) == earlier_data);
  CHECK(io::CheckpointReader(earlier).get_tensor<float>("w") == std::vector<float>(100, 1.5f));
}

TEST_CASE("a read-only directory is an IoError naming the path") {
  if (::geteuid() == 0) HOOKFUSE_SKIP("running as root, which chmod 0555 does not stop");
  TempDir dir;
  const auto earlier = dir / "model.ckpt-1";
  make_bundle(earlier, 2.5f);
  std::filesystem::permissions(dir.path(), std::filesystem::perms(0555));
  const auto prefix = dir / "model.ckpt-2";
  const auto msg = error_of<io::IoError>([&] { io::BundleWriter w(prefix); });
  std::filesystem::permissions(dir.path(), std::filesystem::perms(0755));
  CHECK_THAT(msg, Catch::Contains(io::data_filename(prefix).string()) &&
                      Catch::Contains("Permission denied"));
  CHECK(io::CheckpointReader(earlier).get_tensor<float>("w") == std::vector<float>(100, 2.5f));
}

namespace {

/// Limits the size of any file this process writes (RLIMIT_FSIZE, as a full disk would): a
/// write past it fails with EFBIG (SIGXFSZ ignored). Restores both on destruction.
class FileSizeLimit {
 public:
  explicit FileSizeLimit(rlim_t bytes) {
    REQUIRE(::getrlimit(RLIMIT_FSIZE, &saved_) == 0);
    old_handler_ = ::signal(SIGXFSZ, SIG_IGN);
    rlimit lim = saved_;
    lim.rlim_cur = bytes;
    REQUIRE(::setrlimit(RLIMIT_FSIZE, &lim) == 0);
  }
  ~FileSizeLimit() {
    ::setrlimit(RLIMIT_FSIZE, &saved_);
    ::signal(SIGXFSZ, old_handler_);
  }

 private:
  rlimit saved_{};
  void (*old_handler_)(int) = nullptr;
};

}  // namespace

TEST_CASE("a write failing midway (a full disk) leaves no file and the earlier bundle intact") {
  TempDir dir;
  const auto earlier = dir / "model.ckpt-1";
  make_bundle(earlier, 4.0f);
  const auto prefix = dir / "model.ckpt-2";
  const std::vector<float> big(1 << 18, 1.0f);  // 1 MiB

  SECTION("in add(): the data file") {
    std::string msg;
    {
      io::BundleWriter w(prefix);
      FileSizeLimit limit(64 * 1024);
      msg = error_of<io::IoError>([&] { w.add("big", {1 << 18}, big); });
      CHECK_THAT(error_of<hookfuse::RuntimeError>([&] { w.finish(); }),
                 Catch::Contains("after an I/O error"));
    }
    CHECK_THAT(msg, Catch::Contains(io::data_filename(prefix).string()) &&
                        Catch::Contains("File too large"));
  }
  SECTION("in finish(): the index") {
    std::string msg;
    {
      io::BundleWriter w(prefix);
      FileSizeLimit limit(4 * 1024);
      const std::array<float, 1> one{1.0f};
      for (int i = 0; i < 1000; ++i)
        w.add("t" + std::to_string(i), {}, one);  // data 4000 B, index ~15 kB
      msg = error_of<io::IoError>([&] { w.finish(); });
    }
    CHECK_THAT(msg, Catch::Contains(io::meta_filename(prefix).string()) &&
                        Catch::Contains("File too large"));
  }
  // No partial file under the final names, no temporary file left behind.
  CHECK(dir.files() ==
        std::vector<std::string>{"model.ckpt-1.data-00000-of-00001", "model.ckpt-1.index"});
  CHECK(io::CheckpointReader(earlier).get_tensor<float>("w") == std::vector<float>(100, 4.0f));
}

TEST_CASE("rewriting a prefix replaces it whole, and a failed rewrite keeps the old bundle") {
  TempDir dir;
  const auto prefix = dir / "model.ckpt-5";
  make_bundle(prefix, 1.0f);
  {
    io::BundleWriter w(prefix);
    FileSizeLimit limit(4 * 1024);
    const std::array<float, 1> one{1.0f};
    for (int i = 0; i < 1000; ++i) w.add("t" + std::to_string(i), {}, one);
    CHECK_THROWS_AS(w.finish(), io::IoError);
  }
  CHECK(io::CheckpointReader(prefix).get_tensor<float>("w") == std::vector<float>(100, 1.0f));
  make_bundle(prefix, 2.0f);
  CHECK(io::CheckpointReader(prefix).get_tensor<float>("w") == std::vector<float>(100, 2.0f));
  CHECK(dir.files() ==
        std::vector<std::string>{"model.ckpt-5.data-00000-of-00001", "model.ckpt-5.index"});
}

TEST_CASE("a writer abandoned before finish() leaves nothing behind") {
  TempDir dir;
  {
    io::BundleWriter w(dir / "model.ckpt-3");
    const std::vector<double> v(10, 1.0);
    w.add("v", {10}, v);
    CHECK(dir.files().size() == 1);  // the data file, under its temporary name
    CHECK(dir.files()[0].find("model.ckpt-3.data-00000-of-00001.tempstate") == 0);
  }
  CHECK(dir.files().empty());
}

TEST_CASE("a relative prefix is resolved once: files land there, errors name them in full") {
  TempDir dir;
  TempDir elsewhere;
  const auto saved_cwd = std::filesystem::current_path();
  std::filesystem::current_path(dir.path());
  std::string msg;
  {
    io::BundleWriter w("model.ckpt-9");
    const std::array<float, 1> one{1.0f};
    w.add("x", {}, one);
    std::filesystem::current_path(elsewhere.path());  // the writer keeps its directory
    w.finish();
    msg = error_of<io::NotFoundError>([] { io::BundleReader r("model.ckpt-9"); });
  }
  std::filesystem::current_path(saved_cwd);
  CHECK(dir.files() ==
        std::vector<std::string>{"model.ckpt-9.data-00000-of-00001", "model.ckpt-9.index"});
  CHECK(elsewhere.files().empty());
  CHECK_THAT(msg, Catch::Contains((elsewhere / "model.ckpt-9.index").string()));
}

TEST_CASE("a flipped byte in a string tensor fails its length or content checksum") {
  const auto fixture = tf_fixture("ckpt_tf2_regression/variables");
  const std::string key = "_CHECKPOINTABLE_OBJECT_GRAPH";
  // Offset 28 (README): varint 531 (93 04), 4 bytes of length checksum, then 531 bytes.
  for (const auto& [offset, expected] :
       {std::pair<std::size_t, std::string>{28 + 3, "CRC32C mismatch of the string lengths"},
        {28 + 6 + 200, "CRC32C mismatch over bytes [28, +537)"}}) {
    TempDir dir;
    const auto prefix = copy_bundle(fixture, dir.path(), "copy");
    auto data = read_bytes(io::data_filename(prefix));
    data.at(offset) ^= 0x10;
    write_bytes(io::data_filename(prefix), data);
    const io::BundleReader r(prefix);
    CHECK_THAT(error_of<io::DataLossError>([&] { (void)r.lookup_strings(key); }),
               Catch::Contains("tensor '" + key + "'") && Catch::Contains(expected));
    CHECK_THROWS_AS(r.lookup_bytes(key), io::DataLossError);
    CHECK(r.lookup<float>("w/.ATTRIBUTES/VARIABLE_VALUE") == std::vector<float>{0.204297543f});
  }
}

TEST_CASE("an entry claiming 4 GiB of a 4-byte data file is refused before allocating") {
  // Seen fuzzing fuzz/fuzz_checkpoint_data: lookups allocated (and zeroed) an entry's size
  // before checking it against the data file. DT_FLOAT [2^30]: 2^32 bytes at offset 0; the data
  // file has 4 bytes.
  TempDir dir;
  const auto p = dir / "big";
  std::string entry = bytes_of({0x08, 0x01, 0x12, 0x08, 0x12, 0x06, 0x08, 0x80, 0x80, 0x80, 0x80,
                                0x04, 0x28, 0x80, 0x80, 0x80, 0x80, 0x10, 0x35, 0, 0, 0, 0});
  write_raw_bundle(p, {{"", kHeader}, {"big", entry}}, 4);
  const io::CheckpointReader r(p);
  // Outside ASan (whose shadow memory needs the address space), an address-space limit turns
  // an allocation of the claimed size into std::bad_alloc instead of DataLossError.
#if !defined(__SANITIZE_ADDRESS__)
  rlimit saved{};
  REQUIRE(::getrlimit(RLIMIT_AS, &saved) == 0);
  rlimit lim = saved;
  lim.rlim_cur = rlim_t{3} << 30;
  if (saved.rlim_cur != RLIM_INFINITY && saved.rlim_cur < lim.rlim_cur) lim.rlim_cur = saved.rlim_cur;
  REQUIRE(::setrlimit(RLIMIT_AS, &lim) == 0);
#endif
  const std::string want = io::data_filename(p).string() +
                           ": tensor 'big': entry says bytes [0, 0+4294967296), but the data "
                           "file has 4 bytes";
  std::string vector_error, bytes_error;
  try {
    (void)r.get_tensor<float>("big");
  } catch (const io::DataLossError& e) {
    vector_error = e.what();
  } catch (const std::bad_alloc&) {
    vector_error = "std::bad_alloc";
  }
  try {
    (void)r.bundle().lookup_bytes("big");
  } catch (const io::DataLossError& e) {
    bytes_error = e.what();
  } catch (const std::bad_alloc&) {
    bytes_error = "std::bad_alloc";
  }
#if !defined(__SANITIZE_ADDRESS__)
  ::setrlimit(RLIMIT_AS, &saved);
#endif
  CHECK_THAT(vector_error, Catch::Contains(want));
  CHECK_THAT(bytes_error, Catch::Contains(want));
}
