// Fixture of layering.wrong_include (not compiled): a hook that includes the session above it.
#pragma once

#include "hookfuse/session/session.hpp"
