#!/usr/bin/env python3
"""tests/metrics/auc_reference.py: reference values of tests/test_metrics.cpp's AUC case.

Prints, for one fixed case of 20 examples (10 positive, 10 negative):
  - scikit-learn's exact areas (Debian's python3-sklearn): roc_auc_score, the trapezoidal area
    under precision_recall_curve (sklearn.metrics.auc(recall, precision)) and
    average_precision_score (the step-wise PR area, for comparison);
  - the value tf.compat.v1.metrics.auc gives with num_thresholds=200, curve ROC and PR,
    summation_method='trapezoidal', worked out here in plain Python from TensorFlow's source
    (tensorflow/python/ops/metrics_impl.py: auc, _confusion_matrix_at_thresholds): thresholds
    and predictions rounded to float32 as TF's constants and casts are (so each comparison
    p > t is TF's), the rest in Python floats (double);
  - for each curve, a bound on |TF's 200-threshold area - sklearn's exact area|: TF sees the
    predictions only through the bucket (t[i], t[i+1]] they fall in, so where several distinct
    predictions share a bucket it joins the curve's points over that stretch by one straight
    segment; the two curves then differ by at most the area of the box those points span
    (x range * y range), summed over such buckets, plus 1e-5 for TF's 1e-6 epsilons.

    /usr/bin/python3 tests/metrics/auc_reference.py

The test records this output; nothing runs the script at test time.
"""
import struct

from sklearn.metrics import (auc, average_precision_score, precision_recall_curve,
                             roc_auc_score, roc_curve)

LABELS = [0, 0, 1, 1, 0, 1, 0, 1, 1, 0, 1, 0, 1, 0, 0, 1, 1, 0, 1, 0]
# Two pairs of a positive above a negative share a 200-threshold bucket (0.502/0.498 in
# (99/199, 100/199], 0.255/0.252 in (50/199, 51/199]): TF counts each as a tie, sklearn as
# ranked right. 0.0 and 1.0 sit just inside the endpoint thresholds.
PREDICTIONS = [0.10, 0.40, 0.35, 0.80, 0.05, 0.65, 0.30, 0.90, 0.502, 0.498,
               0.70, 0.252, 0.255, 0.60, 0.15, 1.00, 0.45, 0.00, 0.85, 0.75]
NUM_THRESHOLDS = 200


def f32(x):
    return struct.unpack("f", struct.pack("f", x))[0]


def tf_thresholds(num_thresholds):
    # metrics_impl.py, auc():
    #   thresholds = [(i + 1) * 1.0 / (num_thresholds - 1) for i in range(num_thresholds - 2)]
    #   thresholds = [0.0 - kepsilon] + thresholds + [1.0 + kepsilon]
    kepsilon = 1e-7
    t = [(i + 1) * 1.0 / (num_thresholds - 1) for i in range(num_thresholds - 2)]
    return [f32(x) for x in [0.0 - kepsilon] + t + [1.0 + kepsilon]]


def tf_auc(labels, predictions, num_thresholds, curve):
    thresholds = tf_thresholds(num_thresholds)
    preds = [f32(p) for p in predictions]
    tp, fn, tn, fp = [], [], [], []
    for t in thresholds:
        # _confusion_matrix_at_thresholds: pred_is_pos = predictions > thresholds
        tp.append(sum(1 for y, p in zip(labels, preds) if y and p > t))
        fn.append(sum(1 for y, p in zip(labels, preds) if y and not p > t))
        tn.append(sum(1 for y, p in zip(labels, preds) if not y and not p > t))
        fp.append(sum(1 for y, p in zip(labels, preds) if not y and p > t))
    epsilon = 1.0e-6
    rec = [(a + epsilon) / (a + b + epsilon) for a, b in zip(tp, fn)]
    if curve == "ROC":
        x = [b / (b + c + epsilon) for b, c in zip(fp, tn)]
        y = rec
    else:
        x = rec
        y = [(a + epsilon) / (a + b + epsilon) for a, b in zip(tp, fp)]
    # reduce_sum((x[:n-1] - x[1:]) * (y[:n-1] + y[1:]) / 2.0)
    return sum((x[i] - x[i + 1]) * (y[i] + y[i + 1]) / 2.0 for i in range(num_thresholds - 1))


def bucket(p, thresholds):
    return sum(1 for t in thresholds if f32(p) > t)


def merge_bound(points, thresholds):
    """points: (threshold, x, y) of sklearn's curve, thresholds decreasing, the first without one
    (its start). Sum over TF buckets holding several of them of the box they and the point
    before them span."""
    total = 0.0
    i = 1
    while i < len(points):
        b = bucket(points[i][0], thresholds)
        j = i
        while j + 1 < len(points) and bucket(points[j + 1][0], thresholds) == b:
            j += 1
        if j > i:
            group = points[i - 1:j + 1]
            xs = [q[1] for q in group]
            ys = [q[2] for q in group]
            total += (max(xs) - min(xs)) * (max(ys) - min(ys))
        i = j + 1
    return total


def main():
    thresholds = tf_thresholds(NUM_THRESHOLDS)
    fpr, tpr, roc_thr = roc_curve(LABELS, PREDICTIONS, drop_intermediate=False)
    roc_points = [(None, fpr[0], tpr[0])] + list(zip(roc_thr[1:], fpr[1:], tpr[1:]))
    precision, recall, pr_thr = precision_recall_curve(LABELS, PREDICTIONS)
    # increasing thresholds, last point (recall 0, precision 1) without one: reverse it
    pr_points = [(None, recall[-1], precision[-1])] + list(
        zip(pr_thr[::-1], recall[-2::-1], precision[-2::-1]))

    print("sklearn %s" % __import__("sklearn").__version__)
    print("roc_auc_score            %.9f" % roc_auc_score(LABELS, PREDICTIONS))
    print("pr_auc_trapezoidal       %.9f" % auc(recall, precision))
    print("average_precision_score  %.9f" % average_precision_score(LABELS, PREDICTIONS))
    print("tf_auc_roc_200           %.9f" % tf_auc(LABELS, PREDICTIONS, NUM_THRESHOLDS, "ROC"))
    print("tf_auc_pr_200            %.9f" % tf_auc(LABELS, PREDICTIONS, NUM_THRESHOLDS, "PR"))
    print("roc_bound                %.9f" % (merge_bound(roc_points, thresholds) + 1e-5))
    print("pr_bound                 %.9f" % (merge_bound(pr_points, thresholds) + 1e-5))
    print("tf_auc_roc_3             %.9f" % tf_auc(LABELS, PREDICTIONS, 3, "ROC"))
    print("tf_auc_pr_3              %.9f" % tf_auc(LABELS, PREDICTIONS, 3, "PR"))


if __name__ == "__main__":
    main()
