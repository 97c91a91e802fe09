#!/usr/bin/env bash
# bench/hooks_cost.sh: instructions per step of the bench/hooks.cpp session (a fixed-size linear
# regression, bench/hooks_model.hpp) with 0, 1, 5, 10 and 20 hooks that do not fire, fused and
# behind the virtual interface, counted by valgrind (callgrind): deterministic, unlike
# wall-clock nanoseconds on a shared machine.
#
#   bench/hooks_cost.sh [N1 N2]      (default 100 1100)
#
# Builds bench/hooks_cost/driver.cpp with -O3 -march=x86-64-v3 (valgrind does not decode
# AVX-512), counts each variant for N1 and N2 steps: per-step instructions =
# (count(N2) - count(N1)) / (N2 - N1), so setup, the first run (where every timer triggers) and
# close cancel out. Prints a markdown table: per step, added to the same family's 0 hooks, and
# per hook. Takes about a minute. Skips (exit 0, a message) without valgrind or a C++ compiler.
# Families: fused (the hooks say when they are idle: SkipsIdleRuns), fused_called (the same
# hooks without that: called every run), virtual (behind one adapter, TensorFlow-style).
# Environment: CXX (default g++); INCLUDE (the hookfuse headers, default this tree's include/;
# e.g. an older tree's, for before/after figures); VARIANTS (default: "fused:0 fused:1 ...
# virtual:20"; a third field :1 makes the hooks fire every step); KEEP=dir keeps the binary
# and, for each variant, the callgrind profile of N2 steps there (for callgrind_annotate).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
n1=${1:-100}
n2=${2:-1100}
cxx=${CXX:-g++}
include=${INCLUDE:-$root/include}
if ! command -v valgrind >/dev/null 2>&1; then
  echo "hooks_cost.sh: SKIPPED: valgrind not found (apt-get install valgrind)"
  exit 0
fi
if ! command -v "$cxx" >/dev/null 2>&1; then
  echo "hooks_cost.sh: SKIPPED: no C++ compiler ($cxx)"
  exit 0
fi

if [ -n "${KEEP:-}" ]; then
  work=$KEEP
  mkdir -p "$work"
else
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
fi
# One binary per family (HOOKS_COST_KIND, see driver.cpp): a program holds one session, and the
# amount of code in a translation unit changes what GCC inlines.
kinds=(fused fused_called virtual)
for k in 0 1 2; do
  "$cxx" -std=c++20 -O3 -march=x86-64-v3 -DNDEBUG -DHOOKS_COST_KIND=$k -g -Wall -Wextra \
    -I "$include" -isystem /usr/include/eigen3 "$root/bench/hooks_cost/driver.cpp" \
    -o "$work/hooks_cost_driver_${kinds[$k]}" &
done
wait

count() {  # count <kind> <hooks> <firing> <steps> <profile>: instructions executed
  valgrind --tool=callgrind --callgrind-out-file="$5" "$work/hooks_cost_driver_$1" "$1" "$2" \
    "$4" "$3" 2>&1 >/dev/null | sed -n 's/.*Collected : \([0-9]*\).*/\1/p'
}

read -r -a variants <<< "${VARIANTS:-fused:0 fused:1 fused:5 fused:10 fused:20 fused_called:0 fused_called:1 fused_called:5 fused_called:10 fused_called:20 virtual:0 virtual:1 virtual:5 virtual:10 virtual:20}"
declare -A base
echo "| variant | per step | added to 0 hooks | per hook |"
echo "|---|---|---|---|"
for v in "${variants[@]}"; do
  IFS=: read -r kind n firing <<< "$v"
  firing=${firing:-0}
  profile=/dev/null
  [ -n "${KEEP:-}" ] && profile=$work/callgrind.$kind.$n.$firing
  a=$(count "$kind" "$n" "$firing" "$n1" /dev/null)
  b=$(count "$kind" "$n" "$firing" "$n2" "$profile")
  if [ -z "$a" ] || [ -z "$b" ]; then
    echo "hooks_cost.sh: no instruction count for $v (valgrind failed?)" >&2
    exit 1
  fi
  p=$(( (b - a) / (n2 - n1) ))
  key=$kind:$firing
  [ "$n" = 0 ] && base[$key]=$p
  if [ -n "${base[$key]:-}" ] && [ "$n" != 0 ]; then
    added=$(( p - base[$key] ))
    per=$(awk -v a="$added" -v n="$n" 'BEGIN { printf "%.1f", a / n }')
    echo "| $kind, $n hook$([ "$n" = 1 ] || echo s)$([ "$firing" = 1 ] && echo ", firing") | $p | +$added | $per |"
  else
    echo "| $kind, $n hook$([ "$n" = 1 ] || echo s)$([ "$firing" = 1 ] && echo ", firing") | $p | | |"
  fi
done
