#!/usr/bin/env bash
# bench/compile_time.sh: compile time of a hookfuse session with 1, 10 and 30 hooks
# (bench/compile/hooks_n.cpp) and of the Fashion-MNIST example (examples/fashion_mnist), and the
# example's binary size, as a markdown table on stdout. Not part of ctest.
#
# Run from anywhere: bench/compile_time.sh
# Each translation unit is compiled to an object file (-c) REPEATS times (default 3) under
# /usr/bin/time; the table shows the median wall and user CPU seconds. The flags are the ones
# CMake gives examples and benchmarks in a Release build (CMAKE_CXX_FLAGS_RELEASE, then
# HOOKFUSE_FAST_FLAGS, then hookfuse_warnings; the example also gets fmt's -DFMT_SHARED). The
# example is then linked as CMake links it (with libfmt and zlib) and its size reported
# unstripped and stripped: file bytes (stat) and the text/data/bss sections (size).
# Environment: CXX (default c++), HOOK_COUNTS (default "1 10 30"), REPEATS (default 3),
# NATIVE=0 to drop -march=native (like -DHOOKFUSE_NATIVE_ARCH=OFF).
# Compiles one file at a time; another build running beside it inflates the wall times, so the
# load average is printed before and after.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cxx=${CXX:-c++}
read -r -a hook_counts <<<"${HOOK_COUNTS:-1 10 30}"
repeats=${REPEATS:-3}

if [ ! -x /usr/bin/time ]; then
  echo "compile_time.sh: /usr/bin/time not found (apt-get install time)" >&2
  exit 1
fi

fast_flags=(-O3)
if [ "${NATIVE:-1}" != 0 ]; then fast_flags+=(-march=native); fi
flags=(-DBOOST_ALL_NO_LIB -I"$root/include" -isystem /usr/include/eigen3 -O3 -DNDEBUG
       "${fast_flags[@]}" -Wall -Wextra -Wpedantic -Wconversion
       -Wno-aggressive-loop-optimizations -Wno-restrict -std=c++20)

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

load() { cut -d' ' -f1-3 /proc/loadavg; }

# median FILE: the median of the numbers in FILE, one a line.
median() { sort -g "$1" | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

rows=()
# timed LABEL OUTPUT ARGS...: compiles REPEATS times, appends a table row.
timed() {
  local label=$1 out=$2
  shift 2
  : >"$work/wall"
  : >"$work/user"
  local runs=()
  for _ in $(seq "$repeats"); do
    /usr/bin/time -f '%e %U' -o "$work/time" "$cxx" "${flags[@]}" "$@" -c -o "$out"
    read -r wall user <"$work/time"
    echo "$wall" >>"$work/wall"
    echo "$user" >>"$work/user"
    runs+=("$wall")
  done
  rows+=("| $label | $(median "$work/wall") | $(median "$work/user") | ${runs[*]} |")
}

load_before=$(load)
for n in "${hook_counts[@]}"; do
  timed "session with $n hook$([ "$n" = 1 ] || echo s) (bench/compile/hooks_n.cpp)" \
    "$work/hooks_$n.o" -DHOOKFUSE_BENCH_HOOKS="$n" "$root/bench/compile/hooks_n.cpp"
done
example_sources=("$root"/examples/fashion_mnist/*.cpp)
example_objects=()
for source in "${example_sources[@]}"; do
  object="$work/$(basename "$source" .cpp).o"
  timed "Fashion-MNIST example (examples/fashion_mnist/$(basename "$source"))" "$object" \
    -DFMT_SHARED "$source"
  example_objects+=("$object")
done
load_after=$(load)

"$cxx" -O3 -DNDEBUG "${example_objects[@]}" -o "$work/fashion_mnist" -lfmt -lz
strip -o "$work/fashion_mnist.stripped" "$work/fashion_mnist"

echo "Compile time, $("$cxx" --version | head -n1), ${fast_flags[*]}, median of $repeats" \
  "(load average before: $load_before, after: $load_after)"
echo
echo "| translation unit | wall s | user CPU s | wall s, each run |"
echo "|---|---|---|---|"
printf '%s\n' "${rows[@]}"
echo
echo "Fashion-MNIST example binary"
echo
echo "| binary | file bytes | text | data | bss |"
echo "|---|---|---|---|---|"
for kind in unstripped stripped; do
  file="$work/fashion_mnist"
  if [ "$kind" = stripped ]; then file="$work/fashion_mnist.stripped"; fi
  read -r text data bss _ < <(size "$file" | tail -n1)
  echo "| $kind | $(stat -c %s "$file") | $text | $data | $bss |"
done
