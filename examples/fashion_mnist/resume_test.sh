#!/bin/sh
# examples/fashion_mnist/resume_test.sh EXE WORKDIR: the checkpoint round trip of the example
# (ctest example.fashion_mnist_resume). Exit 77 (skipped) without the Fashion-MNIST files.
#   1. --model_dir D --save_checkpoint_steps 50 --max_steps 120: D holds exactly
#      model.ckpt-0, -50, -100, -120 (.index and .data-00000-of-00001) and `checkpoint`
#      (besides the event file),
#      whose model_checkpoint_path is ".../D/model.ckpt-120" (TF1's Saver writes the path
#      absolute when the directory is absolute, relative to it otherwise);
#   2. the same with --max_steps 250 resumes at 120 and ends at 250;
#   3. its test accuracy equals an uninterrupted --max_steps 250 run's within 0.005.
# (Small step counts: the sanitizer build runs this too, about 10x slower per step.)
set -eu
exe=$1
work=$2
. "$(dirname "$0")/test_lib.sh"
require_fashion_mnist
fresh_dir "$work"

"$exe" --model_dir "$work/D" --save_checkpoint_steps 50 --max_steps 120 >"$work/run1.txt" 2>&1 ||
  fail "first run: $(tail -3 "$work/run1.txt")"
# (The event file of the session's default summary hooks is there too: summaries_test.sh.)
got=$(ls "$work/D" | grep -v '^events\.out\.tfevents\.' | sort | tr '\n' ' ')
want=$(for s in 0 50 100 120; do
  echo "model.ckpt-$s.index"; echo "model.ckpt-$s.data-00000-of-00001"; done | { cat; echo checkpoint; } | sort | tr '\n' ' ')
[ "$got" = "$want" ] || fail "files after 120 steps: '$got', expected '$want'"
case $work in
  /*) want_path="$work/D/model.ckpt-120" ;;
  *) want_path="model.ckpt-120" ;;
esac
[ "$(head -1 "$work/D/checkpoint")" = "model_checkpoint_path: \"$want_path\"" ] ||
  fail "state file: $(head -1 "$work/D/checkpoint"), expected the path $want_path"

"$exe" --model_dir "$work/D" --save_checkpoint_steps 50 --max_steps 250 >"$work/run2.txt" 2>&1 ||
  fail "resumed run: $(tail -3 "$work/run2.txt")"
grep -qx 'resumed at global_step: 120' "$work/run2.txt" || fail "the second run did not resume at 120"
grep -qx 'global_step: 250' "$work/run2.txt" || fail "the second run did not end at 250"

"$exe" --max_steps 250 >"$work/run3.txt" 2>&1 || fail "uninterrupted run: $(tail -3 "$work/run3.txt")"
resumed=$(sed -n 's/^test_accuracy: //p' "$work/run2.txt")
whole=$(sed -n 's/^test_accuracy: //p' "$work/run3.txt")
echo "test_accuracy resumed: $resumed, uninterrupted: $whole"
awk -v a="$resumed" -v b="$whole" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(a != "" && d <= 0.005) }' ||
  fail "accuracies differ by more than 0.005"
echo "PASSED"
