// expect: (error: invalid application of 'sizeof' to incomplete type 'hookfuse::compile_error<hookfuse::fixed_string<[0-9]+>{"graph\.compute<name>\(\) asks for `logit`, which is not a tensor of the model; did you mean `logits`\? Tensors of the model: x, dense/kernel, logits, loss\.|implicit instantiation of undefined template 'hookfuse::compile_error<.*check_tensor_name<)
// graph.compute<"logit">() on a model whose tensor is "logits": a compile error whose first line
// names "logit", suggests "logits" (one edit away) and lists the model's tensors. Control:
// tests/compile_ok/graph_compute_misspelt_name.cpp (the name spelt right).
#include <hookfuse/hookfuse.hpp>

using namespace hookfuse;

int main() {
  Placeholder<"x", float, 3> x;
  Variable<"dense/kernel", float, 3, 1> w;
  auto g = bind(4, named<"logits">(matmul(x, w)), named<"loss">(reduce_mean(matmul(x, w))));
  float data[12] = {};
  g.feed<"x">(data, 4, 3);
  return static_cast<int>(g.compute<"logit">()(0, 0));
}
