#!/usr/bin/env bash
# bench/hook_cost.sh: instructions per training step that a non-firing CheckpointSaverHook,
# SummarySaverHook or StepCounterHook(output_dir) adds to the batch-32 Fashion-MNIST step with
# the example's four hooks (and what a SummarySaverHook firing every step adds), counted by
# valgrind (callgrind): deterministic, unlike wall-clock time on a shared machine.
#
#   bench/hook_cost.sh [N1 N2]      (default 5 45)
#
# Builds bench/hook_cost/driver.cpp with -O3 -march=x86-64-v3 (AVX2 + FMA: valgrind does not
# decode AVX-512, which -march=native would use on such a host), runs it under callgrind for N1
# and N2 steps per variant, and prints a markdown table: per-step instructions =
# (count(N2) - count(N1)) / (N2 - N1), so the session's setup, first run and close cancel out.
# The session without the extra hook is counted twice (first and last row): the difference
# between the two is the method's noise. Valgrind counts user-space instructions only: the
# kernel's side of a write(2) is not in the counts.
# Under callgrind a step takes about a second here: the default run takes about 6 minutes.
# Skips (exit 0, a message) when valgrind or a C++ compiler is missing.
# Environment: CXX (default g++), WORK (build directory, default a temporary one), VARIANTS
# (space-separated, default the list below; also: profiler, profiler_every_step).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
n1=${1:-5}
n2=${2:-45}
cxx=${CXX:-g++}

if ! command -v valgrind >/dev/null 2>&1; then
  echo "hook_cost.sh: SKIPPED: valgrind not found (apt-get install valgrind)"
  exit 0
fi
if ! command -v "$cxx" >/dev/null 2>&1; then
  echo "hook_cost.sh: SKIPPED: no C++ compiler ($cxx)"
  exit 0
fi

work=${WORK:-$(mktemp -d)}
[ -n "${WORK:-}" ] || trap 'rm -rf "$work"' EXIT
exe=$work/hook_cost_driver
if [ ! -x "$exe" ] || [ "$root/bench/hook_cost/driver.cpp" -nt "$exe" ] ||
   [ "$root/bench/hook_session.hpp" -nt "$exe" ]; then
  echo "building $exe (-O3 -march=x86-64-v3)..." >&2
  "$cxx" -std=c++20 -O3 -march=x86-64-v3 -DNDEBUG -Wall -Wextra \
    -Wno-aggressive-loop-optimizations -Wno-restrict \
    -I "$root/include" -isystem /usr/include/eigen3 \
    "$root/bench/hook_cost/driver.cpp" -o "$exe" -lleveldb -lsnappy -lz -pthread
fi

count() {  # count <variant> <steps>: instructions executed (callgrind's "Collected")
  valgrind --tool=callgrind --callgrind-out-file=/dev/null "$exe" "$1" "$2" 2>&1 >/dev/null |
    sed -n 's/.*Collected : \([0-9]*\).*/\1/p'
}

read -r -a variants <<< "${VARIANTS:-none checkpoint_saver summary_saver step_counter_output_dir summary_saver_every_step none}"
base=
echo "| variant | instructions, $n1 steps | instructions, $n2 steps | per step | added per step | ratio to none |"
echo "|---|---|---|---|---|---|"
for v in "${variants[@]}"; do
  a=$(count "$v" "$n1")
  b=$(count "$v" "$n2")
  if [ -z "$a" ] || [ -z "$b" ]; then
    echo "hook_cost.sh: no instruction count for $v (valgrind failed?)" >&2
    exit 1
  fi
  p=$(( (b - a) / (n2 - n1) ))
  label=$v
  if [ "$v" = none ]; then
    if [ -z "$base" ]; then base=$p; else label="none (again)"; fi
  fi
  awk -v v="$label" -v a="$a" -v b="$b" -v p="$p" -v base="$base" 'BEGIN {
    printf "| %s | %d | %d | %d | %+d | %.5f |\n", v, a, b, p, p - base, p / base }'
done
