// The compiling twin of tests/compile_fail/bundle_writer_add_list.cpp: the same elements in a
// std::vector, a std::array and a C array are contiguous ranges.
#include <hookfuse/hookfuse.hpp>

#include <array>
#include <vector>

int main() {
  hookfuse::io::BundleWriter writer("model.ckpt");
  const std::vector<float> values{1.0f, 2.0f, 3.0f};
  const std::array<double, 2> doubles{1.0, 2.0};
  const std::int64_t steps[1] = {7};
  writer.add("w", {3}, values);
  writer.add("d", {2}, doubles);
  writer.add("global_step", {}, steps);
}
