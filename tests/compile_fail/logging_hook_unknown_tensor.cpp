// expect: (error: invalid application of 'sizeof' to incomplete type 'hookfuse::compile_error<hookfuse::fixed_string<[0-9]+>{"hook `hookfuse::BasicLoggingTensorHook<hookfuse::LoggingPolicies<>, hookfuse::fixed_string<4>{\\"acc\\"}>` fetches `acc`, which is not a tensor of the model\. Tensors of the model: x, W, b, y, loss, metric, global_step\.|implicit instantiation of undefined template 'hookfuse::compile_error<.*check_fetch<hookfuse::BasicLoggingTensorHook<)
// LoggingTensorHook<"acc"> on a model without "acc" (it has "loss" and "metric"): the first
// error line names the hook type and "acc" and lists the model's tensors (none is close to
// "acc"). Control: tests/compile_ok/logging_hook_unknown_tensor.cpp (the same snippet, fixed).
#include "lr_session.hpp"

using namespace hookfuse;

int main() { lr_snippet::train(LoggingTensorHook<"acc">({.every_n_iter = 10})); }
