// hookfuse/io/errors.hpp: the exception types of the file-format layer, named after
// TensorFlow's tf.errors classes the same failures raise there.
#pragma once

#include <stdexcept>

namespace hookfuse::io {

/// A file is corrupt: a CRC does not match, a record or table is truncated, a proto field has
/// the wrong wire type, an offset points past the data (TensorFlow's DataLossError). The
/// message names the file, the record or tensor, and what was expected.
class DataLossError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// A file or a tensor that was asked for does not exist (TensorFlow's NotFoundError, as
/// raised by `tf.train.load_checkpoint` for a missing prefix or key).
class NotFoundError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// The operating system refused a read or write: unwritable directory, disk full, rename
/// failed (TensorFlow's PermissionDeniedError / ResourceExhaustedError / UnknownError from
/// the file system). The message names the path and the system's reason.
class IoError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace hookfuse::io
