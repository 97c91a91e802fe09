// tests/compile_ok/numpy_input_fn_without_shuffle.cpp: the compiling twin of
// tests/compile_fail/numpy_input_fn_without_shuffle.cpp: `.shuffle` is given.
#include <cstdint>
#include <hookfuse/data/input_fn.hpp>
#include <vector>

int main() {
  const std::vector<float> x(8, 1.0f);
  hookfuse::data::NumpyInputFn<float> input(x.data(), 4, 2, {.batch_size = 2, .shuffle = true});
  return input.next() ? 0 : 1;
}
