// Control for tests/compile_fail/piecewise_constant_sizes.cpp: two boundaries, three values.
#include <hookfuse/optim/schedules.hpp>

int main() {
  const auto s = hookfuse::piecewise_constant({100, 200}, {0.1, 0.01, 0.001});
  return s(0) > 0.0 ? 0 : 1;
}
