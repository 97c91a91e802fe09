// Fixture of layering.wrong_include (not compiled): io/ knows nothing of hooks (up), nor of
// data (sideways), and includes no header that does not exist.
#pragma once

  #  include <hookfuse/hooks/good_hook.hpp>
#include "hookfuse/data/dataset.hpp"
#include "hookfuse/io/missing.hpp"
