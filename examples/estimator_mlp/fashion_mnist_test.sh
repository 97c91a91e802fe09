#!/bin/sh
# examples/estimator_mlp/fashion_mnist_test.sh EXE DATA_DIR WORKDIR (ctest
# example.estimator_mlp_fashion_mnist): the example at the TF program's settings (10000 steps
# per run, batch 100) on Fashion-MNIST with --kernel_init glorot; the warm-started run's test
# accuracy must be at least 0.86. Exit 77 (skipped) without the Fashion-MNIST files.
set -u
exe=$1 data=$2 work=$3
if [ ! -e "$data/train-images-idx3-ubyte.gz" ] && [ ! -e "$data/train-images-idx3-ubyte" ]; then
  echo "SKIPPED: Fashion-MNIST not found in $data"
  exit 77
fi
fail() { echo "FAILED: $*"; exit 1; }
rm -rf "$work"
mkdir -p "$work" || fail "cannot create $work"
"$exe" --data_dir "$data" --kernel_init glorot --model_dir "$work/run" >"$work/out.txt" \
  2>"$work/err.txt" || fail "example: exit status $?: $(tail -3 "$work/err.txt")"
cat "$work/out.txt"
awk '/^test_accuracy:/ { a = $2; n++ } END { exit !(n == 1 && a >= 0.86) }' "$work/out.txt" ||
  fail "expected test_accuracy >= 0.86"
echo "PASSED"
