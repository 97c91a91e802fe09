// expect: RequiredOption<T>::RequiredOption\(\) \[with U = void; T = bool\].*hookfuse: NumpyInputFn options: `[.]shuffle` is required
// NumpyInputFn options without `.shuffle`: TensorFlow's numpy_input_fn has no default for it, so
// leaving it out is a compile error with hookfuse's message. Control:
// tests/compile_ok/numpy_input_fn_without_shuffle.cpp (the same call with .shuffle = true).
#include <cstdint>
#include <hookfuse/data/input_fn.hpp>
#include <vector>

int main() {
  const std::vector<float> x(8, 1.0f);
  hookfuse::data::NumpyInputFn<float> input(x.data(), 4, 2, {.batch_size = 2});
  return input.next() ? 0 : 1;
}
