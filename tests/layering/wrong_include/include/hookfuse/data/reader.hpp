// Fixture of layering.wrong_include (not compiled): data/ may include io/.
#pragma once

#include "hookfuse/io/file.hpp"
