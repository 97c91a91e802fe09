// Fixture of layering.include_cycle (not compiled): outside the cycle, includes into it.
#pragma once

#include "hookfuse/data/a.hpp"
