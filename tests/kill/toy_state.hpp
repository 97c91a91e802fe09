// tests/kill/toy_state.hpp: a toy "training" state for the crash checker's own tests
// (test_saver.cpp): a few float and double vectors and an int64 global step, each a fixed
// function of the step, so a checkpoint's values can be checked from its global_step alone.
// (The crash test itself trains a real model: kill_model.hpp.)
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "../checkpoint_test_vars.hpp"
#include "checkpoint_check.hpp"

namespace hookfuse_test {

struct ToyState {
  std::vector<float> kernel = std::vector<float>(64 * 32);  // dense/kernel [64, 32]
  std::vector<float> bias = std::vector<float>(32);         // dense/bias [32]
  std::vector<double> scale = std::vector<double>(5);       // head/scale [5]
  std::int64_t global_step = 0;

  /// The state "training" reaches at `step` (integer arithmetic, then exact conversions).
  void set(std::int64_t step) {
    for (std::size_t i = 0; i < kernel.size(); ++i)
      kernel[i] = static_cast<float>((step * 31 + static_cast<std::int64_t>(i) * 7) % 1000) / 8.0f;
    for (std::size_t i = 0; i < bias.size(); ++i)
      bias[i] = -static_cast<float>(step % 4096) - static_cast<float>(i) / 4.0f;
    for (std::size_t i = 0; i < scale.size(); ++i)
      scale[i] = static_cast<double>(step) * 0.5 + static_cast<double>(i);
    global_step = step;
  }

  std::vector<TestVar> vars() {
    return {test_var("dense/kernel", {64, 32}, kernel), test_var("dense/bias", {32}, bias),
            test_var("head/scale", {5}, scale), test_var("global_step", global_step)};
  }

  /// The state as the checker compares it.
  ExpectedCheckpoint as_expected() const {
    ExpectedCheckpoint e;
    auto put = [&](const char* name, hookfuse::io::DataType dt, hookfuse::io::TensorShape shape,
                   const void* data, std::size_t bytes) {
      ExpectedTensor t{dt, std::move(shape), std::vector<std::byte>(bytes)};
      if (bytes != 0) std::memcpy(t.bytes.data(), data, bytes);
      e[name] = std::move(t);
    };
    using hookfuse::io::DataType;
    put("dense/kernel", DataType::DT_FLOAT, {64, 32}, kernel.data(), kernel.size() * sizeof(float));
    put("dense/bias", DataType::DT_FLOAT, {32}, bias.data(), bias.size() * sizeof(float));
    put("head/scale", DataType::DT_DOUBLE, {5}, scale.data(), scale.size() * sizeof(double));
    put("global_step", DataType::DT_INT64, {}, &global_step, sizeof global_step);
    return e;
  }

  static ExpectedCheckpoint expected_at(std::int64_t step) {
    ToyState m;
    m.set(step);
    return m.as_expected();
  }
};

}  // namespace hookfuse_test
