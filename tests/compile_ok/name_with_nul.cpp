// The fixed counterpart of tests/compile_fail/name_with_nul.cpp: must compile.
#include <hookfuse/hookfuse.hpp>

using namespace hookfuse;

int main() {
  Variable<"a0b", float, 1, 1> w;
  (void)w;
}
