// expect: (error: invalid application of 'sizeof' to incomplete type 'hookfuse::compile_error<hookfuse::fixed_string<[0-9]+>{"feed of placeholder `x`: the data is float32 \(float\), the placeholder is float64 \(double\); convert the data|implicit instantiation of undefined template 'hookfuse::compile_error<.*check_feed_scalar<.*double, float>)
// float data fed to a double placeholder: a compile error naming the placeholder "x", its
// scalar (double) and the data's (float), in its first error line, not a bitwise
// reinterpretation. Control: tests/compile_ok/feed_float_into_double.cpp (the data is double).
#include <hookfuse/hookfuse.hpp>
#include <vector>

using namespace hookfuse;

int main() {
  Placeholder<"x", double, 3> x;
  Variable<"w", double, 3, 1> w;
  auto g = bind(4, named<"loss">(reduce_mean(matmul(x, w))));
  std::vector<float> data(4 * 3, 1.0f);
  g.feed<"x">(data.data(), 4, 3);
  return static_cast<int>(g.forward());
}
