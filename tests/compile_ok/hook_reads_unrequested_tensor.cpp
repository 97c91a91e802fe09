// The fixed counterpart of tests/compile_fail/hook_reads_unrequested_tensor.cpp: must compile.
#include "../compile_fail/lr_session.hpp"

using namespace hookfuse;

// Requests "loss" and "accuracy" and reads "accuracy".
struct UnrequestedReadHook {
  SessionRunArgs<"loss", "accuracy"> before_run(SessionRunContext&) { return {}; }
  void after_run(SessionRunContext&, const SessionRunValues<"loss", "accuracy">& values) {
    (void)values.get<"accuracy">();
  }
};

int main() { lr_snippet::train<"accuracy">(UnrequestedReadHook{}); }
