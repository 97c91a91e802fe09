// expect: (check_optimizer(\(\) \[with O = |<)MisspeltOptimizer[^A-Za-z_].*hookfuse: this type is not an optimizer|hookfuse: this type is not an optimizer.*check_optimizer(\(\) \[with O = |<)MisspeltOptimizer[^A-Za-z_])
// An optimizer whose learning-rate setter is misspelt could not be driven by a schedule: an
// error naming the type (check_optimizer<MisspeltOptimizer>) and what an optimizer needs.
// Control: tests/compile_ok/not_an_optimizer.cpp (set_learning_rate spelt right).
#include <hookfuse/hookfuse.hpp>

using namespace hookfuse;

struct MisspeltOptimizer {
  double lr = 0.01;
  double learning_rate() const { return lr; }
  void set_lr(double v) { lr = v; }
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
