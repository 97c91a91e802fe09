// Fixture of layering.wrong_include (not compiled): optim/ may not include nn/ (sideways: the
// README allows nn/ -> optim/ only).
#pragma once

#include <hookfuse/nn/layer.hpp>
