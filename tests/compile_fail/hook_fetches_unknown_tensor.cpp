// expect: (error: invalid application of 'sizeof' to incomplete type 'hookfuse::compile_error<hookfuse::fixed_string<[0-9]+>{"hook `TypoFetchHook` fetches `lossx`, which is not a tensor of the model; did you mean `loss`\? Tensors of the model: x, W, b, y, loss, metric, global_step\.|implicit instantiation of undefined template 'hookfuse::compile_error<.*check_fetch<TypoFetchHook,)
// A hook whose before_run requests "lossx" from a model that has "loss": the first error line
// names the hook and "lossx", suggests "loss" and lists the model's tensors. Control:
// tests/compile_ok/hook_fetches_unknown_tensor.cpp (the same snippet, fixed).
#include "lr_session.hpp"

using namespace hookfuse;

// Requests "lossx"; the model's tensor is "loss".
struct TypoFetchHook {
  SessionRunArgs<"lossx"> before_run(SessionRunContext&) { return {}; }
  void after_run(SessionRunContext&, const SessionRunValues<"lossx">&) {}
};

int main() { lr_snippet::train(TypoFetchHook{}); }
