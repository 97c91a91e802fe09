// tests/test_data_idx.cpp: IDX reader tests (raw and gzip, error messages, Fashion-MNIST loading).
//
// Fixtures: HOOKFUSE_FIXTURES_DIR (the shared fixtures root, or its idx/ subdirectory) holding
// the 100-sample Fashion-MNIST subset; the check values come from its README.md. Tests that
// need it, or Debian's /usr/share/datasets/fashion-mnist, report "SKIPPED: <test>" and exit
// with 77 when it is absent (tests/skip.hpp; "Skipped" in ctest's summary).
#include <zlib.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <optional>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "hookfuse/data/idx.hpp"
#include "idx_fixtures.hpp"
#include "skip.hpp"

namespace fs = std::filesystem;
using Catch::Matchers::Contains;
using hookfuse::data::DataError;
using hookfuse::data::Split;
using Bytes = std::vector<std::uint8_t>;

static_assert(std::is_base_of_v<std::runtime_error, DataError>);

namespace {

using hookfuse_test::kImages;
using hookfuse_test::kLabels;

const fs::path kDebianDir = hookfuse::data::default_fashion_mnist_dir;

/// A fresh directory under the system temp dir, removed with its contents on destruction.
struct TempDir {
  fs::path path;
  TempDir() {
    std::random_device rd;
    const auto stamp = std::chrono::steady_clock::now().time_since_epoch().count();
    path = fs::temp_directory_path() /
           ("hookfuse-test-data-idx-" + std::to_string(rd()) + "-" + std::to_string(stamp));
    fs::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  fs::path operator/(const std::string& name) const { return path / name; }
};

Bytes read_bytes(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  return Bytes(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

void write_bytes(const fs::path& p, const Bytes& b) {
  std::ofstream f(p, std::ios::binary);
  f.write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
}

/// Writes `b` gzip-compressed with zlib; `members` > 1 splits it into concatenated gzip members.
void write_gzip(const fs::path& p, const Bytes& b, int members = 1) {
  std::ofstream(p, std::ios::binary | std::ios::trunc).close();
  const std::size_t step = b.size() / static_cast<std::size_t>(members) + 1;
  for (std::size_t off = 0; off < b.size(); off += step) {
    gzFile gz = gzopen(p.c_str(), "ab");
    REQUIRE(gz != nullptr);
    const auto n = static_cast<unsigned>(std::min(step, b.size() - off));
    REQUIRE(gzwrite(gz, b.data() + off, n) == static_cast<int>(n));
    REQUIRE(gzclose(gz) == Z_OK);
  }
}

Bytes be32(std::uint32_t v) {
  return {static_cast<std::uint8_t>(v >> 24), static_cast<std::uint8_t>(v >> 16),
          static_cast<std::uint8_t>(v >> 8), static_cast<std::uint8_t>(v)};
}

Bytes idx_header(std::uint32_t magic, std::initializer_list<std::uint32_t> dims) {
  Bytes out = be32(magic);
  for (auto d : dims) {
    const Bytes b = be32(d);
    out.insert(out.end(), b.begin(), b.end());
  }
  return out;
}

/// The DataError message thrown by `f`, failing the test when none is thrown.
template <class F>
std::string data_error_of(F&& f) {
  try {
    f();
  } catch (const DataError& e) {
    return e.what();
  }
  FAIL("expected a hookfuse::data::DataError");
  return {};
}

std::int64_t sum(const Bytes& b, std::size_t from, std::size_t n) {
  return std::accumulate(b.begin() + static_cast<std::ptrdiff_t>(from),
                         b.begin() + static_cast<std::ptrdiff_t>(from + n), std::int64_t{0});
}

}  // namespace

TEST_CASE("read_idx_images reads the 100-image Fashion-MNIST fixture", "[data][idx]") {
  HF_REQUIRE_FIXTURES(dir);
  const auto im = hookfuse::data::read_idx_images(*dir / kImages);
  CHECK(im.count == 100);
  CHECK(im.rows == 28);
  CHECK(im.cols == 28);
  CHECK(im.features() == 784);
  REQUIRE(im.pixels.size() == 78400);
  // Values from fixtures/idx/README.md.
  CHECK(sum(im.pixels, 0, 784) == 33456);
  CHECK(*std::max_element(im.pixels.begin(), im.pixels.begin() + 784) == 255);
  CHECK(std::count_if(im.pixels.begin(), im.pixels.begin() + 784, [](auto p) { return p; }) == 267);
  CHECK(sum(im.pixels, 0, im.pixels.size()) == 5854180);
  // Individual pixels and the last image, computed with python3 (gzip module) from the file.
  CHECK(im.pixels[215] == 3);  // image 0, row 7, col 19: its first non-zero pixel
  CHECK(im.pixels[216] == 1);
  CHECK(im.pixels[219] == 7);
  CHECK(im.pixels[221] == 37);
  CHECK(std::all_of(im.pixels.begin(), im.pixels.begin() + 215, [](auto p) { return p == 0; }));
  CHECK(sum(im.pixels, 99 * 784, 784) == 93257);
}

TEST_CASE("read_idx_labels reads the 100-label Fashion-MNIST fixture", "[data][idx]") {
  HF_REQUIRE_FIXTURES(dir);
  const auto lb = hookfuse::data::read_idx_labels(*dir / kLabels);
  REQUIRE(lb.count() == 100);
  const Bytes first20(lb.labels.begin(), lb.labels.begin() + 20);
  CHECK(first20 == Bytes{9, 2, 1, 1, 6, 1, 4, 6, 5, 7, 4, 5, 7, 3, 4, 1, 2, 4, 8, 0});
  std::vector<int> counts(10, 0);
  for (auto l : lb.labels) {
    REQUIRE(l < 10);
    ++counts[l];
  }
  CHECK(counts == std::vector<int>{8, 13, 14, 9, 10, 9, 8, 11, 12, 6});
}

TEST_CASE("raw and gzip IDX files read to identical bytes", "[data][idx][gzip]") {
  HF_REQUIRE_FIXTURES(dir);
  const auto raw = hookfuse::data::read_idx_images(*dir / kImages);
  const auto gz = hookfuse::data::read_idx_images(*dir / (std::string(kImages) + ".gz"));
  CHECK(gz.count == raw.count);
  CHECK(gz.rows == raw.rows);
  CHECK(gz.cols == raw.cols);
  CHECK(gz.pixels == raw.pixels);
  // And both equal the file's bytes after its 16-byte header.
  const Bytes file = read_bytes(*dir / kImages);
  CHECK(raw.pixels == Bytes(file.begin() + 16, file.end()));

  CHECK(hookfuse::data::read_idx_labels(*dir / (std::string(kLabels) + ".gz")).labels ==
        hookfuse::data::read_idx_labels(*dir / kLabels).labels);
}

TEST_CASE("concatenated gzip members decompress as one stream", "[data][idx][gzip]") {
  HF_REQUIRE_FIXTURES(dir);
  TempDir tmp;
  write_gzip(tmp / "multi.gz", read_bytes(*dir / kImages), 3);
  const auto im = hookfuse::data::read_idx_images(tmp / "multi.gz");
  CHECK(im.pixels == hookfuse::data::read_idx_images(*dir / kImages).pixels);
}

TEST_CASE("load_idx_pair pairs images with labels", "[data][idx]") {
  HF_REQUIRE_FIXTURES(dir);
  const auto ds =
      hookfuse::data::load_idx_pair(*dir / (std::string(kImages) + ".gz"), *dir / kLabels);
  CHECK(ds.size() == 100);
  CHECK(ds.labels.count() == 100);
  CHECK(ds.labels.labels[0] == 9);
  CHECK(sum(ds.images.pixels, 0, 784) == 33456);
}

TEST_CASE("a missing file names the path and the Debian package", "[data][idx][errors]") {
  TempDir tmp;
  const fs::path missing = tmp / "no-such-images-idx3-ubyte.gz";
  const std::string msg = data_error_of([&] { hookfuse::data::read_idx_images(missing); });
  CHECK_THAT(msg, Contains(missing.string()));
  CHECK_THAT(msg, Contains("not found"));
  CHECK_THAT(msg, Contains("dataset-fashion-mnist"));
  CHECK_THAT(msg, Contains("/usr/share/datasets/fashion-mnist"));
  CHECK_THAT(data_error_of([&] { hookfuse::data::read_idx_labels(missing); }),
             Contains(missing.string()) && Contains("dataset-fashion-mnist"));
  CHECK_THAT(data_error_of([&] { hookfuse::data::read_idx_images(tmp.path); }),
             Contains(tmp.path.string()) && Contains("not a regular file"));
}

TEST_CASE("a wrong magic number names the path, the value and the expected one",
          "[data][idx][errors]") {
  TempDir tmp;
  const fs::path labels = tmp / "labels";
  const fs::path images = tmp / "images.gz";
  write_gzip(images, idx_header(0x803, {0, 28, 28}));
  write_bytes(labels, [] {
    Bytes b = idx_header(0x801, {2});
    b.push_back(3);
    b.push_back(4);
    return b;
  }());
  CHECK(data_error_of([&] { hookfuse::data::read_idx_images(labels); }) ==
        labels.string() +
            ": magic number 0x00000801, expected 0x00000803 (IDX3 unsigned-byte images); "
            "this is an IDX1 label file");
  CHECK(data_error_of([&] { hookfuse::data::read_idx_labels(images); }) ==
        images.string() +
            ": magic number 0x00000803, expected 0x00000801 (IDX1 unsigned-byte labels); "
            "this is an IDX3 image file");
  const fs::path text = tmp / "text";
  write_bytes(text, Bytes{'h', 'e', 'l', 'l', 'o', '\n'});
  CHECK_THAT(data_error_of([&] { hookfuse::data::read_idx_images(text); }),
             Contains(text.string() + ": magic number 0x68656c6c, expected 0x00000803") &&
                 Contains("not an IDX file"));
  // Too short to hold a magic number at all.
  const fs::path tiny = tmp / "tiny";
  write_bytes(tiny, Bytes{0, 0});
  CHECK_THAT(data_error_of([&] { hookfuse::data::read_idx_labels(tiny); }),
             Contains(tiny.string() + ": truncated") && Contains("0x00000801"));
}

TEST_CASE("truncated IDX data is reported with declared and actual sizes", "[data][idx][errors]") {
  TempDir tmp;
  SECTION("the MNIST-sized header over 100 bytes") {
    const fs::path p = tmp / "train-images-idx3-ubyte";
    Bytes b = idx_header(0x803, {60000, 28, 28});
    b.resize(b.size() + 100, 7);
    write_bytes(p, b);
    CHECK(data_error_of([&] { hookfuse::data::read_idx_images(p); }) ==
          p.string() +
              ": truncated: header declares 60000 images of 28x28 (47040000 bytes) "
              "but only 100 bytes follow");
  }
  SECTION("the same inside a gzip file") {
    const fs::path p = tmp / "train-images-idx3-ubyte.gz";
    Bytes b = idx_header(0x803, {60000, 28, 28});
    b.resize(b.size() + 100, 7);
    write_gzip(p, b);
    CHECK(data_error_of([&] { hookfuse::data::read_idx_images(p); }) ==
          p.string() +
              ": truncated: header declares 60000 images of 28x28 (47040000 bytes) "
              "but only 100 bytes follow");
  }
  SECTION("labels") {
    const fs::path p = tmp / "labels";
    Bytes b = idx_header(0x801, {10});
    b.resize(b.size() + 9, 1);
    write_bytes(p, b);
    CHECK(data_error_of([&] { hookfuse::data::read_idx_labels(p); }) ==
          p.string() + ": truncated: header declares 10 labels (10 bytes) but only 9 bytes follow");
  }
  SECTION("a header cut short") {
    const fs::path p = tmp / "short";
    Bytes b = idx_header(0x803, {1, 28});
    write_bytes(p, b);
    CHECK_THAT(data_error_of([&] { hookfuse::data::read_idx_images(p); }),
               Contains(p.string() + ": truncated: the IDX3 header needs 16 bytes") &&
                   Contains("has only 12 bytes"));
  }
  SECTION("extra bytes after the declared data") {
    const fs::path p = tmp / "long";
    Bytes b = idx_header(0x801, {3});
    b.resize(b.size() + 5, 1);
    write_bytes(p, b);
    CHECK_THAT(data_error_of([&] { hookfuse::data::read_idx_labels(p); }),
               Contains(p.string() + ": header declares 3 labels (3 bytes) but 5 bytes follow") &&
                   Contains("2 unexpected trailing bytes"));
  }
  SECTION("a header declaring more than 2^64 bytes") {
    const fs::path p = tmp / "huge";
    write_bytes(p, idx_header(0x803, {0xffffffffu, 0xffffffffu, 0xffffffffu}));
    CHECK_THAT(data_error_of([&] { hookfuse::data::read_idx_images(p); }),
               Contains(p.string()) && Contains("more than 2^64 bytes"));
  }
}

TEST_CASE("a truncated fixture file reports how much is left", "[data][idx][errors]") {
  HF_REQUIRE_FIXTURES(dir);
  TempDir tmp;
  Bytes b = read_bytes(*dir / kImages);
  b.resize(16 + 3 * 784 + 5);
  const fs::path p = tmp / "cut.gz";
  write_gzip(p, b);
  CHECK(data_error_of([&] { hookfuse::data::read_idx_images(p); }) ==
        p.string() +
            ": truncated: header declares 100 images of 28x28 (78400 bytes) but only "
            "2357 bytes follow");
}

/// gzip (RFC 1952, via zlib's deflate with a gzip wrapper) of `head` followed by `zeros` zero
/// bytes, compressed as it goes: zeros compress about 1000:1, so 300 MB make a ~300 KB file.
Bytes gzip_with_zeros(const Bytes& head, std::size_t zeros) {
  z_stream zs{};
  REQUIRE(deflateInit2(&zs, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 16 + MAX_WBITS, 9,
                       Z_DEFAULT_STRATEGY) == Z_OK);
  Bytes out;
  std::vector<unsigned char> chunk(1 << 16);
  auto pump = [&](const unsigned char* data, std::size_t n, int flush) {
    zs.next_in = const_cast<unsigned char*>(data);
    zs.avail_in = static_cast<uInt>(n);
    do {
      zs.next_out = chunk.data();
      zs.avail_out = static_cast<uInt>(chunk.size());
      const int rc = deflate(&zs, flush);
      REQUIRE((rc == Z_OK || rc == Z_STREAM_END || rc == Z_BUF_ERROR));
      out.insert(out.end(), chunk.data(), chunk.data() + (chunk.size() - zs.avail_out));
    } while (zs.avail_out == 0);
  };
  pump(head.data(), head.size(), Z_NO_FLUSH);
  const std::vector<unsigned char> block(1 << 20, 0);
  for (std::size_t left = zeros; left > 0;) {
    const std::size_t n = std::min(left, block.size());
    pump(block.data(), n, Z_NO_FLUSH);
    left -= n;
  }
  pump(nullptr, 0, Z_FINISH);
  deflateEnd(&zs);
  return out;
}

TEST_CASE("a small .gz inflating past its header stops at the declared size",
          "[data][idx][gzip][errors]") {
  // The header declares 2 images of 28x28: 2 * 784 = 1568 pixel bytes after its 16. The stream
  // goes on with 300 MB of zeros. The reader inflates the 16 header bytes, the 1568 declared
  // ones and one byte more to see that something follows: 16 + 1568 + 1 = 1585, and stops.
  TempDir tmp;
  const std::size_t kZeros = std::size_t{300} << 20;
  Bytes head = idx_header(0x803, {2, 28, 28});
  head.resize(16 + 1568, 9);
  static const Bytes gz = gzip_with_zeros(head, kZeros);  // once, not once per SECTION (~3 s)
  CHECK(gz.size() < kZeros / 500);  // the premise: a small file (about 300 KB)
  const fs::path p = tmp / "bomb-images-idx3-ubyte.gz";
  write_bytes(p, gz);
  CHECK(data_error_of([&] { hookfuse::data::read_idx_images(p); }) ==
        p.string() +
            ": header declares 2 images of 28x28 (1568 bytes) but the gzip stream holds more "
            "(unexpected trailing bytes; inflation stopped after 1585 bytes)");

  SECTION("labels: 10 declared, 8 + 10 + 1 = 19 bytes inflated (of 30 MB)") {
    Bytes labels = idx_header(0x801, {10});
    labels.resize(8 + 10, 3);
    const fs::path l = tmp / "bomb-labels-idx1-ubyte.gz";
    write_bytes(l, gzip_with_zeros(labels, kZeros / 10));
    CHECK(data_error_of([&] { hookfuse::data::read_idx_labels(l); }) ==
          l.string() +
              ": header declares 10 labels (10 bytes) but the gzip stream holds more "
              "(unexpected trailing bytes; inflation stopped after 19 bytes)");
  }
  SECTION("detail::gunzip with a cap inflates the cap and one byte more") {
    CHECK(data_error_of([&] { hookfuse::detail::gunzip(gz, "bomb.gz", 4096); }) ==
          "bomb.gz: the gzip stream inflates to more than 4096 bytes (inflation stopped after "
          "4097 bytes)");
  }
  SECTION("the same stream ending at the declared size reads") {
    const fs::path ok = tmp / "ok-images-idx3-ubyte.gz";
    write_bytes(ok, gzip_with_zeros(head, 0));
    const auto images = hookfuse::data::read_idx_images(ok);
    CHECK(images.count == 2);
    CHECK(images.pixels == Bytes(1568, 9));
  }
}

TEST_CASE("corrupt gzip data is reported as such", "[data][idx][gzip][errors]") {
  HF_REQUIRE_FIXTURES(dir);
  TempDir tmp;
  const Bytes gz = read_bytes(*dir / (std::string(kImages) + ".gz"));
  REQUIRE(gz.size() == 43031);
  SECTION("flipped bytes in the deflate stream") {
    Bytes bad = gz;
    for (std::size_t i = 1000; i < 1016; ++i) bad[i] = static_cast<std::uint8_t>(~bad[i]);
    write_bytes(tmp / "bad.gz", bad);
    CHECK_THAT(data_error_of([&] { hookfuse::data::read_idx_images(tmp / "bad.gz"); }),
               Contains((tmp / "bad.gz").string() + ": corrupt gzip data: ") &&
                   Contains("(zlib inflate error -3, at compressed byte "));
  }
  SECTION("a wrong CRC-32 in the trailer") {
    Bytes bad = gz;
    bad[gz.size() - 8] ^= 0x01;
    write_bytes(tmp / "crc.gz", bad);
    CHECK_THAT(data_error_of([&] { hookfuse::data::read_idx_images(tmp / "crc.gz"); }),
               Contains((tmp / "crc.gz").string() + ": corrupt gzip data: incorrect data check"));
  }
  SECTION("a .gz file cut short") {
    write_bytes(tmp / "cut.gz", Bytes(gz.begin(), gz.begin() + 20000));
    CHECK_THAT(data_error_of([&] { hookfuse::data::read_idx_images(tmp / "cut.gz"); }),
               Contains((tmp / "cut.gz").string() + ": corrupt gzip data: ") &&
                   Contains("truncated .gz file"));
  }
  SECTION("garbage after the gzip stream") {
    Bytes bad = gz;
    bad.insert(bad.end(), {'j', 'u', 'n', 'k'});
    write_bytes(tmp / "junk.gz", bad);
    CHECK_THAT(data_error_of([&] { hookfuse::data::read_idx_images(tmp / "junk.gz"); }),
               Contains((tmp / "junk.gz").string() + ": corrupt gzip data: 4 unexpected bytes"));
  }
  SECTION("only the gzip magic bytes") {
    write_bytes(tmp / "magic.gz", Bytes{0x1f, 0x8b});
    CHECK_THAT(data_error_of([&] { hookfuse::data::read_idx_labels(tmp / "magic.gz"); }),
               Contains((tmp / "magic.gz").string() + ": corrupt gzip data: "));
  }
}

TEST_CASE("load_idx_pair rejects a count mismatch naming both files", "[data][idx][errors]") {
  HF_REQUIRE_FIXTURES(dir);
  TempDir tmp;
  Bytes labels = read_bytes(*dir / kLabels);
  labels.pop_back();
  labels[7] = 99;  // header count 100 -> 99 (big-endian low byte)
  const fs::path lp = tmp / "labels99";
  write_bytes(lp, labels);
  const fs::path ip = *dir / kImages;
  CHECK(data_error_of([&] { hookfuse::data::load_idx_pair(ip, lp); }) ==
        ip.string() + ": 100 images but " + lp.string() +
            ": 99 labels (image/label count mismatch)");
}

namespace {

/// An IDX3 image file of `count` images of rows x cols (pixel values i % 256).
Bytes idx_images(std::uint32_t count, std::uint32_t rows, std::uint32_t cols) {
  Bytes b = idx_header(hookfuse::data::idx_images_magic, {count, rows, cols});
  for (std::size_t i = 0; i < std::size_t{count} * rows * cols; ++i)
    b.push_back(static_cast<std::uint8_t>(i % 256));
  return b;
}

/// An IDX1 label file holding `labels`.
Bytes idx_labels(const Bytes& labels) {
  Bytes b =
      idx_header(hookfuse::data::idx_labels_magic, {static_cast<std::uint32_t>(labels.size())});
  b.insert(b.end(), labels.begin(), labels.end());
  return b;
}

}  // namespace

TEST_CASE("load_idx_pair checks labels against num_classes, naming file and record",
          "[data][idx][errors]") {
  TempDir tmp;
  const fs::path ip = tmp / "images", lp = tmp / "labels";
  write_bytes(ip, idx_images(4, 2, 2));
  write_bytes(lp, idx_labels({1, 9, 12, 10}));
  const hookfuse::data::IdxExpect ten{.num_classes = 10};

  SECTION("the first label >= num_classes is reported by its record index in the file") {
    CHECK(data_error_of([&] { hookfuse::data::load_idx_pair(ip, lp, ten); }) ==
          lp.string() + ": record 2: label 12, expected 0..9 (num_classes 10)");
  }
  SECTION("the same inside a gzip file") {
    write_gzip(tmp / "labels.gz", idx_labels({0, 0, 0, 200}));
    CHECK(data_error_of([&] { hookfuse::data::load_idx_pair(ip, tmp / "labels.gz", ten); }) ==
          (tmp / "labels.gz").string() + ": record 3: label 200, expected 0..9 (num_classes 10)");
  }
  SECTION("a bound that admits them all, or none given, reads the file") {
    CHECK(hookfuse::data::load_idx_pair(ip, lp, {.num_classes = 13}).labels.labels ==
          Bytes{1, 9, 12, 10});
    CHECK(hookfuse::data::load_idx_pair(ip, lp).size() == 4);
  }
  SECTION("check_idx_labels on labels in memory") {
    hookfuse::data::IdxLabels labels{{0, 1, 2}};
    CHECK(data_error_of([&] {
            hookfuse::data::check_idx_labels(labels, "mem", {.num_classes = 2});
          }) == "mem: record 2: label 2, expected 0..1 (num_classes 2)");
  }
}

TEST_CASE("load_idx_pair checks the image size, naming the file and its dimensions",
          "[data][idx][errors]") {
  TempDir tmp;
  const fs::path ip = tmp / "images.gz", lp = tmp / "labels";
  write_gzip(ip, idx_images(2, 27, 28));
  write_bytes(lp, idx_labels({0, 1}));
  CHECK(data_error_of([&] {
          hookfuse::data::load_idx_pair(ip, lp, hookfuse::data::fashion_mnist_expect);
        }) == ip.string() + ": images of 27x28, expected 28x28 (header dimensions 1 and 2)");
  CHECK(data_error_of([&] { hookfuse::data::load_idx_pair(ip, lp, {.cols = 27}); }) ==
        ip.string() + ": images of 27x28, expected Nx27 (header dimensions 1 and 2)");
  CHECK(hookfuse::data::load_idx_pair(ip, lp, {.rows = 27, .cols = 28}).size() == 2);
}

TEST_CASE("an empty data set is refused when non_empty, naming the file", "[data][idx][errors]") {
  TempDir tmp;
  const fs::path ip = tmp / "images", lp = tmp / "labels";
  write_bytes(ip, idx_images(0, 28, 28));
  write_bytes(lp, idx_labels({}));
  CHECK(data_error_of([&] {
          hookfuse::data::load_idx_pair(ip, lp, hookfuse::data::fashion_mnist_expect);
        }) == ip.string() + ": 0 images, expected at least one (empty data set)");
  CHECK(data_error_of([&] {
          hookfuse::data::check_idx_labels(hookfuse::data::IdxLabels{}, lp, {.non_empty = true});
        }) == lp.string() + ": 0 labels, expected at least one (empty data set)");
  CHECK(hookfuse::data::load_idx_pair(ip, lp).size() == 0);  // allowed by default
}

TEST_CASE("load_fashion_mnist refuses other sizes, labels >= 10 and empty sets",
          "[data][idx][errors]") {
  TempDir tmp;
  const fs::path ip = tmp / "t10k-images-idx3-ubyte", lp = tmp / "t10k-labels-idx1-ubyte.gz";
  SECTION("a label of 10 in record 1") {
    write_bytes(ip, idx_images(3, 28, 28));
    write_gzip(lp, idx_labels({9, 10, 0}));
    CHECK(data_error_of([&] { hookfuse::data::load_fashion_mnist(tmp.path, Split::test); }) ==
          lp.string() + ": record 1: label 10, expected 0..9 (num_classes 10)");
  }
  SECTION("images of 28x27") {
    write_bytes(ip, idx_images(3, 28, 27));
    write_gzip(lp, idx_labels({9, 1, 0}));
    CHECK(data_error_of([&] { hookfuse::data::load_fashion_mnist(tmp.path, Split::test); }) ==
          ip.string() + ": images of 28x27, expected 28x28 (header dimensions 1 and 2)");
  }
  SECTION("zero records") {
    write_bytes(ip, idx_images(0, 28, 28));
    write_gzip(lp, idx_labels({}));
    CHECK(data_error_of([&] { hookfuse::data::load_fashion_mnist(tmp.path, Split::test); }) ==
          ip.string() + ": 0 images, expected at least one (empty data set)");
  }
  SECTION("well-formed small files load") {
    write_bytes(ip, idx_images(3, 28, 28));
    write_gzip(lp, idx_labels({9, 1, 0}));
    CHECK(hookfuse::data::load_fashion_mnist(tmp.path, Split::test).size() == 3);
  }
}

TEST_CASE("load_fashion_mnist finds raw or .gz files by split", "[data][idx]") {
  HF_REQUIRE_FIXTURES(dir);
  TempDir tmp;
  fs::copy_file(*dir / (std::string(kImages) + ".gz"), tmp / "t10k-images-idx3-ubyte.gz");
  fs::copy_file(*dir / kLabels, tmp / "t10k-labels-idx1-ubyte");

  const auto ds = hookfuse::data::load_fashion_mnist(tmp.path, Split::test);
  CHECK(ds.size() == 100);
  CHECK(ds.labels.labels[19] == 0);
  CHECK(sum(ds.images.pixels, 0, ds.images.pixels.size()) == 5854180);

  SECTION("the uncompressed file wins when both exist") {
    write_bytes(tmp / "t10k-labels-idx1-ubyte.gz", Bytes{0x1f, 0x8b, 0, 0});  // unreadable
    CHECK(hookfuse::data::load_fashion_mnist(tmp.path, Split::test).labels.labels ==
          ds.labels.labels);
  }
  SECTION("a missing split lists the names tried") {
    const std::string msg =
        data_error_of([&] { hookfuse::data::load_fashion_mnist(tmp.path, Split::train); });
    CHECK_THAT(msg, Contains((tmp / "train-images-idx3-ubyte").string()));
    CHECK_THAT(msg, Contains((tmp / "train-images-idx3-ubyte.gz").string()));
    CHECK_THAT(msg, Contains("dataset-fashion-mnist"));
  }
}

TEST_CASE("Debian's Fashion-MNIST loads with the known shapes and first labels",
          "[data][idx][debian]") {
  if (!fs::exists(kDebianDir / "train-images-idx3-ubyte.gz")) {
    HOOKFUSE_SKIP(kDebianDir << " not found (apt-get install dataset-fashion-mnist)");
  }
  // Expected values computed independently with python3:
  //   d = gzip.open('/usr/share/datasets/fashion-mnist/<split>-labels-idx1-ubyte.gz').read()
  //   list(d[8:18]), list(d[-3:]);  images: sum(d[16:16+784]), sum(d[-784:])
  const auto train = hookfuse::data::load_fashion_mnist(Split::train);
  CHECK(train.size() == 60000);
  CHECK(train.images.rows == 28);
  CHECK(train.images.cols == 28);
  CHECK(train.images.pixels.size() == 47040000);
  CHECK(Bytes(train.labels.labels.begin(), train.labels.labels.begin() + 10) ==
        Bytes{9, 0, 0, 3, 0, 2, 7, 2, 5, 5});
  CHECK(Bytes(train.labels.labels.end() - 3, train.labels.labels.end()) == Bytes{3, 0, 5});
  CHECK(sum(train.images.pixels, 0, 784) == 76247);
  CHECK(sum(train.images.pixels, train.images.pixels.size() - 784, 784) == 16684);

  const auto test = hookfuse::data::load_fashion_mnist(kDebianDir, Split::test);
  CHECK(test.size() == 10000);
  CHECK(test.images.rows == 28);
  CHECK(test.images.cols == 28);
  CHECK(Bytes(test.labels.labels.begin(), test.labels.labels.begin() + 10) ==
        Bytes{9, 2, 1, 1, 6, 1, 4, 6, 5, 7});
  CHECK(Bytes(test.labels.labels.end() - 3, test.labels.labels.end()) == Bytes{8, 1, 5});
  CHECK(sum(test.images.pixels, 0, 784) == 33456);
  CHECK(sum(test.images.pixels, test.images.pixels.size() - 784, 784) == 24390);

  // The fixture is the first 100 test examples.
  if (const auto dir = hookfuse_test::idx_fixtures()) {
    const auto fx = hookfuse::data::read_idx_images(*dir / kImages);
    CHECK(std::equal(fx.pixels.begin(), fx.pixels.end(), test.images.pixels.begin()));
  }
}
