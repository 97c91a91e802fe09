// expect: no match for .*operator\*=.*const Eigen::Map<const Eigen::Matrix|no viable overloaded '\*='
// A gradient hook whose before_apply_gradients takes a const context is an observer: the views
// it gets are Eigen::Map<const ...>, and writing through one does not compile. Control:
// tests/compile_ok/gradient_hook_writes_read_only_view.cpp (the same hook taking `auto&`).
#include "lr_session.hpp"
#include <string_view>

using namespace hookfuse;

struct ScalingObserver {
  void before_apply_gradients(const auto& gradients) {
    gradients.for_each([](auto& g, std::string_view) { g *= 0.5f; });
  }
};

int main() { lr_snippet::train(ScalingObserver{}); }
