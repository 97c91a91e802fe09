#!/usr/bin/env bash
# bench/memory.sh: peak resident memory of the Fashion-MNIST example, as a markdown table.
#
# Run from anywhere, after building the example:
#   cmake --build build --target fashion_mnist && bench/memory.sh
# Runs build/examples/fashion_mnist under /usr/bin/time -v twice and reports its "Maximum
# resident set size": one epoch with default settings (--epochs 1), and --epochs 1 --max_steps 10,
# which loads the same data but trains only 10 steps, so the two rows separate the data set's
# memory from training's. Target: at most 100 MB (MiB here: GNU time counts KiB).
# Environment: BUILD_DIR (default build), DATA_DIR (passed as --data_dir; default the example's
# own, /usr/share/datasets/fashion-mnist, the full 60000 + 10000 images).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${BUILD_DIR:-$root/build}
exe=$build/examples/fashion_mnist
target_mib=100

if [ ! -x /usr/bin/time ]; then
  echo "memory.sh: /usr/bin/time not found (apt-get install time)" >&2
  exit 1
fi
if [ ! -x "$exe" ]; then
  echo "memory.sh: $exe not found; build it: cmake --build $build --target fashion_mnist" >&2
  exit 1
fi
data_args=()
if [ -n "${DATA_DIR:-}" ]; then data_args=(--data_dir "$DATA_DIR"); fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# field NAME FILE: the value after "NAME: " in FILE.
field() { sed -n "s/^[[:space:]]*$1: //p" "$2"; }

rows=()
# measure LABEL ARGS...: runs the example, appends a table row.
measure() {
  local label=$1
  shift
  if ! /usr/bin/time -v -o "$work/time" "$exe" "${data_args[@]}" "$@" >"$work/out" 2>"$work/err"
  then
    echo "memory.sh: fashion_mnist $* failed:" >&2
    cat "$work/err" "$work/time" >&2
    exit 1
  fi
  local kib steps accuracy seconds
  kib=$(field "Maximum resident set size (kbytes)" "$work/time")
  steps=$(sed -n 's/^global_step: //p' "$work/out")
  accuracy=$(sed -n 's/^test_accuracy: //p' "$work/out")
  seconds=$(field "Elapsed (wall clock) time (h:mm:ss or m:ss)" "$work/time")
  rows+=("| $label | $(awk -v k="$kib" 'BEGIN { printf "%.1f", k / 1024 }') | $steps | $accuracy | $seconds |")
  last_kib=$kib
}

measure "1 epoch, default settings (\`--epochs 1\`)" --epochs 1
full_kib=$last_kib
measure "data loaded, 10 steps (\`--epochs 1 --max_steps 10\`)" --epochs 1 --max_steps 10

# The example's first line: "train: 60000 examples, test: 10000 examples, 784 features".
read -r train test features < <(sed -n 's/^train: \([0-9]*\) examples, test: \([0-9]*\) examples, \([0-9]*\) features$/\1 \2 \3/p' "$work/out")

echo "Peak resident memory of examples/fashion_mnist (load average: $(cut -d' ' -f1-3 /proc/loadavg))"
echo
echo "| run | max RSS MiB | global step | test accuracy | wall m:ss |"
echo "|---|---|---|---|---|"
printf '%s\n' "${rows[@]}"
echo
awk -v n=$((train + test)) -v f="$features" 'BEGIN {
  printf "The %d images as uint8 are %.1f MiB (as float32 they would be %.1f MiB).\n",
         n, n * f / 1048576, 4 * n * f / 1048576 }'
if [ "$full_kib" -le $((target_mib * 1024)) ]; then
  echo "Target: at most $target_mib MiB for one epoch: met."
else
  echo "Target: at most $target_mib MiB for one epoch: NOT met."
fi
