// expect: hookfuse: summary::scalar takes a \[1, 1\] tensor
// A scalar summary of a [2, 3] Variable: a compile error (TF's tf.summary.scalar raises
// ValueError for a tensor that is not a scalar); a histogram takes it.
// Control: tests/compile_ok/summary_scalar_of_matrix.cpp (summary::histogram instead).
#include <hookfuse/hookfuse.hpp>

using namespace hookfuse;

int main() {
  Variable<"w", float, 2, 3> w;
  auto s = summary::scalar<"w">(w);
  (void)s;
}
