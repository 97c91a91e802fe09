// umbrella.cpp: must compile; the control for the compile-fail tests (same command line).
#include <hookfuse/hookfuse.hpp>

int main() {}
