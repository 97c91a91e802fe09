// Fixture of layering.include_cycle (not compiled): see a.hpp.
#pragma once

#include <cstddef>

#include "hookfuse/data/a.hpp"
