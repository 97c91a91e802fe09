// Fixture of layering.include_cycle (not compiled): a.hpp and b.hpp include each other; each
// include is allowed by the layers (one folder), the cycle is not.
#pragma once

#include "hookfuse/data/b.hpp"
