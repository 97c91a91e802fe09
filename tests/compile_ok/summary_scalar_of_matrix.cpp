// The compiling twin of tests/compile_fail/summary_scalar_of_matrix.cpp: a histogram of a
// [2, 3] Variable is fine.
#include <hookfuse/hookfuse.hpp>

using namespace hookfuse;

int main() {
  Variable<"w", float, 2, 3> w;
  auto s = summary::histogram<"w">(w);
  (void)s;
}
