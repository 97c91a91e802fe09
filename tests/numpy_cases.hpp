// tests/numpy_cases.hpp: one case of a numpy-printed cases file (numpy_str/cases.json in the
// shared fixtures, tests/numpy_suppress/cases.json) decoded into the TensorValue a session would
// hold: float32/float64 from the hex digits of their IEEE bits, integers as JSON integers,
// row-major with their `shape` ([] for a scalar). Used by test_numpy_str and test_numpy_suppress.
#pragma once

#include <bit>
#include <catch2/catch.hpp>
#include <cstddef>
#include <cstdint>
#include <hookfuse/hookfuse.hpp>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace hookfuse_test {

/// A case's value stored as a session stores fetched tensors: row-major [rows, cols].
struct Stored {
  std::vector<float> f32;
  std::vector<double> f64;
  std::vector<std::int32_t> i32;
  std::vector<std::int64_t> i64;
  hookfuse::TensorValue value;
  int rank = 0;
};

inline Stored decode(const nlohmann::json& c) {
  Stored s;
  const std::string dtype = c.at("dtype");
  const auto& shape = c.at("shape");
  s.rank = static_cast<int>(shape.size());
  REQUIRE(s.rank <= 2);
  const Eigen::Index rows = s.rank == 2 ? shape[0].get<Eigen::Index>() : 1;
  const Eigen::Index cols =
      s.rank == 0 ? 1 : shape[static_cast<std::size_t>(s.rank - 1)].get<Eigen::Index>();
  for (const auto& v : c.at("values")) {
    if (dtype == "float32") {
      s.f32.push_back(std::bit_cast<float>(
          static_cast<std::uint32_t>(std::stoul(v.get<std::string>(), nullptr, 16))));
    } else if (dtype == "float64") {
      s.f64.push_back(std::bit_cast<double>(
          static_cast<std::uint64_t>(std::stoull(v.get<std::string>(), nullptr, 16))));
    } else if (dtype == "int32") {
      s.i32.push_back(v.get<std::int32_t>());
    } else if (dtype == "int64") {
      s.i64.push_back(v.get<std::int64_t>());
    } else {
      FAIL("unknown dtype " << dtype);
    }
  }
  const void* data = nullptr;
  hookfuse::DType dt = hookfuse::DType::float32;
  std::size_t n = 0;
  if (dtype == "float32") data = s.f32.data(), dt = hookfuse::DType::float32, n = s.f32.size();
  if (dtype == "float64") data = s.f64.data(), dt = hookfuse::DType::float64, n = s.f64.size();
  if (dtype == "int32") data = s.i32.data(), dt = hookfuse::DType::int32, n = s.i32.size();
  if (dtype == "int64") data = s.i64.data(), dt = hookfuse::DType::int64, n = s.i64.size();
  REQUIRE(n == static_cast<std::size_t>(rows * cols));
  s.value = hookfuse::TensorValue{data, rows, cols, cols, 1, dt};
  return s;
}

}  // namespace hookfuse_test
