// Control for tests/compile_fail/not_an_optimizer.cpp: the same optimizer with
// set_learning_rate spelt right is an Optimizer.
#include <hookfuse/hookfuse.hpp>

using namespace hookfuse;

struct MisspeltOptimizer {
  double lr = 0.01;
  double learning_rate() const { return lr; }
  void set_learning_rate(double v) { lr = v; }
  template <class V>
  void apply(V& v) const {
    v.value -= static_cast<typename V::scalar>(lr) * v.grad;
  }
};

int main() {
  Placeholder<"x", float, 1> x;
  Variable<"W", float, 1, 1> W;
  GlobalStep gs;
  auto train_op = minimize(MisspeltOptimizer{}, reduce_mean(matmul(x, W)), gs);
  (void)train_op;
}
