// hookfuse/data/idx.hpp: IDX file reader (MNIST / Fashion-MNIST layout), raw or gzip-compressed.
//
// IDX layout: a big-endian int32 magic number 00 00 <type> <ndim> (type 0x08 = unsigned byte),
// then <ndim> big-endian uint32 dimension sizes, then the data in C order. Images are
// 0x00000803 (count, rows, cols); labels are 0x00000801 (count). A file starting with the gzip
// magic bytes 1f 8b is decompressed with zlib first, so `train-images-idx3-ubyte.gz` and the
// uncompressed `train-images-idx3-ubyte` read the same. Link with -lz.
//
// Mirrors the loaders behind `tf.keras.datasets.fashion_mnist.load_data()` (which returns uint8
// arrays of shape (60000, 28, 28) / (10000, 28, 28) and uint8 labels) without the download:
// point `load_fashion_mnist` at a directory holding the four files, e.g. the one installed by
// the Debian package `dataset-fashion-mnist`.
#pragma once

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "hookfuse/config.hpp"
#include "hookfuse/data/dataset.hpp"
#include "hookfuse/data/errors.hpp"
#include "hookfuse/data/gzip.hpp"

namespace hookfuse::data {

/// Where Debian's `dataset-fashion-mnist` package installs the four Fashion-MNIST .gz files.
inline constexpr const char* default_fashion_mnist_dir = "/usr/share/datasets/fashion-mnist";

/// IDX magic numbers of the two unsigned-byte layouts read here.
inline constexpr std::uint32_t idx_images_magic = 0x00000803;  // 2051: u8, 3 dims
inline constexpr std::uint32_t idx_labels_magic = 0x00000801;  // 2049: u8, 1 dim

/// Which half of Fashion-MNIST to load: `train` (60000 examples) or `test` ("t10k", 10000).
enum class Split { train, test };

}  // namespace hookfuse::data

namespace hookfuse::detail {

inline std::string hex32(std::uint32_t v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%08x", static_cast<unsigned>(v));
  return buf;
}

inline std::uint32_t read_be32(const std::uint8_t* p) {
  return (std::uint32_t{p[0]} << 24) | (std::uint32_t{p[1]} << 16) | (std::uint32_t{p[2]} << 8) |
         std::uint32_t{p[3]};
}

inline std::string missing_file_hint() {
  return std::string(
             "the Debian package `dataset-fashion-mnist` provides the Fashion-MNIST IDX "
             "files in ") +
         data::default_fashion_mnist_dir + " (apt-get install dataset-fashion-mnist)";
}

/// The bytes of `path`, as stored (gzip or not). Throws DataError naming the path when the file
/// is missing, not a regular file or unreadable.
inline std::vector<std::uint8_t> read_file_bytes(const std::filesystem::path& path) {
  using data::DataError;
  const std::string name = path.string();
  std::error_code ec;
  const auto st = std::filesystem::status(path, ec);
  if (!std::filesystem::exists(st)) {
    fail<DataError>(name + ": file not found; " + missing_file_hint());
  }
  if (!std::filesystem::is_regular_file(st)) {  // checked before open: a FIFO never blocks it
    const auto type = st.type();
    const char* what = type == std::filesystem::file_type::fifo        ? "is a FIFO, "
                       : type == std::filesystem::file_type::directory ? "is a directory, "
                       : type == std::filesystem::file_type::character ? "is a character device, "
                       : type == std::filesystem::file_type::block     ? "is a block device, "
                       : type == std::filesystem::file_type::socket    ? "is a socket, "
                                                                       : "";
    fail<DataError>(name + ": " + what + "not a regular file, expected an IDX file (raw or .gz)");
  }
  std::ifstream file(path, std::ios::binary);
  if (!file) fail<DataError>(name + ": cannot open for reading: " + std::strerror(errno));

  std::vector<std::uint8_t> bytes;
  const auto size = std::filesystem::file_size(path, ec);
  if (!ec) bytes.reserve(static_cast<std::size_t>(size));
  char buf[1 << 16];
  while (file.read(buf, sizeof buf) || file.gcount() > 0) {
    const auto* p = reinterpret_cast<const std::uint8_t*>(buf);
    bytes.insert(bytes.end(), p, p + file.gcount());
  }
  if (file.bad()) {
    fail<DataError>(name + ": read error after " + std::to_string(bytes.size()) + " bytes: " +
                    std::strerror(errno));
  }
  return bytes;
}

/// Checks the magic number at the start of `bytes`; `what` describes the expected layout.
inline void check_idx_magic(const std::vector<std::uint8_t>& bytes, const std::string& name,
                            std::uint32_t expected, const char* what) {
  using data::DataError;
  if (bytes.size() < 4) {
    fail<DataError>(name + ": truncated: the file has " + std::to_string(bytes.size()) +
                    " bytes, too few for the IDX magic number (expected " + hex32(expected) + ", " +
                    what + ")");
  }
  const std::uint32_t magic = read_be32(bytes.data());
  if (magic == expected) return;
  std::string hint;
  if (magic == data::idx_labels_magic) hint = "; this is an IDX1 label file";
  if (magic == data::idx_images_magic) hint = "; this is an IDX3 image file";
  if ((magic >> 16) != 0) hint = "; not an IDX file (the first two bytes must be 00 00)";
  fail<DataError>(name + ": magic number " + hex32(magic) + ", expected " + hex32(expected) + " (" +
                  what + ")" + hint);
}

/// Checks that exactly `declared` data bytes follow a header of `header` bytes.
/// `declares` describes the header, e.g. "60000 images of 28x28".
inline void check_idx_payload(const std::vector<std::uint8_t>& bytes, const std::string& name,
                              std::size_t header, std::uint64_t declared,
                              const std::string& declares) {
  using data::DataError;
  const std::uint64_t follow = bytes.size() - header;
  if (declared > follow) {
    fail<DataError>(name + ": truncated: header declares " + declares + " (" +
                    std::to_string(declared) + " bytes) but only " + std::to_string(follow) +
                    " bytes follow");
  }
  if (declared < follow) {
    fail<DataError>(name + ": header declares " + declares + " (" + std::to_string(declared) +
                    " bytes) but " + std::to_string(follow) + " bytes follow (" +
                    std::to_string(follow - declared) + " unexpected trailing bytes)");
  }
}

/// What an IDX header declares: the number of data bytes after it, and in words for messages
/// ("60000 images of 28x28").
struct IdxPayload {
  std::uint64_t bytes;
  std::string declares;
};

/// The bytes of the IDX file `path` (header, then data), raw or gzip-compressed, checked against
/// the header: magic number `magic` (`what` describes it), a header of `header` bytes
/// (`header_needs` says why, for the message), and exactly the number of data bytes that
/// `declare(header bytes)` returns. A .gz file is inflated only that far, plus one byte to see
/// whether more follows: a small .gz that inflates to far more than its header declares fails
/// after that many bytes, not after inflating all of it. Throws DataError naming the path.
template <class Declare>
std::vector<std::uint8_t> read_idx_file(const std::filesystem::path& path, std::uint32_t magic,
                                        const char* what, std::size_t header,
                                        const char* header_needs, Declare&& declare) {
  using data::DataError;
  const std::string name = path.string();
  auto check_header = [&](const std::vector<std::uint8_t>& bytes) {
    check_idx_magic(bytes, name, magic, what);
    if (bytes.size() < header) {
      fail<DataError>(name + ": truncated: " + header_needs + " but the file has only " +
                      std::to_string(bytes.size()) + " bytes");
    }
  };

  std::vector<std::uint8_t> file = read_file_bytes(path);
  if (!is_gzip(file)) {
    check_header(file);
    const IdxPayload payload = declare(file.data());
    check_idx_payload(file, name, header, payload.bytes, payload.declares);
    return file;
  }

  GzipInflater inflater(file, name);
  std::vector<std::uint8_t> bytes(header);
  bytes.resize(inflater.read(bytes.data(), header));
  check_header(bytes);
  const IdxPayload payload = declare(bytes.data());
  // Inflate the declared data, growing the buffer as it comes (a header may declare far more
  // than the stream holds), then probe for one byte more.
  std::uint64_t have = 0;
  while (have < payload.bytes) {
    const std::uint64_t step =
        std::min<std::uint64_t>(payload.bytes - have, std::max<std::uint64_t>(have, 1 << 20));
    if (step > SIZE_MAX - bytes.size()) break;  // cannot be held in memory: reported below
    const std::size_t at = bytes.size();
    bytes.resize(at + static_cast<std::size_t>(step));
    const std::size_t got = inflater.read(bytes.data() + at, static_cast<std::size_t>(step));
    bytes.resize(at + got);
    have += got;
    if (got < step) break;  // the stream has ended
  }
  if (have == payload.bytes) {
    std::uint8_t probe = 0;
    if (inflater.read(&probe, 1) != 0) {
      fail<DataError>(name + ": header declares " + payload.declares + " (" +
                      std::to_string(payload.bytes) + " bytes) but the gzip stream holds more " +
                      "(unexpected trailing bytes; inflation stopped after " +
                      std::to_string(inflater.total_out()) + " bytes)");
    }
  }
  check_idx_payload(bytes, name, header, payload.bytes, payload.declares);
  return bytes;
}

}  // namespace hookfuse::detail

namespace hookfuse::data {

/// Reads an IDX3 unsigned-byte image file (magic 0x00000803), raw or gzip-compressed.
/// Returns count x rows x cols uint8 pixels, sample-major and row-major (see IdxImages).
/// Throws DataError, the message naming the path: file not found (with a pointer to the Debian
/// package `dataset-fashion-mnist`), not a regular file, unreadable, corrupt gzip, wrong magic
/// number, header shorter than 16 bytes, fewer pixel bytes than the header declares
/// ("truncated: header declares 60000 images of 28x28 (47040000 bytes) but only N bytes
/// follow") or extra bytes after them. A .gz file is inflated no further than the header
/// declares plus one byte ("... but the gzip stream holds more (unexpected trailing bytes;
/// inflation stopped after N bytes)"), so a small file cannot make the reader inflate gigabytes.
inline IdxImages read_idx_images(const std::filesystem::path& path) {
  std::uint32_t count = 0, rows = 0, cols = 0;
  std::vector<std::uint8_t> bytes = hookfuse::detail::read_idx_file(
      path, idx_images_magic, "IDX3 unsigned-byte images", 16,
      "the IDX3 header needs 16 bytes (magic and 3 dimensions)", [&](const std::uint8_t* header) {
        count = hookfuse::detail::read_be32(header + 4);
        rows = hookfuse::detail::read_be32(header + 8);
        cols = hookfuse::detail::read_be32(header + 12);
        std::string declares = std::to_string(count) + " images of " + std::to_string(rows) + "x" +
                               std::to_string(cols);
        // rows*cols < 2^64 always; count*(rows*cols) may not be, and then it fits in no file.
        const std::uint64_t per_image = std::uint64_t{rows} * cols;
        if (per_image != 0 && count > UINT64_MAX / per_image) {
          hookfuse::detail::fail<DataError>(path.string() + ": header declares " + declares +
                                            ", more than 2^64 bytes of pixels");
        }
        return hookfuse::detail::IdxPayload{count * per_image, std::move(declares)};
      });
  IdxImages images;
  images.count = count;
  images.rows = rows;
  images.cols = cols;
  // Drop the header in place (a memmove) rather than copying tens of MB into a new vector.
  bytes.erase(bytes.begin(), bytes.begin() + 16);
  images.pixels = std::move(bytes);
  return images;
}

/// Reads an IDX1 unsigned-byte label file (magic 0x00000801), raw or gzip-compressed.
/// Throws DataError like read_idx_images ("truncated: header declares 60000 labels (60000
/// bytes) but only N bytes follow", wrong magic, missing file, ...).
inline IdxLabels read_idx_labels(const std::filesystem::path& path) {
  std::vector<std::uint8_t> bytes = hookfuse::detail::read_idx_file(
      path, idx_labels_magic, "IDX1 unsigned-byte labels", 8,
      "the IDX1 header needs 8 bytes (magic and 1 dimension)", [](const std::uint8_t* header) {
        const std::uint32_t count = hookfuse::detail::read_be32(header + 4);
        return hookfuse::detail::IdxPayload{count, std::to_string(count) + " labels"};
      });
  IdxLabels labels;
  bytes.erase(bytes.begin(), bytes.begin() + 8);
  labels.labels = std::move(bytes);
  return labels;
}

/// What a data set must hold beyond two well-formed IDX files of equal count, checked by
/// load_idx_pair. Zero (false) leaves the corresponding property unchecked.
struct IdxExpect {
  std::int64_t rows = 0;         ///< pixel rows per image (IDX dimension 1), e.g. 28
  std::int64_t cols = 0;         ///< pixel columns per image (IDX dimension 2), e.g. 28
  std::int64_t num_classes = 0;  ///< every label is < num_classes, e.g. 10
  bool non_empty = false;        ///< at least one example
};

/// Fashion-MNIST's (and MNIST's) shape: at least one 28x28 image, labels 0..9.
inline constexpr IdxExpect fashion_mnist_expect{
    .rows = 28, .cols = 28, .num_classes = 10, .non_empty = true};

/// Checks `images` (read from `path`) against expect.rows, expect.cols and expect.non_empty.
/// Throws DataError naming the path and what was expected vs found: "<path>: images of 27x28,
/// expected 28x28" or "<path>: 0 images, expected at least one (empty data set)".
inline void check_idx_images(const IdxImages& images, const std::filesystem::path& path,
                             const IdxExpect& expect) {
  if ((expect.rows != 0 && images.rows != expect.rows) ||
      (expect.cols != 0 && images.cols != expect.cols)) {
    const auto dim = [](std::int64_t v) { return v != 0 ? std::to_string(v) : std::string("N"); };
    hookfuse::detail::fail<DataError>(path.string() + ": images of " + std::to_string(images.rows) +
                                      "x" + std::to_string(images.cols) + ", expected " +
                                      dim(expect.rows) + "x" + dim(expect.cols) +
                                      " (header dimensions 1 and 2)");
  }
  if (expect.non_empty && images.count == 0) {
    hookfuse::detail::fail<DataError>(path.string() +
                                      ": 0 images, expected at least one (empty data set)");
  }
}

/// Checks `labels` (read from `path`) against expect.num_classes and expect.non_empty. Throws
/// DataError naming the path, the first offending record (zero-based, in file order) and the
/// bound: "<path>: record 17: label 12, expected 0..9 (num_classes 10)", or "<path>: 0 labels,
/// expected at least one (empty data set)".
inline void check_idx_labels(const IdxLabels& labels, const std::filesystem::path& path,
                             const IdxExpect& expect) {
  if (expect.num_classes > 0) {
    const auto& v = labels.labels;
    const auto bad = std::find_if(
        v.begin(), v.end(), [&](std::uint8_t l) { return std::int64_t{l} >= expect.num_classes; });
    if (bad != v.end()) {
      hookfuse::detail::fail<DataError>(
          path.string() + ": record " + std::to_string(bad - v.begin()) + ": label " +
          std::to_string(int{*bad}) + ", expected 0.." + std::to_string(expect.num_classes - 1) +
          " (num_classes " + std::to_string(expect.num_classes) + ")");
    }
  }
  if (expect.non_empty && labels.count() == 0) {
    hookfuse::detail::fail<DataError>(path.string() +
                                      ": 0 labels, expected at least one (empty data set)");
  }
}

/// Reads an image file and its label file and checks they hold the same number of examples,
/// then checks them against `expect` (check_idx_images, check_idx_labels; by default nothing
/// more). Throws DataError from either reader or check, or on a count mismatch naming both
/// paths and counts: "<images>: 100 images but <labels>: 99 labels (image/label count
/// mismatch)".
inline Dataset load_idx_pair(const std::filesystem::path& images_path,
                             const std::filesystem::path& labels_path,
                             const IdxExpect& expect = {}) {
  Dataset ds{read_idx_images(images_path), read_idx_labels(labels_path)};
  check_idx_images(ds.images, images_path, expect);
  if (ds.images.count != ds.labels.count()) {
    hookfuse::detail::fail<DataError>(
        images_path.string() + ": " + std::to_string(ds.images.count) + " images but " +
        labels_path.string() + ": " + std::to_string(ds.labels.count()) +
        " labels (image/label count mismatch)");
  }
  check_idx_labels(ds.labels, labels_path, expect);
  return ds;
}

/// Loads one split of Fashion-MNIST from `dir`: `train-{images-idx3,labels-idx1}-ubyte` or
/// `t10k-...` (Split::test), each either uncompressed or with a `.gz` suffix. When both forms
/// exist the uncompressed file is used (no decompression needed). Train is 60000 images of
/// 28x28, test 10000. Throws DataError when a file is missing (listing every name tried and
/// the Debian package `dataset-fashion-mnist`), or as load_idx_pair with fashion_mnist_expect:
/// images not 28x28, no examples, or a label outside 0..9 (naming the file and the record).
/// Mirrors `tf.keras.datasets.fashion_mnist.load_data()` without the download.
inline Dataset load_fashion_mnist(const std::filesystem::path& dir, Split split) {
  const std::string prefix = split == Split::train ? "train" : "t10k";
  auto find = [&](const std::string& stem, const char* what) {
    std::filesystem::path raw = dir / stem;
    std::filesystem::path gz = dir / (stem + ".gz");
    std::error_code ec;
    if (std::filesystem::exists(raw, ec)) return raw;
    if (std::filesystem::exists(gz, ec)) return gz;
    hookfuse::detail::fail<DataError>("Fashion-MNIST " + prefix + " " + what +
                                      " not found: tried " + raw.string() + " and " + gz.string() +
                                      "; " + hookfuse::detail::missing_file_hint());
  };
  const auto images = find(prefix + "-images-idx3-ubyte", "images");
  const auto labels = find(prefix + "-labels-idx1-ubyte", "labels");
  return load_idx_pair(images, labels, fashion_mnist_expect);
}

/// load_fashion_mnist(default_fashion_mnist_dir, split): the Debian package's location.
inline Dataset load_fashion_mnist(Split split) {
  return load_fashion_mnist(default_fashion_mnist_dir, split);
}

}  // namespace hookfuse::data
