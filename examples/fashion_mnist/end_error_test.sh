#!/bin/sh
# examples/fashion_mnist/end_error_test.sh EXE WORKDIR: an error in a hook's end() makes the
# example fail (ctest example.fashion_mnist_end_error). Exit 77 (skipped) without the
# Fashion-MNIST files.
# The error is injected without touching the example: D/model.ckpt-20.index exists as a
# directory, so the CheckpointSaverHook's final save at step 20 (in its end(), at close()) cannot
# write its index file. Expected: exit status 1, one "fashion_mnist: ..." line naming that file,
# no test accuracy printed, and the step-0 checkpoint intact. (Before close() raised, the
# session's destructor logged the error and the example printed its accuracy and exited 0.)
set -eu
exe=$1
work=$2
. "$(dirname "$0")/test_lib.sh"
require_fashion_mnist
rm -rf "$work"
mkdir -p "$work/D/model.ckpt-20.index"

status=0
"$exe" --model_dir "$work/D" --save_checkpoint_steps 1000 --max_steps 20 --batch_size 32 \
  >"$work/stdout.txt" 2>"$work/stderr.txt" || status=$?
cat "$work/stdout.txt"
[ "$status" -eq 1 ] || fail "exit status $status, expected 1 (stderr: $(tail -3 "$work/stderr.txt"))"
lines=$(grep -c '^fashion_mnist: ' "$work/stderr.txt" || true)
[ "$lines" -eq 1 ] || fail "$lines 'fashion_mnist: ' lines on stderr, expected 1"
grep '^fashion_mnist: ' "$work/stderr.txt" | grep -q 'model.ckpt-20' ||
  fail "the error does not name model.ckpt-20: $(grep '^fashion_mnist: ' "$work/stderr.txt")"
if grep -q '^test_accuracy:' "$work/stdout.txt"; then fail "the example went on to evaluate"; fi
[ -f "$work/D/model.ckpt-0.index" ] || fail "no step-0 checkpoint"
echo "PASSED: exit status 1 with: $(grep '^fashion_mnist: ' "$work/stderr.txt")"
