// expect: hookfuse: a tensor or variable name cannot contain a '\\0' character
// A name with a '\0' inside ("a\0b"): refused where the name is packed into words
// (detail::packed_name_t), which reads a name up to its first '\0'.
// Control: tests/compile_ok/name_with_nul.cpp (the name without the '\0').
#include <hookfuse/hookfuse.hpp>

using namespace hookfuse;

int main() {
  Variable<"a\0b", float, 1, 1> w;
  (void)w;
}
