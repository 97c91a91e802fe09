// expect: (Listener = MisspeltListener[^A-Za-z_].*hookfuse: a CheckpointSaverHook listener must declare|hookfuse: a CheckpointSaverHook listener must declare.*Listener = MisspeltListener[^A-Za-z_])
// A checkpoint listener whose every method name is misspelt would never be called: an error
// naming the listener, not a listener that silently does nothing.
// Control: tests/compile_ok/checkpoint_listener_misspelt.cpp (the names spelt right).
#include "lr_session.hpp"
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
  void before_sav(S&, std::int64_t) {}
  template <class S>
  bool aftersave(S&, std::int64_t) {
    return ++saves > 3;
  }
};

int main() {
  lr_snippet::train(
      CheckpointSaverHook("d", {.save_steps = 1}, NullSaver{}, listeners(MisspeltListener{})),
      StopAtStepHook({.num_steps = 2}));
}
