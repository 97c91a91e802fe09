// The fixed counterpart of tests/compile_fail/checkpoint_listener_misspelt.cpp: must compile.
#include "../compile_fail/lr_session.hpp"
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

using namespace hookfuse;

struct NullSaver {
  std::string save(VariableList, std::string_view p, std::int64_t) { return std::string(p); }
  std::optional<std::string> restore_latest(VariableList, std::string_view) { return {}; }
};

struct MisspeltListener {
  int saves = 0;
  template <class S>
  void before_save(S&, std::int64_t) {}
  template <class S>
  bool after_save(S&, std::int64_t) {
    return ++saves > 3;
  }
};

int main() {
  lr_snippet::train(
      CheckpointSaverHook("d", {.save_steps = 1}, NullSaver{}, listeners(MisspeltListener{})),
      StopAtStepHook({.num_steps = 2}));
}
