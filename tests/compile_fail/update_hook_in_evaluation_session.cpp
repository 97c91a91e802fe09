// expect: (error: invalid application of 'sizeof' to incomplete type 'hookfuse::compile_error<hookfuse::fixed_string<[0-9]+>{"hook `ScaleAfterUpdate` declares after_apply_gradients, an event that a `hookfuse::MonitoredSession` never emits, so the hook would never receive it: an update hook needs a training session|implicit instantiation of undefined template 'hookfuse::compile_error<.*check_event_emitted<ScaleAfterUpdate, hookfuse::MonitoredSession<)
// An update hook (after_apply_gradients) in an evaluation session (MonitoredSession: forward
// pass only, no update): the session never emits the event, so the hook would silently do
// nothing. This is a compile error whose first line names the hook, the session and the event
// (detail::check_event_emitted). Control: tests/compile_ok/update_hook_in_evaluation_session.cpp.
#include "lr_session.hpp"

struct ScaleAfterUpdate {
  void after_apply_gradients(auto& updated) {
    updated.for_each([](auto& t, std::string_view) { t *= 0.5f; });
  }
};

int main() { lr_snippet::evaluate(ScaleAfterUpdate{}); }
