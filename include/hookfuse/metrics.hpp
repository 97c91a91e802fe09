// hookfuse/metrics.hpp: every streaming metric (tf.compat.v1.metrics): Mean, MeanSquaredError,
// MeanAbsoluteError, Accuracy, Precision, Recall, AUC, MeanPerClassAccuracy, and the Metric
// concept they satisfy.
#pragma once

#include "hookfuse/metrics/auc.hpp"
#include "hookfuse/metrics/concepts.hpp"
#include "hookfuse/metrics/mean.hpp"
#include "hookfuse/metrics/mean_per_class_accuracy.hpp"
#include "hookfuse/metrics/precision_recall.hpp"
