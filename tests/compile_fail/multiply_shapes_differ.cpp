// expect: (error: invalid application of 'sizeof' to incomplete type 'hookfuse::compile_error<hookfuse::fixed_string<[0-9]+>{"multiply \(a \* b\) of shapes \[\?, 3\] and \[1, 1\]: `\*` of two tensors is elementwise and needs one shape|implicit instantiation of undefined template 'hookfuse::compile_error<.*check_operand_dims<hookfuse::detail::CwiseMulOp)
// A [?, 3] tensor times a [1, 1] Variable (a learnable scalar): `*` of two operands is
// elementwise, of one shape; the first error names the operation, both shapes and the rule.
// Control: tests/compile_ok/multiply_shapes_differ.cpp (a number, not a tensor).
#include <hookfuse/hookfuse.hpp>

using namespace hookfuse;

int main() {
  Placeholder<"x", float, 3> x;
  Variable<"s", float, 1, 1> s;
  auto g = bind(4, named<"loss">(reduce_mean(x * s)));
  return static_cast<int>(g.forward());
}
