// hookfuse/data/errors.hpp: the exception types of the data layer (DataError, OutOfRangeError).
#pragma once

#include <stdexcept>
#include <string>

namespace hookfuse::data {

/// A data file could not be used: missing, unreadable, wrong IDX magic number, truncated,
/// corrupt gzip stream, or two files that do not belong together. The message always names
/// the path, the field at fault and what was expected, so it can be shown to a user as is.
class DataError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// End of input, as TensorFlow's `tf.errors.OutOfRangeError` ("End of sequence") raised by an
/// exhausted `numpy_input_fn` / `tf.data` iterator. The main path is `NumpyInputFn::next()`
/// returning false; this type serves callers that prefer `get_next()`, which throws it.
class OutOfRangeError : public std::runtime_error {
 public:
  OutOfRangeError() : std::runtime_error("End of sequence") {}
  explicit OutOfRangeError(const std::string& what) : std::runtime_error(what) {}
};

}  // namespace hookfuse::data
