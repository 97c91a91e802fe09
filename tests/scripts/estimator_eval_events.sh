#!/bin/sh
# tests/scripts/estimator_eval_events.sh: examples/estimator_regression run twice with
# --steps 100 into one fresh model_dir. The first run evaluates at global steps 100 and 200,
# the second (restored from the checkpoint) at 300 and 400; then:
#   1. the example's own lines say so, and its predictions for x = 5 and 6 are near 10 and 12;
#   2. after the first run model_dir/eval holds one event file (both evaluations), after the
#      second two (each process opens its own, as TensorFlow's FileWriter does);
#   3. scripts/plot_scalars.py --dump reads "loss" and "mae" at exactly those steps.
#
#   estimator_eval_events.sh <example> <python3> <plot_scalars.py> <model_dir>
#
# Exit 77 (skipped) for step 3 only when python3 or its matplotlib is absent.
set -u
example=$1 python=$2 script=$3 dir=$4
fail() { echo "FAILED: $*"; exit 1; }
rm -rf "$dir"
out1=$("$example" --model_dir "$dir" --steps 100 2>/dev/null) || fail "first run: exit status $?"
count=$(ls "$dir/eval" | grep -c tfevents)
[ "$count" -eq 1 ] || fail "after one run $dir/eval holds $count event files, expected 1"
have_python=1
if [ -z "$python" ] || ! "$python" -c 'import matplotlib' 2>/dev/null; then have_python=0; fi
if [ $have_python -eq 1 ]; then
  dump=$("$python" "$script" "$dir/eval" --dump) || fail "plot_scalars --dump: exit status $?"
  got=$(printf '%s\n' "$dump" | awk -F, 'NR > 1 { print $1 "@" $2 }' | sort | tr '\n' ' ')
  want="loss@100 loss@200 mae@100 mae@200 "
  [ "$got" = "$want" ] || fail "plot_scalars read '$got' after one run, expected '$want'"
fi
out2=$("$example" --model_dir "$dir" --steps 100 2>/dev/null) || fail "second run: exit status $?"
steps=$(printf '%s\n%s\n' "$out1" "$out2" | awk '/^global_step:/ { print $2 }' | tr '\n' ' ')
[ "$steps" = "100 200 300 400 " ] || fail "evaluated at steps '$steps', expected '100 200 300 400 '"
printf '%s\n' "$out2" | awk '/^prediction:/ { p[n++] = $2 }
  END { exit !(n == 2 && p[0] > 9.5 && p[0] < 10.5 && p[1] > 11.4 && p[1] < 12.6) }' ||
  fail "predictions for x = 5, 6 not near 10, 12: $out2"
count=$(ls "$dir/eval" | grep -c tfevents)
[ "$count" -eq 2 ] || fail "after two runs $dir/eval holds $count event files, expected 2"
if [ $have_python -eq 0 ]; then
  echo "SKIPPED: python3 with matplotlib not found (apt-get install python3-matplotlib)"
  exit 77
fi
dump=$("$python" "$script" "$dir/eval" --dump) || fail "plot_scalars --dump: exit status $?"
got=$(printf '%s\n' "$dump" | awk -F, 'NR > 1 { print $1 "@" $2 }' | sort | tr '\n' ' ')
want="loss@100 loss@200 loss@300 loss@400 mae@100 mae@200 mae@300 mae@400 "
[ "$got" = "$want" ] || fail "plot_scalars read '$got', expected '$want'"
echo "estimator_eval_events: 4 evaluations in 2 runs, read back by plot_scalars.py"
