// expect: (error: invalid application of 'sizeof' to incomplete type 'hookfuse::compile_error<hookfuse::fixed_string<[0-9]+>{"hook `hookfuse::GradientClipByNormHook` declares before_apply_gradients, an event that a `hookfuse::MonitoredSession` never emits, so the hook would never receive it: a gradient hook needs a training session|implicit instantiation of undefined template 'hookfuse::compile_error<.*check_event_emitted<hookfuse::GradientClipByNormHook, hookfuse::MonitoredSession<)
// A gradient hook (before_apply_gradients) in an evaluation session (MonitoredSession: forward
// pass only, no backward pass): the session never emits the event, so the hook would silently
// clip nothing. This is a compile error whose first line names the hook, the session and the event
// (detail::check_event_emitted). Control: tests/compile_ok/gradient_hook_in_evaluation_session.cpp
// (the same hook in a training session, and the evaluation session without it).
#include "lr_session.hpp"

using namespace hookfuse;

int main() { lr_snippet::evaluate(GradientClipByNormHook(1.0)); }
