// expect: piecewise_constant needs one more value than boundaries
// piecewise_constant with as many values as boundaries (TensorFlow: ValueError, values must
// have one more element than boundaries) is a compile error saying so.
// Control: tests/compile_ok/piecewise_constant_sizes.cpp (three values for two boundaries).
#include <hookfuse/optim/schedules.hpp>

int main() {
  const auto s = hookfuse::piecewise_constant({100, 200}, {0.1, 0.01});
  return s(0) > 0.0 ? 0 : 1;
}
