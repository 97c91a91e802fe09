// expect: (check_event_emitted\(\) \[with Hook = hookfuse::GradientClipByNormHook; Session = hookfuse::MonitoredSession<.*hookfuse::SessionEvent Event = hookfuse::SessionEvent::before_apply_gradients\].*hookfuse: this hook declares an event that this session never emits|hookfuse: this hook declares an event that this session never emits.*check_event_emitted<hookfuse::GradientClipByNormHook, hookfuse::MonitoredSession<.*hookfuse::SessionEvent::before_apply_gradients>)
// A gradient hook (before_apply_gradients) in an evaluation session (MonitoredSession: forward
// pass only, no backward pass): the session never emits the event, so the hook would silently
// clip nothing. This is a compile error naming the hook, the session and the event
// (detail::check_event_emitted). Control: tests/compile_ok/gradient_hook_in_evaluation_session.cpp
// (the same hook in a training session, and the evaluation session without it).
#include "lr_session.hpp"

using namespace hookfuse;

int main() { lr_snippet::evaluate(GradientClipByNormHook(1.0)); }
