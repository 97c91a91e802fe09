// expect: (check_fetch(\(\) \[with Hook = TypoFetchHook; [^;]*"lossx"|<TypoFetchHook, {{108, 111, 115, 115, 120, 0}}).*hookfuse: a hook fetches a tensor name that the model does not have|hookfuse: a hook fetches a tensor name that the model does not have.*check_fetch(\(\) \[with Hook = TypoFetchHook; [^;]*"lossx"|<TypoFetchHook, {{108, 111, 115, 115, 120, 0}}))
// A hook whose before_run requests "lossx" from a model that has "loss": the session names the hook
// and the tensor (check_fetch<TypoFetchHook, "lossx">) with hookfuse's message. Control:
// tests/compile_ok/hook_fetches_unknown_tensor.cpp (the same snippet, fixed).
#include "lr_session.hpp"

using namespace hookfuse;

// Requests "lossx"; the model's tensor is "loss".
struct TypoFetchHook {
  SessionRunArgs<"lossx"> before_run(SessionRunContext&) { return {}; }
  void after_run(SessionRunContext&, const SessionRunValues<"lossx">&) {}
};

int main() { lr_snippet::train(TypoFetchHook{}); }
