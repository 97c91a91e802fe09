// Fixture of layering.wrong_include (not compiled): the session includes hooks, below it.
#pragma once

#include "hookfuse/hooks/good_hook.hpp"
