#!/bin/sh
# examples/estimator_linear_regression/outputs_test.sh: the example at its own settings (1000
# steps) with --dir <dir> (removed first), then its outputs read back by hookfuse's readers:
#   1. it prints W within 0.05 of 2, b within 0.1 of 0, global step 1000, and an evaluation loss
#      below 0.09 (with those bounds |W x + b - 2 x| <= 0.05 * 4 + 0.1 = 0.3 on x <= 4, so the
#      mean squared error is at most 0.3^2);
#   2. <dir>/logs holds one event file (event_dump, io::read_events) with "global_step/sec" at
#      every step 2, ..., 1000 (TF's StepCounterHook(every_n_steps=1) takes its baseline at step
#      1 and reports the rate from the next step on) and "loss" at steps 1, 11, ..., 991
#      (SummarySaverHook(save_steps=10): the first run writes, then every 10 steps, stamped with
#      the step after the run);
#   3. <dir>/checkpoints holds model.ckpt-600 ... model.ckpt-1000 and no older checkpoint
#      (saves at 0, 100, ..., 1000; max_to_keep=5), and its state file lists those five, the
#      newest as model_checkpoint_path; each opens with io::CheckpointReader at its global step
#      and holds W, b and global_step (checkpoint_dump).
#
#   outputs_test.sh <example> <event_dump> <checkpoint_dump> <dir>
set -u
example=$1 event_dump=$2 checkpoint_dump=$3 dir=$4
fail() { echo "FAILED: $*"; exit 1; }
rm -rf "$dir"
mkdir -p "$dir" || fail "cannot create $dir"
out=$("$example" --dir "$dir" 2>"$dir/stderr.txt") || fail "example: exit status $?"
printf '%s\n' "$out"
printf '%s\n' "$out" | awk '/^W:/ { w = $2; nw++ } /^b:/ { b = $2; nb++ }
  /^global_step:/ { s = $2 } /^loss:/ { l = $2; nl++ }
  END { exit !(nw == 1 && nb == 1 && nl == 1 && w > 1.95 && w < 2.05 && b > -0.1 && b < 0.1 &&
               s == 1000 && l >= 0 && l < 0.09) }' ||
  fail "expected W within 0.05 of 2, b within 0.1 of 0, global_step 1000, loss < 0.09"

count=$(ls "$dir/logs" | grep -c tfevents)
[ "$count" -eq 1 ] || fail "$dir/logs holds $count event files, expected 1"
csv=$("$event_dump" --csv "$dir/logs") || fail "event_dump: exit status $?"
got=$(printf '%s\n' "$csv" | awk -F, '$1 == "global_step/sec" { print $2 }' | tr '\n' ' ')
want=$(seq 2 1000 | tr '\n' ' ')
[ "$got" = "$want" ] || fail "global_step/sec at steps '$got', expected 2 to 1000"
got=$(printf '%s\n' "$csv" | awk -F, '$1 == "loss" { print $2 }' | tr '\n' ' ')
want=$(seq 1 10 991 | tr '\n' ' ')
[ "$got" = "$want" ] || fail "loss at steps '$got', expected '$want'"
others=$(printf '%s\n' "$csv" | awk -F, 'NR > 1 && $1 != "loss" && $1 != "global_step/sec"')
[ -z "$others" ] || fail "unexpected scalars in $dir/logs: $others"

got=$(cd "$dir/checkpoints" && ls | grep '\.index$' | sort -t- -k2 -n | tr '\n' ' ')
want="model.ckpt-600.index model.ckpt-700.index model.ckpt-800.index model.ckpt-900.index model.ckpt-1000.index "
[ "$got" = "$want" ] || fail "$dir/checkpoints holds '$got', expected '$want'"
got=$("$checkpoint_dump" "$dir/checkpoints") || fail "checkpoint_dump: exit status $?"
want="model_checkpoint_path model.ckpt-1000"
for s in 600 700 800 900 1000; do want="$want
all_model_checkpoint_paths model.ckpt-$s"; done
for s in 600 700 800 900 1000; do want="$want
checkpoint model.ckpt-$s global_step $s tensors W,b,global_step"; done
[ "$got" = "$want" ] || fail "checkpoint_dump read:
$got
expected:
$want"
echo "estimator_linear_regression: W, b, loss; logs at every step and every 10; checkpoints 600-1000"
