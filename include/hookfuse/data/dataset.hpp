// hookfuse/data/dataset.hpp: in-memory image/label data sets (IdxImages, IdxLabels, Dataset).
//
// Plain aggregates with no I/O, so the input function can use them without pulling in zlib;
// `idx.hpp` fills them from files.
#pragma once

#include <cstdint>
#include <vector>

namespace hookfuse::data {

/// Images as stored in an IDX3 unsigned-byte file (MNIST layout), kept as uint8 (0..255).
/// `pixels` holds count*rows*cols bytes, sample-major then row-major: pixel (r, c) of image i
/// is `pixels[(i * rows + r) * cols + c]`. Viewed as a matrix, each image is one row of
/// `features()` = rows*cols columns (rows are the batch).
struct IdxImages {
  std::int64_t count = 0;  ///< number of images (IDX dimension 0)
  std::int64_t rows = 0;   ///< pixel rows per image (IDX dimension 1), 28 for (Fashion-)MNIST
  std::int64_t cols = 0;   ///< pixel columns per image (IDX dimension 2), 28 for (Fashion-)MNIST
  std::vector<std::uint8_t> pixels;

  /// Values per image when flattened to one feature row: rows*cols (784 for 28x28).
  std::int64_t features() const { return rows * cols; }
};

/// Labels as stored in an IDX1 unsigned-byte file: one class index per example (0..9 for
/// (Fashion-)MNIST; the reader does not restrict the range, load_idx_pair checks it against
/// IdxExpect::num_classes).
struct IdxLabels {
  std::vector<std::uint8_t> labels;

  std::int64_t count() const { return static_cast<std::int64_t>(labels.size()); }
};

/// Matching images and labels: example i is image i with label `labels.labels[i]`.
/// `load_idx_pair` guarantees `images.count == labels.count()`.
struct Dataset {
  IdxImages images;
  IdxLabels labels;

  std::int64_t size() const { return images.count; }
};

}  // namespace hookfuse::data
