// hookfuse/autodiff/errors.hpp: the errors of the autodiff layer (ShapeError,
// InvalidArgumentError), and how a Shape prints in their messages. The errors shared by every
// layer (ValueError, RuntimeError) are in hookfuse/errors.hpp.
#pragma once

#include <stdexcept>

#include "hookfuse/autodiff/storage.hpp"
#include "hookfuse/detail/format.hpp"

namespace hookfuse {

/// Thrown at bind time when runtime shapes do not fit an operation, by `feed` when an input does
/// not fit its placeholder, and before a forward pass (or a fetch) that would read a placeholder
/// no one fed, or placeholders fed with different row counts (TensorFlow's InvalidArgumentError
/// "You must feed a value for placeholder tensor ..."). The message names the op or placeholders
/// and the shapes.
struct ShapeError : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

/// Thrown when a label is outside [0, num_classes) (TensorFlow: InvalidArgumentError).
struct InvalidArgumentError : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

namespace detail {

/// "[rows, cols]".
inline ErrorMessage& operator<<(ErrorMessage& m, Shape s) {
  return m << "[" << s.rows << ", " << s.cols << "]";
}

}  // namespace detail
}  // namespace hookfuse
