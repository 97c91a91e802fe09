#!/bin/sh
# examples/fashion_mnist/summaries_test.sh: the TensorBoard summaries of the example (ctest
# example.fashion_mnist_summaries). Exit 77 (skipped) without the Fashion-MNIST files.
#   fashion_mnist --model_dir D --max_steps 1000 leaves exactly one event file in D, whose
#   "loss" and "accuracy" scalars are at global steps 1, 101, ..., 901 and "global_step/sec" at
#   101, 201, ..., 901 (TF's MonitoredTrainingSession defaults: save_summaries_steps = 100,
#   log_step_count_steps = 100; the summaries are stamped with the global step after the run,
#   the step counter's first trigger at step 1 only sets its baseline, and no run ends on 1001).
#   Read with examples/event_dump --csv. Then scripts/plot_scalars.py turns D into a PNG (when
#   python3 with matplotlib is present).
#
#   summaries_test.sh <fashion_mnist> <event_dump> <plot_scalars.py> <python3 or empty> <work dir>
set -eu
exe=$1 dump=$2 plot=$3 python=$4 work=$5
. "$(dirname "$0")/test_lib.sh"
require_fashion_mnist
fresh_dir "$work"
"$exe" --model_dir "$work/D" --max_steps 1000 >"$work/run.txt" 2>&1 ||
  fail "fashion_mnist: $(tail -3 "$work/run.txt")"
grep -qx 'global_step: 1000' "$work/run.txt" || fail "the run did not end at global step 1000"
n=$(ls "$work/D" | grep -c '^events\.out\.tfevents\.' || true)
[ "$n" -eq 1 ] || fail "$n event files in D, expected 1: $(ls "$work/D" | tr '\n' ' ')"
"$dump" --csv "$work/D" >"$work/scalars.csv" || fail "event_dump --csv D"
steps() { awk -F, -v tag="$1" '$1 == tag { printf "%s ", $2 }' "$work/scalars.csv"; }
every100_from1="1 101 201 301 401 501 601 701 801 901 "
every100_from101="101 201 301 401 501 601 701 801 901 "
[ "$(steps loss)" = "$every100_from1" ] || fail "loss at steps '$(steps loss)'"
[ "$(steps accuracy)" = "$every100_from1" ] || fail "accuracy at steps '$(steps accuracy)'"
[ "$(steps global_step/sec)" = "$every100_from101" ] ||
  fail "global_step/sec at steps '$(steps global_step/sec)'"
echo "event file: loss, accuracy at $every100_from1; global_step/sec at $every100_from101"
if [ -n "$python" ] && "$python" -c 'import matplotlib' 2>/dev/null; then
  "$python" "$plot" "$work/D" -o "$work/scalars.png" || fail "plot_scalars.py D"
  magic=$(od -An -tx1 -N8 "$work/scalars.png" | tr -d ' \n')
  [ "$magic" = "89504e470d0a1a0a" ] || fail "scalars.png is not a PNG"
  echo "plot: $(wc -c < "$work/scalars.png") bytes"
else
  echo "plot: not checked (no python3 with matplotlib; scripts.plot_scalars_png shows as skipped)"
fi
echo "PASSED"
