// Fixture of layering.wrong_include (not compiled): nn/ may include optim/ (README's Layers).
#pragma once

#include "hookfuse/optim/step.hpp"
