// The fixed counterpart of tests/compile_fail/hook_fetches_unknown_tensor.cpp: must compile.
#include "../compile_fail/lr_session.hpp"

using namespace hookfuse;

// Requests "loss", which the model has.
struct TypoFetchHook {
  SessionRunArgs<"loss"> before_run(SessionRunContext&) { return {}; }
  void after_run(SessionRunContext&, const SessionRunValues<"loss">&) {}
};

int main() { lr_snippet::train(TypoFetchHook{}); }
