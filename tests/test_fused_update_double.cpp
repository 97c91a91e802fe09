// tests/test_fused_update_double.cpp: the fused SGD update gives the stored-gradient weights in
// double precision too (see test_fused_update.cpp; a file of its own to keep each file under a
// minute of compile time with the sanitizer flags).
#include "fused_update_fixture.hpp"

TEST_CASE("fused SGD update gives the stored-gradient weights: double, 200 steps",
          "[fused_update]") {
  fused_equals_stored<double>(1e-12);
}
