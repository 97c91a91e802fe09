#!/usr/bin/env bash
# bench/optimizer_cost.sh: instructions per training step of the Fashion-MNIST MLP with the
# example's four hooks (bench/optimizer_cost/driver.cpp, the session of bench/step.cpp's
# BM_hookfuse_step_optimizer) with SGD, Momentum and Adam at batch 32 and 128, counted by
# valgrind (callgrind): deterministic, unlike wall-clock time on a shared machine.
#
#   bench/optimizer_cost.sh [N1 N2]      (default 2 6)
#
# Builds the driver with -O3 -march=x86-64-v3 (valgrind does not decode AVX-512); per-step
# instructions = (count(N2) - count(N1)) / (N2 - N1), so setup and the first run cancel out.
# A batch-128 step takes a few seconds under callgrind: the default run takes about 3 minutes.
# Skips (exit 0, a message) without valgrind or a C++ compiler.
# Environment: CXX (default g++), BATCHES (default "32 128"), OPTIMIZERS (default
# "sgd momentum adam").
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
n1=${1:-2}
n2=${2:-6}
cxx=${CXX:-g++}
if ! command -v valgrind >/dev/null 2>&1; then
  echo "optimizer_cost.sh: SKIPPED: valgrind not found (apt-get install valgrind)"
  exit 0
fi
if ! command -v "$cxx" >/dev/null 2>&1; then
  echo "optimizer_cost.sh: SKIPPED: no C++ compiler ($cxx)"
  exit 0
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
exe=$work/driver
"$cxx" -std=c++20 -O3 -march=x86-64-v3 -DNDEBUG -Wall -Wextra -I "$root/include" \
  -isystem /usr/include/eigen3 "$root/bench/optimizer_cost/driver.cpp" -o "$exe"

count() {  # count <optimizer> <batch> <steps>: instructions executed
  valgrind --tool=callgrind --callgrind-out-file=/dev/null "$exe" "$1" "$2" "$3" 2>&1 >/dev/null |
    sed -n 's/.*Collected : \([0-9]*\).*/\1/p'
}

read -r -a batches <<< "${BATCHES:-32 128}"
read -r -a optimizers <<< "${OPTIMIZERS:-sgd momentum adam}"
echo "| batch | optimizer | instructions per step | over SGD | ratio to SGD |"
echo "|---|---|---|---|---|"
for b in "${batches[@]}"; do
  sgd=
  for o in "${optimizers[@]}"; do
    x=$(count "$o" "$b" "$n1")
    y=$(count "$o" "$b" "$n2")
    if [ -z "$x" ] || [ -z "$y" ]; then
      echo "optimizer_cost.sh: no instruction count for $o at batch $b (valgrind failed?)" >&2
      exit 1
    fi
    p=$(( (y - x) / (n2 - n1) ))
    [ "$o" = sgd ] && sgd=$p
    if [ -n "$sgd" ]; then
      echo "| $b | $o | $p | $(printf "%+d" $(( p - sgd ))) | $(awk -v p="$p" -v s="$sgd" 'BEGIN { printf "%.3f", p / s }') |"
    else
      echo "| $b | $o | $p | | |"
    fi
  done
done
