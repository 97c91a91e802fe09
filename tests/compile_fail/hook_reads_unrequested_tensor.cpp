// expect: ((SessionRunValues<Names>::get\(\) const \[with [^;]*Name = hookfuse::fixed_string<9>{"accuracy"};|SessionRunValues<{{108, 111, 115, 115, 0}}>::get<{{97, 99, 99, 117, 114, 97, 99, 121, 0}}>).*hookfuse: after_run reads a tensor that this hook's before_run did not request|hookfuse: after_run reads a tensor that this hook's before_run did not request.*(SessionRunValues<Names>::get\(\) const \[with [^;]*Name = hookfuse::fixed_string<9>{"accuracy"};|SessionRunValues<{{108, 111, 115, 115, 0}}>::get<{{97, 99, 99, 117, 114, 97, 99, 121, 0}}>))
// after_run reads values.get<"accuracy">() although before_run requested only "loss" (the model
// does have "accuracy"): an error naming "accuracy" with hookfuse's message. Control:
// tests/compile_ok/hook_reads_unrequested_tensor.cpp (the same snippet, fixed).
#include "lr_session.hpp"

using namespace hookfuse;

// Requests "loss" but reads "accuracy" (which the model has).
struct UnrequestedReadHook {
  SessionRunArgs<"loss"> before_run(SessionRunContext&) { return {}; }
  void after_run(SessionRunContext&, const SessionRunValues<"loss">& values) {
    (void)values.get<"accuracy">();
  }
};

int main() { lr_snippet::train<"accuracy">(UnrequestedReadHook{}); }
