// Fixture of layering.wrong_include (not compiled): a hook that includes nothing above it.
#pragma once

#include "hookfuse/optim/step.hpp"
