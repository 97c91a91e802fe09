#!/usr/bin/env bash
# bench/lr_hooks_cost.sh: instructions per training step that LearningRateSchedulerHook,
# ReduceLROnPlateauHook, TerminateOnNonFiniteHook and TimerStopHook add to a tiny fixed-size
# SGD step (bench/lr_hooks_cost/driver.cpp), counted by valgrind (callgrind): deterministic,
# unlike wall-clock time on a shared machine.
#
#   bench/lr_hooks_cost.sh [N1 N2]      (default 100 1100)
#
# Per-step instructions = (count(N2) - count(N1)) / (N2 - N1): setup and close cancel out. The
# session without a hook is counted first and last (the difference is the method's noise).
# Skips (exit 0, a message) when valgrind or a C++ compiler is missing. Takes about a minute.
# Environment: CXX (default g++), VARIANTS (space-separated; default: all of the driver's).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
n1=${1:-100}
n2=${2:-1100}
cxx=${CXX:-g++}
if ! command -v valgrind >/dev/null 2>&1; then
  echo "lr_hooks_cost.sh: SKIPPED: valgrind not found (apt-get install valgrind)"
  exit 0
fi
if ! command -v "$cxx" >/dev/null 2>&1; then
  echo "lr_hooks_cost.sh: SKIPPED: no C++ compiler ($cxx)"
  exit 0
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
exe=$work/driver
"$cxx" -std=c++20 -O3 -march=x86-64-v3 -DNDEBUG -Wall -Wextra -I "$root/include" \
  -isystem /usr/include/eigen3 "$root/bench/lr_hooks_cost/driver.cpp" -o "$exe"

count() {  # count <variant> <steps>: instructions executed (callgrind's "Collected")
  valgrind --tool=callgrind --callgrind-out-file=/dev/null "$exe" "$1" "$2" 2>&1 >/dev/null |
    sed -n 's/.*Collected : \([0-9]*\).*/\1/p'
}

read -r -a variants <<< "${VARIANTS:-none scheduler_piecewise scheduler_cosine_warmup plateau_not_firing plateau_every_step terminate_on_non_finite timer_stop timer_stop_every_100 none}"
base=
echo "| variant | per step | added per step |"
echo "|---|---|---|"
for v in "${variants[@]}"; do
  a=$(count "$v" "$n1")
  b=$(count "$v" "$n2")
  if [ -z "$a" ] || [ -z "$b" ]; then
    echo "lr_hooks_cost.sh: no instruction count for $v (valgrind failed?)" >&2
    exit 1
  fi
  p=$(( (b - a) / (n2 - n1) ))
  label=$v
  if [ "$v" = none ]; then
    if [ -z "$base" ]; then base=$p; else label="none (again)"; fi
  fi
  echo "| $label | $p | $(( p - base )) |"
done
