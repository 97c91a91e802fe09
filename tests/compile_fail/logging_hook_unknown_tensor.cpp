// expect: (check_fetch(\(\) \[with Hook = hookfuse::BasicLoggingTensorHook<hookfuse::LoggingPolicies<>, hookfuse::fixed_string<4>{"acc"}>; [^;]*"acc"|<hookfuse::BasicLoggingTensorHook<hookfuse::LoggingPolicies<>, {{97, 99, 99, 0}}>, {{97, 99, 99, 0}}).*hookfuse: a hook fetches a tensor name that the model does not have|hookfuse: a hook fetches a tensor name that the model does not have.*check_fetch(\(\) \[with Hook = hookfuse::BasicLoggingTensorHook<hookfuse::LoggingPolicies<>, hookfuse::fixed_string<4>{"acc"}>; [^;]*"acc"|<hookfuse::BasicLoggingTensorHook<hookfuse::LoggingPolicies<>, {{97, 99, 99, 0}}>, {{97, 99, 99, 0}}))
// LoggingTensorHook<"acc"> on a model without "acc" (it has "loss" and "metric"): the session names the hook
// type and "acc" with hookfuse's message. Control: tests/compile_ok/logging_hook_unknown_tensor.cpp
// (the same snippet, fixed).
#include "lr_session.hpp"

using namespace hookfuse;

int main() { lr_snippet::train(LoggingTensorHook<"acc">({.every_n_iter = 10})); }
