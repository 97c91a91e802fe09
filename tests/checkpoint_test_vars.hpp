// tests/checkpoint_test_vars.hpp: a variable descriptor shaped as the session's
// CheckpointVariable (name, hookfuse::DType, TensorFlow shape with dims(), data pointer), for
// the Saver and init_from_checkpoint tests and the kill-test programs.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <hookfuse/hooks/session_run_hook.hpp>
#include <initializer_list>
#include <iterator>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace hookfuse_test {

/// A TensorFlow shape of rank 0 to 4, as the session's TensorShape: dims() is the span.
struct TestShape {
  int rank = 0;
  std::array<std::int64_t, 4> dim_sizes{};
  TestShape() = default;
  TestShape(std::initializer_list<std::int64_t> dims) : rank(static_cast<int>(dims.size())) {
    std::size_t i = 0;
    for (const auto d : dims) dim_sizes[i++] = d;
  }
  [[nodiscard]] std::span<const std::int64_t> dims() const {
    return {dim_sizes.data(), static_cast<std::size_t>(rank)};
  }
};

/// A variable descriptor: what the Saver reads and restores through.
struct TestVar {
  std::string_view name;
  hookfuse::DType dtype = hookfuse::DType::float32;
  TestShape shape;
  void* data = nullptr;
};

template <class T>
TestVar test_var(std::string_view name, TestShape shape, std::vector<T>& values) {
  return {name, hookfuse::detail::dtype_of<T>(), shape, static_cast<void*>(values.data())};
}

inline TestVar test_var(std::string_view name, std::int64_t& scalar) {
  return {name, hookfuse::DType::int64, TestShape{}, static_cast<void*>(&scalar)};
}

/// A file's bytes as text ("" when it does not exist).
inline std::string read_text(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace hookfuse_test
