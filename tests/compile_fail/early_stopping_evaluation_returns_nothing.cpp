// expect: hookfuse: the evaluation of an EarlyStoppingHook must be callable as evaluate\(\) and return the monitored metric as a number
// early_stopping_on_evaluation's evaluate() must return the metric: one that returns nothing
// (a lambda that forgot its `return`) is an error saying what evaluate() must be.
// Control: tests/compile_ok/early_stopping_evaluation_returns_nothing.cpp (it returns the value).
#include "lr_session.hpp"

using namespace hookfuse;

int main() {
  double val_loss = 0.5;
  lr_snippet::train(early_stopping_on_evaluation<"val_loss", NullLogger>(
      [&] { val_loss *= 0.5; }, {.patience = 2}));
}
