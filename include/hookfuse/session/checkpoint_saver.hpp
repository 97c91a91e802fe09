// hookfuse/session/checkpoint_saver.hpp: forwards to hookfuse/hooks/checkpoint_saver.hpp, where
// the CheckpointSaver concept, SaverOptions and DefaultSaver live, below the session, so that
// CheckpointSaverHook can use them; kept for code that includes this path.
#pragma once

#include "hookfuse/hooks/checkpoint_saver.hpp"
