// hookfuse/optim/global_step.hpp: the training step counter (tf.compat.v1.train.get_or_create_global_step).
#pragma once

#include <cstdint>

namespace hookfuse {

/// The int64 count of training steps taken, like TensorFlow's `global_step` variable. Incremented
/// by one by every step of an optimizer's `minimize`; restored from checkpoints; fetched by hooks
/// under the name "global_step".
struct GlobalStep {
  std::int64_t value = 0;
};

}  // namespace hookfuse
