// hookfuse/metrics.hpp: every streaming metric (tf.compat.v1.metrics): Mean, MeanSquaredError,
// MeanAbsoluteError, Accuracy, Precision, Recall, AUC, MeanPerClassAccuracy, the Metric
// concept they satisfy, metric<"name">(...), a metric bound to the tensors it reads, and
// update_op(metric, ...), a metric's update as a tensor (a training summary, a hook's fetch),
// and sum_local_variables, the metrics' local variables summed across processes.
#pragma once

#include "hookfuse/metrics/auc.hpp"
#include "hookfuse/metrics/concepts.hpp"
#include "hookfuse/metrics/mean.hpp"
#include "hookfuse/metrics/mean_per_class_accuracy.hpp"
#include "hookfuse/metrics/metric_op.hpp"
#include "hookfuse/metrics/precision_recall.hpp"
#include "hookfuse/metrics/reduce.hpp"
#include "hookfuse/metrics/update_op.hpp"
