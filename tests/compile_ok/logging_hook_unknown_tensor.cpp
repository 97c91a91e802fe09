// The fixed counterpart of tests/compile_fail/logging_hook_unknown_tensor.cpp: must compile.
#include "../compile_fail/lr_session.hpp"

using namespace hookfuse;

int main() { lr_snippet::train<"acc">(LoggingTensorHook<"acc">({.every_n_iter = 10})); }
