// hookfuse/session/checkpoint_variables.hpp: forwards to hookfuse/hooks/checkpoint_variables.hpp,
// where the checkpoint-variable views (CheckpointVariable, VariableList, checkpoint_variables)
// live, below the session, so that hooks can use them; kept for code that includes this path.
#pragma once

#include "hookfuse/hooks/checkpoint_variables.hpp"
