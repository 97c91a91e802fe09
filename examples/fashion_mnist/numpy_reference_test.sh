#!/bin/sh
# examples/fashion_mnist/numpy_reference_test.sh EXE PYTHON3 SCRIPT WORKDIR: the example's Adam
# training against scripts/fashion_mnist_numpy_reference.py, a plain-numpy version of the same
# training that shares no code with hookfuse (ctest example.fashion_mnist_numpy_reference).
# With --rng hookfuse the script draws the example's initial weights and batch order, so after
# 300 steps of seed 7 both must give the same global step, test loss (within 0.0003; the example
# prints 4 digits, float32 rounding moves it by about 1e-5 here) and test accuracy (within 0.001,
# 10 images). A learning rate 5% off already moves the loss by about 0.0005, and beta powers
# advanced twice per step by 0.02; a change to the initial weights, the batches, the model's
# forward or backward pass or the evaluation shows the same way. (Adam's step does not depend on
# the gradient's scale, so a sum in place of the batch mean would show only through epsilon.)
# Exit 77 (skipped) without the Fashion-MNIST files, python3 or numpy.
set -eu
exe=$1
python=$2
script=$3
work=$4
. "$(dirname "$0")/test_lib.sh"
require_fashion_mnist
if [ -z "$python" ] || ! "$python" -c "import numpy" 2>/dev/null; then
  echo "SKIPPED: no python3 with numpy (Debian: python3-numpy)"
  exit 77
fi
fresh_dir "$work"

"$exe" --optimizer adam --learning_rate 0.001 --seed 7 --max_steps 300 >"$work/hookfuse.txt" 2>&1 ||
  fail "example: $(tail -3 "$work/hookfuse.txt")"
"$python" "$script" --rng hookfuse --seed 7 --max_steps 300 >"$work/numpy.txt" 2>&1 ||
  fail "numpy reference: $(tail -3 "$work/numpy.txt")"
value() { sed -n "s/^$1: //p" "$2" | tail -1; }
for check in global_step:0 test_loss:0.0003 test_accuracy:0.001; do
  key=${check%%:*}
  tol=${check#*:}
  a=$(value "$key" "$work/hookfuse.txt")
  b=$(value "$key" "$work/numpy.txt")
  [ -n "$a" ] && [ -n "$b" ] || fail "$key missing: hookfuse '$a', numpy '$b'"
  echo "$key: hookfuse $a, numpy $b"
  awk -v a="$a" -v b="$b" -v t="$tol" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= t + 1e-9) }' ||
    fail "$key differs by more than $tol: hookfuse $a, numpy $b"
done
echo "PASSED"
