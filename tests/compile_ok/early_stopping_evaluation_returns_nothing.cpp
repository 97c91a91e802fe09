// The fixed counterpart of tests/compile_fail/early_stopping_evaluation_returns_nothing.cpp:
// must compile.
#include "../compile_fail/lr_session.hpp"

using namespace hookfuse;

int main() {
  double val_loss = 0.5;
  lr_snippet::train(early_stopping_on_evaluation<"val_loss", NullLogger>(
      [&] { return val_loss *= 0.5; }, {.patience = 2}));
}
