// The fixed counterpart of tests/compile_fail/update_hook_in_evaluation_session.cpp: the update
// hook goes in the training session; the evaluation session gets the hooks that receive its
// events (before_run, after_run, end). Must compile.
#include "../compile_fail/lr_session.hpp"

struct ScaleAfterUpdate {
  void after_apply_gradients(auto& updated) {
    updated.for_each([](auto& t, std::string_view) { t *= 0.5f; });
  }
};

int main() {
  lr_snippet::train(ScaleAfterUpdate{});
  lr_snippet::evaluate(hookfuse::FinalOpsHook<"loss">());
}
