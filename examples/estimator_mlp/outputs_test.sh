#!/bin/sh
# examples/estimator_mlp/outputs_test.sh (ctest example.estimator_mlp): the example
# on its own random data (1000 x 784, seed 0) with --max_steps 150 --batch_size 1000, so that a
# batch is the whole set (WORKDIR removed first):
#   1. both runs end at global step 150 and log train_accuracy at steps 1 and 101 (two
#      "train_accuracy = " lines each on stderr);
#   2. the warm start: the warm-started run's first logged train_accuracy (its weights are the
#      first run's last, the value computed before the step's update, on the whole set) equals
#      the first run's evaluate accuracy on the same set within 1e-6, and is above chance
#      (0.1) by more than 0.05; a run that kept its random weights would log chance level;
#   3. the first run's event file (read by event_dump) holds the train_accuracy summary at
#      steps 1 and 101 (the session's SummarySaverHook, every 100 steps), the value at step 1
#      the first run's first logged train_accuracy;
#   4. the first run's directory holds model.ckpt-150 (CheckpointSaverHook(save_steps=1000):
#      saves at 0 and at the last step);
#   5. it prints five predicted classes in 0..9;
#   6. --warm_start_from a directory without a checkpoint: exit 1, one stderr line naming it;
#   7. bad flags: a non-zero exit below 128 (no abort) and one stderr line naming the flag.
#
#   outputs_test.sh <example> <event_dump> <workdir>
set -u
exe=$1 event_dump=$2 work=$3
fail() { echo "FAILED: $*"; exit 1; }
rm -rf "$work"
mkdir -p "$work" || fail "cannot create $work"

"$exe" --max_steps 150 --batch_size 1000 --model_dir "$work/run" >"$work/out.txt" \
  2>"$work/err.txt" || fail "example: exit status $?: $(tail -3 "$work/err.txt")"
cat "$work/out.txt"
grep -c '^first run: global_step 150,' "$work/out.txt" | grep -qx 1 ||
  fail "expected 'first run: global_step 150'"
grep -c '^warm-started run: global_step 150,' "$work/out.txt" | grep -qx 1 ||
  fail "expected 'warm-started run: global_step 150'"
n=$(grep -c 'train_accuracy = ' "$work/err.txt")
[ "$n" = 4 ] || fail "expected 4 train_accuracy log lines (steps 1 and 101 per run), got $n"
awk '/^first run.s evaluate accuracy:/ { e = $NF; ne++ }
     /^warm-started run.s first logged train_accuracy:/ { l = $NF; nl++ }
     END { d = e - l; if (d < 0) d = -d
           exit !(ne == 1 && nl == 1 && d <= 1e-6 && l > 0.15) }' "$work/out.txt" ||
  fail "warm start: the first logged train_accuracy must equal the first run's evaluate accuracy (within 1e-6) and exceed 0.15"
"$event_dump" --csv "$work/run/first" >"$work/events.csv" || fail "event_dump: exit status $?"
grep '^train_accuracy,' "$work/events.csv" | cut -d, -f2 | tr '\n' ' ' | grep -qx '1 101 ' ||
  fail "expected train_accuracy summaries at steps 1 and 101, got: $(grep '^train_accuracy,' "$work/events.csv")"
first_logged=$(grep -m1 'train_accuracy = ' "$work/err.txt" | sed 's/.*train_accuracy = \([0-9.]*\).*/\1/')
awk -F, -v l="$first_logged" '$1 == "train_accuracy" && $2 == 1 { d = $4 - l; if (d < 0) d = -d; ok = d <= 1e-6 }
  END { exit !ok }' "$work/events.csv" ||
  fail "the summary at step 1 is not the first logged train_accuracy ($first_logged)"
[ -e "$work/run/first/model.ckpt-150.index" ] || fail "no $work/run/first/model.ckpt-150.index"
grep -Eq '^predicted classes \(first 5\):( [0-9]){5}$' "$work/out.txt" ||
  fail "expected five predicted classes"

# No checkpoint to warm-start from.
mkdir -p "$work/empty"
"$exe" --max_steps 1 --batch_size 1000 --model_dir "$work/run2" --warm_start_from "$work/empty" \
  >/dev/null 2>"$work/err2.txt"
rc=$?
[ "$rc" = 1 ] || fail "--warm_start_from without a checkpoint: exit $rc, expected 1"
grep -v '^INFO:\|^WARNING:' "$work/err2.txt" >"$work/err2_lines.txt"
[ "$(wc -l <"$work/err2_lines.txt")" = 1 ] &&
  grep -q "^estimator_mlp: --warm_start_from $work/empty: no checkpoint" "$work/err2_lines.txt" ||
  fail "--warm_start_from without a checkpoint: expected one line naming it, got: $(cat "$work/err2_lines.txt")"
echo "no checkpoint: $(cat "$work/err2_lines.txt")"

# Bad flags: one line naming the flag, a non-zero exit, no abort.
check_bad() {
  flag=$1; shift
  "$exe" "$@" --model_dir "$work/bad" >/dev/null 2>"$work/bad.txt"
  rc=$?
  { [ "$rc" -ne 0 ] && [ "$rc" -lt 128 ]; } || fail "$*: exit $rc, expected 1..127"
  [ "$(wc -l <"$work/bad.txt")" = 1 ] || fail "$*: expected one stderr line, got: $(cat "$work/bad.txt")"
  grep -q -- "$flag" "$work/bad.txt" || fail "$*: the error does not name $flag: $(cat "$work/bad.txt")"
  echo "$*: $(cat "$work/bad.txt")"
}
check_bad --max_steps --max_steps 0
check_bad --max_steps --max_steps abc
check_bad --batch_size --batch_size 0
check_bad --batch_size --batch_size 1001
check_bad --kernel_init --kernel_init uniform
check_bad --data_dir --data_dir "$work/no_such_dir"
check_bad --data_dir --data_dir ""
check_bad --warm_start_from --warm_start_from ""
check_bad --unknown --unknown 1
echo "PASSED"
