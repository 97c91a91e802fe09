// The fixed counterpart of tests/compile_fail/gradient_hook_writes_read_only_view.cpp: a hook
// that takes the context by non-const reference may change the gradients. Must compile.
#include "../compile_fail/lr_session.hpp"
#include <string_view>

using namespace hookfuse;

struct ScalingObserver {
  void before_apply_gradients(auto& gradients) {
    gradients.for_each([](auto& g, std::string_view) { g *= 0.5f; });
  }
};

int main() { lr_snippet::train(ScalingObserver{}); }
