// hookfuse/autodiff.hpp: the reverse-mode autodiff core (expressions, ops, bound graphs).
#pragma once

#include "hookfuse/autodiff/elementwise_ops.hpp"
#include "hookfuse/autodiff/expr.hpp"
#include "hookfuse/autodiff/gemm.hpp"
#include "hookfuse/autodiff/graph.hpp"
#include "hookfuse/autodiff/linalg_ops.hpp"
#include "hookfuse/autodiff/reduce_ops.hpp"
#include "hookfuse/autodiff/slice_ops.hpp"
#include "hookfuse/autodiff/storage.hpp"
#include "hookfuse/autodiff/summary.hpp"
#include "hookfuse/autodiff/tape.hpp"
#include "hookfuse/autodiff/tape_tables.hpp"
#include "hookfuse/autodiff/threads.hpp"
#include "hookfuse/autodiff/variable.hpp"
