// tests/io/checkpoint_compare.cpp: compares the variables of two checkpoints, for the example
// tests' shell checks (examples/tests.cmake: the Fashion-MNIST example on 2 MPI ranks against
// one process).
//
//   checkpoint_compare <A> <B> <tolerance>
//
// A and B: a checkpoint directory (its latest checkpoint, io::latest_checkpoint) or prefix.
// Every float and double tensor of either must be in both with the same shape; its difference
// is max |a - b| over max |b| (the largest difference relative to the largest value of B; max
// |a - b| itself when B is all zeros). Every int32 and int64 tensor in both (global_step) must
// be equal; one only in A or only in B (a hook's state) is listed and not compared.
// Prints one line per tensor and "max_relative_difference: <value>"; exit 0 when every float
// tensor is within <tolerance> (a non-negative number) and the integers are equal, 1 otherwise
// (with one "checkpoint_compare: ..." line on stderr naming the tensor or file), 2 on bad usage.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <hookfuse/io/checkpoint_reader.hpp>
#include <hookfuse/io/checkpoint_state.hpp>
#include <optional>
#include <string>
#include <vector>

namespace io = hookfuse::io;
namespace fs = std::filesystem;

namespace {

fs::path prefix_of(const fs::path& in) {
  if (!fs::is_directory(in)) return in;
  const std::optional<fs::path> latest = io::latest_checkpoint(in);
  if (!latest) throw std::runtime_error(in.string() + " holds no checkpoint");
  return *latest;
}

bool is_float(io::DataType t) {
  return t == io::DataType::DT_FLOAT || t == io::DataType::DT_DOUBLE;
}
bool is_integer(io::DataType t) {
  return t == io::DataType::DT_INT32 || t == io::DataType::DT_INT64;
}

/// max |a - b| / max |b| of a tensor read as double.
template <class T>
double relative_difference(const io::CheckpointReader& a, const io::CheckpointReader& b,
                           const std::string& name) {
  const std::vector<T> x = a.get_tensor<T>(name), y = b.get_tensor<T>(name);
  double diff = 0, scale = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double d = std::fabs(static_cast<double>(x[i]) - static_cast<double>(y[i]));
    diff = std::isnan(d) ? INFINITY : std::max(diff, d);
    scale = std::max(scale, std::fabs(static_cast<double>(y[i])));
  }
  return scale > 0 ? diff / scale : diff;
}

template <class T>
bool integers_equal(const io::CheckpointReader& a, const io::CheckpointReader& b,
                    const std::string& name) {
  return a.get_tensor<T>(name) == b.get_tensor<T>(name);
}

}  // namespace

int main(int argc, char** argv) try {
  char* end = nullptr;
  const double tolerance = argc == 4 ? std::strtod(argv[3], &end) : -1.0;
  if (argc != 4 || end == argv[3] || *end != '\0' || !(tolerance >= 0)) {
    std::fprintf(stderr, "usage: %s <checkpoint A> <checkpoint B> <tolerance, >= 0>\n", argv[0]);
    return 2;
  }
  const fs::path pa = prefix_of(argv[1]), pb = prefix_of(argv[2]);
  const io::CheckpointReader a(pa), b(pb);
  std::printf("A: %s\nB: %s\n", pa.c_str(), pb.c_str());
  const auto types_a = a.get_variable_to_dtype_map(), types_b = b.get_variable_to_dtype_map();
  const auto shapes_a = a.get_variable_to_shape_map(), shapes_b = b.get_variable_to_shape_map();
  int failures = 0, compared = 0;
  const auto fail = [&](const std::string& message) {
    std::fprintf(stderr, "checkpoint_compare: %s\n", message.c_str());
    ++failures;
  };
  for (const auto& [name, type] : types_a)
    if (!types_b.contains(name)) {
      if (is_float(type))
        fail("'" + name + "' is in A only");
      else
        std::printf("%s: in A only, not compared\n", name.c_str());
    }
  double worst = 0;
  for (const auto& [name, type] : types_b) {
    const auto it = types_a.find(name);
    if (it == types_a.end()) {
      if (is_float(type))
        fail("'" + name + "' is in B only");
      else
        std::printf("%s: in B only, not compared\n", name.c_str());
      continue;
    }
    if (it->second != type) {
      fail("'" + name + "' has dtype " + std::to_string(static_cast<int>(it->second)) +
           " in A and " + std::to_string(static_cast<int>(type)) + " in B");
      continue;
    }
    if (!(shapes_a.at(name) == shapes_b.at(name))) {
      fail("'" + name + "' has different shapes in A and B");
      continue;
    }
    if (is_float(type)) {
      const double d = type == io::DataType::DT_FLOAT ? relative_difference<float>(a, b, name)
                                                      : relative_difference<double>(a, b, name);
      std::printf("%s: relative difference %.3g\n", name.c_str(), d);
      if (!(d <= tolerance))
        fail("'" + name + "' differs by " + std::to_string(d) + " (relative), more than " +
             argv[3]);
      worst = std::max(worst, d);
      ++compared;
    } else if (is_integer(type)) {
      const bool equal = type == io::DataType::DT_INT32 ? integers_equal<std::int32_t>(a, b, name)
                                                        : integers_equal<std::int64_t>(a, b, name);
      std::printf("%s: %s\n", name.c_str(), equal ? "equal" : "DIFFERENT");
      if (!equal) fail("'" + name + "' differs");
    }
  }
  if (compared == 0) fail("no float tensor to compare");
  std::printf("max_relative_difference: %.3g over %d float tensors\n", worst, compared);
  return failures == 0 ? 0 : 1;
} catch (const std::exception& e) {
  std::fprintf(stderr, "checkpoint_compare: %s\n", e.what());
  return 1;
}
