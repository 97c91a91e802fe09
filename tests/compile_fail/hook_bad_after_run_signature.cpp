// expect: (error: invalid application of 'sizeof' to incomplete type 'hookfuse::compile_error<hookfuse::fixed_string<[0-9]+>{"hook `BadAfterRunHook` declares after_run, but it cannot be called as after_run\(SessionRunContext&, const SessionRunValues<names\.\.\.>&\) with the names its before_run requests \(none\)|implicit instantiation of undefined template 'hookfuse::compile_error<.*check_hook<BadAfterRunHook,)
// A hook declaring after_run(int): the protocol would call after_run(context, values), so this is
// an error naming the hook, after_run and the names its before_run requests, not a hook that
// silently never sees the event. Control: tests/compile_ok/hook_bad_after_run_signature.cpp
// (the same snippet, fixed).
#include "lr_session.hpp"

using namespace hookfuse;

struct BadAfterRunHook {
  void after_run(int) {}
};

int main() { lr_snippet::train(BadAfterRunHook{}); }
