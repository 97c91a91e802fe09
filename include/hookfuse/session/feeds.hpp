// hookfuse/session/feeds.hpp: forwards to hookfuse/autodiff/feeds.hpp, where the feed types
// (feed<"x">(...), feeds<...>(input), caller_feeds, InputFor) live, below hooks/, which use
// them; kept for code that includes this path.
#pragma once

#include "hookfuse/autodiff/feeds.hpp"
