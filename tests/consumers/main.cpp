// main.cpp: the consumer tests' program; it only has to compile, link and run.
#include <hookfuse/hookfuse.hpp>

int main() { return 0; }
