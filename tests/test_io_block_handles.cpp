// Checkpoint indexes with forged LevelDB block handles: a size or offset reaching past the end of
// the file is a DataLossError naming the file, the block, its offset and size and the file's
// size, raised before LevelDB allocates the forged size (an allocation-size report under ASan
// otherwise). The forged files are patched from a hookfuse-written checkpoint following the
// table format's layout: a 48-byte footer holding two varint64 (offset, size) block handles
// (metaindex, index), zero padding, then the magic number 0xdb4775248b80fb57; each block is
// followed by a 5-byte trailer (compression type, masked CRC32C of the block and that type).
#include <array>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <hookfuse/io/crc32c.hpp>
#include <hookfuse/io/tensor_bundle.hpp>
#include <snappy.h>
#include <string>
#include <vector>

#include "bundle_test_util.hpp"
#include "error_of.hpp"

namespace io = hookfuse::io;
using hookfuse_test::error_of;
using hookfuse_test::read_bytes;
using hookfuse_test::TempDir;
using hookfuse_test::write_bytes;

namespace {

using Bytes = std::vector<unsigned char>;

constexpr std::size_t kFooterSize = 48;
constexpr std::uint64_t kMagic = 0xdb4775248b80fb57ull;

void put_varint(Bytes& out, std::uint64_t v) {
  for (; v >= 0x80; v >>= 7) out.push_back(static_cast<unsigned char>((v & 0x7f) | 0x80));
  out.push_back(static_cast<unsigned char>(v));
}

std::uint64_t get_varint(const Bytes& in, std::size_t& at) {
  std::uint64_t v = 0;
  for (unsigned shift = 0;; shift += 7) {
    const unsigned char b = in.at(at++);
    v |= std::uint64_t{b & 0x7fu} << shift;
    if ((b & 0x80) == 0) return v;
  }
}

struct Handle {
  std::uint64_t offset = 0;
  std::uint64_t size = 0;
};

struct Footer {
  Handle metaindex;
  Handle index;
};

Footer read_footer(const Bytes& file) {
  REQUIRE(file.size() >= kFooterSize);
  std::uint64_t magic = 0;
  std::memcpy(&magic, file.data() + file.size() - 8, 8);
  REQUIRE(magic == kMagic);
  std::size_t at = file.size() - kFooterSize;
  Footer f;
  f.metaindex.offset = get_varint(file, at);
  f.metaindex.size = get_varint(file, at);
  f.index.offset = get_varint(file, at);
  f.index.size = get_varint(file, at);
  return f;
}

Bytes footer_bytes(const Footer& f) {
  Bytes out;
  for (std::uint64_t v : {f.metaindex.offset, f.metaindex.size, f.index.offset, f.index.size})
    put_varint(out, v);
  out.resize(kFooterSize - 8, 0);
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<unsigned char>(kMagic >> (8 * i)));
  return out;
}

/// A bundle of one small float tensor written by hookfuse, uncompressed; returns its prefix.
std::filesystem::path write_bundle(const TempDir& dir) {
  const std::filesystem::path prefix = dir / "model.ckpt-1";
  io::BundleWriter w(prefix);
  w.add("w", {4}, std::vector<float>{1.0f, 2.0f, 3.0f, 4.0f});
  w.finish();
  return prefix;
}

}  // namespace

TEST_CASE("forged index block handle in the footer: DataLossError before any allocation",
          "[io][bundle][fuzz]") {
  TempDir dir;
  const auto prefix = write_bundle(dir);
  const auto index = io::meta_filename(prefix);
  Bytes file = read_bytes(index);
  Footer f = read_footer(file);
  f.index.size = std::uint64_t{1} << 62;  // LevelDB would allocate this before reading
  const Bytes footer = footer_bytes(f);
  std::copy(footer.begin(), footer.end(), file.end() - static_cast<std::ptrdiff_t>(kFooterSize));
  write_bytes(index, file);

  const std::string msg = error_of<io::DataLossError>([&] { io::BundleReader r(prefix); });
  CHECK_THAT(msg, Catch::Contains(std::filesystem::absolute(index).string() +
                                  ": index block (footer) at offset " +
                                  std::to_string(f.index.offset) + " of size " +
                                  std::to_string(f.index.size)));
  CHECK_THAT(msg, Catch::Contains("reaches past the end of the file, which has " +
                                  std::to_string(file.size()) + " bytes"));
}

TEST_CASE("forged metaindex block handle in the footer: DataLossError", "[io][bundle][fuzz]") {
  TempDir dir;
  const auto prefix = write_bundle(dir);
  const auto index = io::meta_filename(prefix);
  Bytes file = read_bytes(index);
  Footer f = read_footer(file);
  f.metaindex.offset = file.size();  // the block starts at the end of the file
  const Bytes footer = footer_bytes(f);
  std::copy(footer.begin(), footer.end(), file.end() - static_cast<std::ptrdiff_t>(kFooterSize));
  write_bytes(index, file);

  const std::string msg = error_of<io::DataLossError>([&] { io::BundleReader r(prefix); });
  CHECK_THAT(msg, Catch::Contains(": metaindex block (footer) at offset " +
                                  std::to_string(file.size()) + " of size "));
  CHECK_THAT(msg, Catch::Contains("which has " + std::to_string(file.size()) + " bytes"));
}

TEST_CASE("forged data block handle in the index block (valid CRC): DataLossError",
          "[io][bundle][fuzz]") {
  TempDir dir;
  const auto prefix = write_bundle(dir);
  const auto index = io::meta_filename(prefix);
  const Bytes file = read_bytes(index);
  const Footer f = read_footer(file);
  REQUIRE(file.at(f.index.offset + f.index.size) == 0);  // uncompressed index block

  // The index block of a one-block table: one entry (shared 0, key, value = the data block's
  // handle), then its restart array (one fixed32 offset) and restart count (fixed32 1).
  std::size_t at = f.index.offset;
  REQUIRE(get_varint(file, at) == 0);  // shared key bytes
  const std::uint64_t key_size = get_varint(file, at);
  const std::uint64_t value_size = get_varint(file, at);
  const Bytes key(file.begin() + static_cast<std::ptrdiff_t>(at),
                  file.begin() + static_cast<std::ptrdiff_t>(at + key_size));
  std::size_t value_at = at + key_size;
  const std::uint64_t data_offset = get_varint(file, value_at);
  REQUIRE(value_at - (at + key_size) <= value_size);

  const std::uint64_t forged = std::uint64_t{1} << 40;
  Bytes handle;
  put_varint(handle, data_offset);
  put_varint(handle, forged);
  Bytes block;
  put_varint(block, 0);
  put_varint(block, key_size);
  put_varint(block, handle.size());
  block.insert(block.end(), key.begin(), key.end());
  block.insert(block.end(), handle.begin(), handle.end());
  for (std::uint32_t v : {0u, 1u})
    for (int i = 0; i < 4; ++i) block.push_back(static_cast<unsigned char>(v >> (8 * i)));

  Bytes forged_file(file.begin(), file.begin() + static_cast<std::ptrdiff_t>(f.index.offset));
  Footer g = f;
  g.index.size = block.size();
  forged_file.insert(forged_file.end(), block.begin(), block.end());
  block.push_back(0);  // the trailer's type byte is covered by the CRC
  const std::uint32_t crc = io::masked_crc32c(block.data(), block.size());
  forged_file.push_back(0);
  for (int i = 0; i < 4; ++i) forged_file.push_back(static_cast<unsigned char>(crc >> (8 * i)));
  const Bytes footer = footer_bytes(g);
  forged_file.insert(forged_file.end(), footer.begin(), footer.end());
  write_bytes(index, forged_file);

  const std::string msg = error_of<io::DataLossError>([&] { io::BundleReader r(prefix); });
  CHECK_THAT(msg, Catch::Contains(std::filesystem::absolute(index).string() + ": data block 0"));
  CHECK_THAT(msg, Catch::Contains("at offset " + std::to_string(data_offset) + " of size " +
                                  std::to_string(forged) +
                                  " (+5-byte trailer) reaches past the end of the file, which has " +
                                  std::to_string(forged_file.size()) + " bytes"));
}

TEST_CASE("a hookfuse-written bundle still opens through the block-handle checks",
          "[io][bundle][fuzz]") {
  TempDir dir;
  const auto prefix = write_bundle(dir);
  const io::BundleReader r(prefix);
  CHECK(r.lookup<float>("w") == std::vector<float>{1.0f, 2.0f, 3.0f, 4.0f});
}


namespace {

/// A table written by hand: one data block (trailer type `type`, 0 plain or 1 snappy), an empty
/// metaindex block, an index block with the data block's handle under `key`, and the footer.
/// `index_block_of` builds the index block from the handle's bytes (default: one entry).
Bytes one_block_table(const Bytes& data_block, unsigned char type,
                      Bytes (*index_block_of)(const Bytes& handle) = nullptr) {
  Bytes file;
  const auto add_block = [&file](const Bytes& block, unsigned char t) {
    const Handle h{file.size(), block.size()};
    file.insert(file.end(), block.begin(), block.end());
    Bytes covered = block;
    covered.push_back(t);
    const std::uint32_t crc = io::masked_crc32c(covered.data(), covered.size());
    file.push_back(t);
    for (int i = 0; i < 4; ++i) file.push_back(static_cast<unsigned char>(crc >> (8 * i)));
    return h;
  };
  const Handle data = add_block(data_block, type);
  const Bytes empty_block = {0, 0, 0, 0, 1, 0, 0, 0};  // restart offset 0, restart count 1
  Footer f;
  f.metaindex = add_block(empty_block, 0);
  Bytes handle;
  put_varint(handle, data.offset);
  put_varint(handle, data.size);
  Bytes index_block;
  if (index_block_of != nullptr) {
    index_block = index_block_of(handle);
  } else {
    index_block = {0, 1, static_cast<unsigned char>(handle.size()), 'w'};
    index_block.insert(index_block.end(), handle.begin(), handle.end());
    index_block.insert(index_block.end(), {0, 0, 0, 0, 1, 0, 0, 0});
  }
  f.index = add_block(index_block, 0);
  const Bytes footer = footer_bytes(f);
  file.insert(file.end(), footer.begin(), footer.end());
  return file;
}

/// The error of opening the index `file` (with an empty data file) as a bundle.
std::string open_index_error(const Bytes& file) {
  TempDir dir;
  const auto prefix = dir / "model.ckpt-1";
  write_bytes(io::meta_filename(prefix), file);
  write_bytes(io::data_filename(prefix), {});
  return error_of<io::DataLossError>([&] { io::BundleReader r(prefix); });
}

/// A block entry: shared 0, unshared key length 0xffffffff, value length 5 (varint32s), then
/// 4 bytes. LevelDB checks the lengths' sum against the bytes left in 32-bit arithmetic:
/// 0xffffffff + 5 wraps to 4, which fits, and its iterator would copy 4 GiB from the entry.
const Bytes kWrappingEntry = {0x00, 0xff, 0xff, 0xff, 0xff, 0x0f, 0x05, 'a', 'b', 'c', 'd'};

}  // namespace

TEST_CASE("snappy block claiming an impossible uncompressed size: DataLossError",
          "[io][bundle][fuzz]") {
  // The snappy header claims 0xfffffff0 uncompressed bytes (LevelDB allocates that before
  // inflating).
  Bytes data_block;
  put_varint(data_block, 0xfffffff0u);
  data_block.push_back(0x00);  // a 1-byte literal tag, then its byte
  data_block.push_back('x');
  const std::string msg = open_index_error(one_block_table(data_block, 1));
  CHECK_THAT(msg, Catch::Contains(": data block 0 (index block entry, last key 'w') at offset 0: "
                                  "snappy-compressed block of " +
                                  std::to_string(data_block.size()) + " bytes claims 4294967280 "
                                  "uncompressed bytes, expected at most 64 per compressed byte"));
}

TEST_CASE("data block entry whose key and value lengths wrap past 4 GiB: DataLossError",
          "[io][bundle][fuzz]") {
  Bytes data_block = kWrappingEntry;
  data_block.insert(data_block.end(), {0, 0, 0, 0, 1, 0, 0, 0});  // restart 0, count 1
  const std::string msg = open_index_error(one_block_table(data_block, 0));
  CHECK_THAT(msg, Catch::Contains("model.ckpt-1.index") &&
                      Catch::Contains("block at offset 0 (" + std::to_string(data_block.size()) +
                                      " bytes): entry at byte 0: unshared key length 4294967295 "
                                      "plus value length 5 is past 4 GiB, with 4 bytes left"));
}

TEST_CASE("the same entry in a snappy-compressed data block: DataLossError",
          "[io][bundle][fuzz]") {
  Bytes plain = kWrappingEntry;
  plain.insert(plain.end(), {0, 0, 0, 0, 1, 0, 0, 0});
  std::string compressed;
  snappy::Compress(reinterpret_cast<const char*>(plain.data()), plain.size(), &compressed);
  const Bytes data_block(compressed.begin(), compressed.end());
  const std::string msg = open_index_error(one_block_table(data_block, 1));
  CHECK_THAT(msg, Catch::Contains("block at offset 0 (" + std::to_string(data_block.size()) +
                                  " bytes): entry at byte 0: unshared key length 4294967295"));
}

TEST_CASE("a wrapping entry reached only through a restart point: DataLossError",
          "[io][bundle][fuzz]") {
  // Entry 0 is well formed (key "w", a 11-byte value that holds the forged entry's bytes); the
  // second restart point (offset 5) points into that value, where Seek decodes an entry.
  Bytes data_block = {0x00, 0x01, 0x0b, 'w'};
  data_block.insert(data_block.end(), kWrappingEntry.begin(), kWrappingEntry.end());
  REQUIRE(data_block.size() == 15);
  // The value starts at byte 4; kWrappingEntry's first byte (shared 0) is there.
  data_block.insert(data_block.end(), {0, 0, 0, 0, 4, 0, 0, 0, 2, 0, 0, 0});
  const std::string msg = open_index_error(one_block_table(data_block, 0));
  CHECK_THAT(msg, Catch::Contains("entry at byte 4: unshared key length 4294967295 plus value "
                                  "length 5 is past 4 GiB"));
}

TEST_CASE("an index block whose entry wraps past 4 GiB: DataLossError", "[io][bundle][fuzz]") {
  const Bytes data_block = {0, 0, 0, 0, 1, 0, 0, 0};
  const std::string msg =
      open_index_error(one_block_table(data_block, 0, [](const Bytes&) {
        Bytes index_block = kWrappingEntry;
        index_block.insert(index_block.end(), {0, 0, 0, 0, 1, 0, 0, 0});
        return index_block;
      }));
  CHECK_THAT(msg, Catch::Contains("model.ckpt-1.index") &&
                      Catch::Contains("entry at byte 0: unshared key length 4294967295 plus "
                                      "value length 5 is past 4 GiB"));
}

TEST_CASE("fuzz_checkpoint_index finding oom-084ddd5e is a DataLossError and no 4 GiB read",
          "[io][bundle][fuzz]") {
  // The 160-byte index libFuzzer found (docs/fuzzing.md, "Findings"): an index block whose
  // entries' lengths wrap LevelDB's 32-bit check.
  const Bytes file = {
      0x00, 0x00, 0x06, 0x08, 0x01, 0x1a, 0x02, 0x08, 0x3c, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
      0x00, 0xff, 0xff, 0xff, 0xff, 0x7f, 0x35, 0xef, 0xd6, 0x82, 0xc3, 0x00, 0x00, 0x00, 0x00,
      0x01, 0xd1, 0x04, 0x00, 0x00, 0x00, 0x28, 0x04, 0x35, 0x06, 0xc7, 0x27, 0x1f, 0x00, 0x01,
      0x0d, 0x62, 0x08, 0x01, 0x12, 0x00, 0x60, 0x04, 0x2e, 0x04, 0x35, 0x00, 0xa0, 0x60, 0xc0,
      0x00, 0xc3, 0xff, 0xf9, 0x0d, 0x63, 0x08, 0x00, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f, 0x35,
      0xef, 0xd6, 0x82, 0xc3, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0xc1, 0xe6,
      0x19, 0x69, 0x6d, 0x01, 0x42, 0x54, 0x45, 0x53, 0x56, 0x41, 0x52, 0xb7, 0xbe, 0xbd, 0xb3,
      0xba, 0xa0, 0x4c, 0x55, 0x45, 0x00, 0x00, 0x00, 0x00, 0x00, 0x57, 0xfb, 0x00, 0x00, 0x00,
      0x00, 0x00, 0x5b, 0x00, 0x40, 0x00, 0x00, 0x00, 0xff, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
      0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
      0x00, 0x00, 0x57, 0xfb, 0x80, 0x8b, 0x24, 0x75, 0x47, 0xdb};
  REQUIRE(file.size() == 160);
  const std::string msg = open_index_error(file);
  CHECK_THAT(msg, Catch::Contains("model.ckpt-1.index") &&
                      Catch::Contains("is past 4 GiB"));
}
