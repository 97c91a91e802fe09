// expect: check_feed_scalar\(\) \[with [^;]*PlaceholderName = hookfuse::fixed_string<2>{"x"}; PlaceholderScalar = double; DataScalar = float\].*hookfuse: feed: the data's scalar type is not the placeholder's
// float data fed to a double placeholder: a compile error naming the placeholder "x", its
// scalar (double) and the data's (float), with hookfuse's message, not a bitwise
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
