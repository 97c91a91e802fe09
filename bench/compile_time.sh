#!/usr/bin/env bash
# bench/compile_time.sh: compile time, as markdown tables on stdout. Not part of ctest.
#
# 1. Side by side (issue 12): the Fashion-MNIST step in four forms, each compiled at -O0 and at
#    the Release flags (-O3 -march=native), wall seconds and peak compiler memory:
#      (a) bench/compile/session_step.cpp: the model, a MonitoredTrainingSession with the
#          example's four hooks and one run(), through the umbrella header hookfuse.hpp;
#      (a') the same file with -DHOOKFUSE_BENCH_LEAN_INCLUDES: only the headers it uses;
#      (b) bench/compile/hand_step.cpp: the same step written by hand with Eigen;
#      (c) bench/compile/torch_step.cpp: the same with LibTorch, when its headers are found
#          (torch/torch.h under /usr/include, or LIBTORCH=<prefix>); otherwise "skipped";
#      (d) examples/fashion_mnist/main.cpp as a whole.
#    Rounds alternate the translation units (a b c d, a b c d, ...) so that load from other
#    processes hits every variant alike; the table shows medians of REPEATS rounds (wall and
#    user CPU seconds) and the ratios (a)/(b). Peak memory is GNU time's %M, the "Maximum
#    resident set size" of `/usr/bin/time -v` (the compiler proper, cc1plus, the largest
#    process of the driver).
# 2. A session with 1, 10 and 30 hooks (bench/compile/hooks_n.cpp) and a model of 2, 8, 16 and 32
#    dense layers (bench/compile/layers_n.cpp), at the Release flags and at -O0, against the
#    count, with the CPU seconds per added hook or layer and the object file's size.
# 3. The Fashion-MNIST example (examples/fashion_mnist) at the Release flags, and its binary size.
#
# Run from anywhere: bench/compile_time.sh
# Each translation unit is compiled to an object file (-c) under /usr/bin/time. The flags are
# the ones CMake gives examples and benchmarks in a Release build (CMAKE_CXX_FLAGS_RELEASE, then
# HOOKFUSE_FAST_FLAGS, then hookfuse_warnings and hookfuse's -DLEVELDB_SHARED_LIBRARY; the
# example also gets fmt's -DFMT_SHARED); the -O0 column replaces -O3 -march=native by -O0 and
# keeps everything else (no -g). The example is then linked as CMake links it (with libfmt,
# zlib, LevelDB and Snappy) and its size reported unstripped and stripped: file bytes (stat) and
# the text/data/bss sections (size).
# Environment: CXX (default c++), HOOK_COUNTS (default "1 10 30"), LAYER_COUNTS (default
# "2 8 16 32"), GROWTH_LEVELS (default "O3 O0": the growth tables' levels, each its own
# alternation), REPEATS (default 3), NATIVE=0 to drop -march=native (like
# -DHOOKFUSE_NATIVE_ARCH=OFF), PARTS (default "side growth example": which of 1, 2, 3 to run),
# BASELINE_INCLUDE=<dir>: also compile (a) and (d) against the hookfuse headers in <dir> (an
# older tree: `git archive <commit> include | tar -x -C /tmp/before` gives /tmp/before/include),
# alternating with the rest, for before/after figures measured side by side.
# Compiles one file at a time; another build running beside it inflates the wall times, so the
# load average is printed before and after each part.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cxx=${CXX:-c++}
read -r -a hook_counts <<<"${HOOK_COUNTS:-1 10 30}"
read -r -a layer_counts <<<"${LAYER_COUNTS:-2 8 16 32}"
read -r -a parts <<<"${PARTS:-side growth example}"
read -r -a growth_levels <<<"${GROWTH_LEVELS:-O3 O0}"
repeats=${REPEATS:-3}

if [ ! -x /usr/bin/time ]; then
  echo "compile_time.sh: /usr/bin/time not found (apt-get install time)" >&2
  exit 1
fi

fast_flags=(-O3)
if [ "${NATIVE:-1}" != 0 ]; then fast_flags+=(-march=native); fi
common_flags=(-DBOOST_ALL_NO_LIB -DLEVELDB_SHARED_LIBRARY -I"$root/include"
              -isystem /usr/include/eigen3 -DNDEBUG
              -Wall -Wextra -Wpedantic -Wconversion -Wno-aggressive-loop-optimizations
              -Wno-restrict -std=c++20)
# level_flags LEVEL: the optimisation flags of a column, O3 (Release: -O3 -DNDEBUG, then
# HOOKFUSE_FAST_FLAGS) or O0.
level_flags() {
  if [ "$1" = O0 ]; then echo -O0; else echo -O3 "${fast_flags[@]}"; fi
}
level_title() {
  if [ "$1" = O0 ]; then echo "-O0"; else echo "${fast_flags[*]}"; fi
}

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

load() { cut -d' ' -f1-3 /proc/loadavg; }
has_part() { [[ " ${parts[*]} " == *" $1 "* ]]; }

# median FILE: the median of the numbers in FILE, one a line.
median() { sort -g "$1" | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
# ratio A B: A / B with two decimals.
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }

# The translation units: tu NAME SOURCE EXTRA_FLAGS... registers one.
declare -A tu_source tu_extra
tu() {
  local name=$1 source=$2
  shift 2
  tu_source[$name]=$source
  tu_extra[$name]="$*"
}

# compile LEVEL NAME: compiles NAME once at LEVEL to $work/LEVEL.NAME.o and appends wall seconds,
# user CPU seconds and peak memory (MiB) to $work/LEVEL.NAME.{wall,user,mem}. The compiler's
# warnings (GCC 12's AVX-512 false positives in Eigen's headers, which hookfuse/detail/eigen.hpp
# silences and hand_step.cpp does not) are shown only when it fails.
compile() {
  local level=$1 name=$2 extra
  read -r -a extra <<<"${tu_extra[$name]}"
  # shellcheck disable=SC2046
  # The TU's own flags first: a BASELINE_INCLUDE -I is searched before the tree's.
  if ! /usr/bin/time -f '%e %U %M' -o "$work/time" "$cxx" "${extra[@]}" "${common_flags[@]}" \
      $(level_flags "$level") "${tu_source[$name]}" -c \
      -o "$work/$level.$name.o" 2>"$work/log"; then
    cat "$work/log" >&2
    echo "compile_time.sh: $name failed to compile at $(level_title "$level")" >&2
    exit 1
  fi
  local wall user kib
  read -r wall user kib <"$work/time"
  echo "$wall" >>"$work/$level.$name.wall"
  echo "$user" >>"$work/$level.$name.user"
  awk -v k="$kib" 'BEGIN { printf "%.0f\n", k / 1024 }' >>"$work/$level.$name.mem"
}

# alternate LEVEL NAMES...: REPEATS rounds, each compiling every NAME once, in order.
alternate() {
  local level=$1 name
  shift
  for _ in $(seq "$repeats"); do
    for name in "$@"; do compile "$level" "$name"; done
  done
}

# cell LEVEL NAME KIND: the median of LEVEL.NAME.KIND (wall, user, mem).
cell() { median "$work/$1.$2.$3"; }
runs() { paste -sd' ' "$work/$1.$2.wall"; }

# LibTorch's headers: LIBTORCH=<prefix> (the unpacked libtorch zip), or Debian's libtorch-dev.
torch_flags=()
if [ -n "${LIBTORCH:-}" ] && [ -f "$LIBTORCH/include/torch/csrc/api/include/torch/torch.h" ]; then
  torch_flags=(-isystem "$LIBTORCH/include" -isystem "$LIBTORCH/include/torch/csrc/api/include")
elif [ -f /usr/include/torch/csrc/api/include/torch/torch.h ]; then
  torch_flags=(-isystem /usr/include/torch/csrc/api/include)
elif [ -f /usr/include/torch/torch.h ]; then
  torch_flags=(-isystem /usr/include)
fi

tu a "$root/bench/compile/session_step.cpp"
tu a_lean "$root/bench/compile/session_step.cpp" -DHOOKFUSE_BENCH_LEAN_INCLUDES
if [ -n "${BASELINE_INCLUDE:-}" ]; then
  # Its -I comes before the tree's own, so hookfuse's headers are taken from there.
  tu a_base "$root/bench/compile/session_step.cpp" -I"$BASELINE_INCLUDE"
  tu d_base "$root/examples/fashion_mnist/main.cpp" -DFMT_SHARED -I"$BASELINE_INCLUDE"
fi
tu b "$root/bench/compile/hand_step.cpp"
tu c "$root/bench/compile/torch_step.cpp" "${torch_flags[@]}"
tu d "$root/examples/fashion_mnist/main.cpp" -DFMT_SHARED
for n in "${hook_counts[@]}"; do tu "hooks_$n" "$root/bench/compile/hooks_n.cpp" -DHOOKFUSE_BENCH_HOOKS="$n"; done
for n in "${layer_counts[@]}"; do tu "layers_$n" "$root/bench/compile/layers_n.cpp" -DHOOKFUSE_BENCH_LAYERS="$n"; done

echo "Compile time, $("$cxx" --version | head -n1), median of $repeats, object files (-c)"
echo

if has_part side; then
  side=(a a_lean b)
  if [ ${#torch_flags[@]} -gt 0 ]; then side+=(c); fi
  side+=(d)
  if [ -n "${BASELINE_INCLUDE:-}" ]; then side+=(a_base d_base); fi
  load_before=$(load)
  for level in O0 O3; do alternate "$level" "${side[@]}"; done
  load_after=$(load)
  echo "## Side by side: the Fashion-MNIST step (load average before: $load_before, after: $load_after)"
  echo
  echo "| translation unit | $(level_title O0) wall s | CPU s | peak MiB | $(level_title O3) wall s | CPU s | peak MiB | wall s, each run ($(level_title O0); $(level_title O3)) |"
  echo "|---|---|---|---|---|---|---|---|"
  declare -A side_label=(
    [a]="(a) hookfuse session, four hooks, one run() (bench/compile/session_step.cpp)"
    [a_lean]="(a') the same, including only the headers it uses (-DHOOKFUSE_BENCH_LEAN_INCLUDES)"
    [b]="(b) hand-written Eigen step (bench/compile/hand_step.cpp)"
    [c]="(c) LibTorch step (bench/compile/torch_step.cpp)"
    [d]="(d) Fashion-MNIST example (examples/fashion_mnist/main.cpp)"
    [a_base]="(a) with the headers of BASELINE_INCLUDE"
    [d_base]="(d) with the headers of BASELINE_INCLUDE")
  for name in a a_lean b c d a_base d_base; do
    if [ ! -f "$work/O0.$name.wall" ] && [ "$name" != c ]; then continue; fi
    if [ "$name" = c ] && [ ${#torch_flags[@]} -eq 0 ]; then
      echo "| ${side_label[c]} | skipped: LibTorch not installed | | | | | | |"
      continue
    fi
    echo "| ${side_label[$name]} | $(cell O0 "$name" wall) | $(cell O0 "$name" user) |" \
      "$(cell O0 "$name" mem) | $(cell O3 "$name" wall) | $(cell O3 "$name" user) |" \
      "$(cell O3 "$name" mem) | $(runs O0 "$name"); $(runs O3 "$name") |"
  done
  echo
  echo "| ratio of medians | $(level_title O0) wall | CPU | memory | $(level_title O3) wall | CPU | memory |"
  echo "|---|---|---|---|---|---|---|"
  pairs=("a b" "a_lean b" "d b")
  if [ -n "${BASELINE_INCLUDE:-}" ]; then pairs+=("a_base b" "a a_base" "d d_base"); fi
  for pair in "${pairs[@]}"; do
    read -r x y <<<"$pair"
    echo "| ($x) / ($y) | $(ratio "$(cell O0 "$x" wall)" "$(cell O0 "$y" wall)") |" \
      "$(ratio "$(cell O0 "$x" user)" "$(cell O0 "$y" user)") |" \
      "$(ratio "$(cell O0 "$x" mem)" "$(cell O0 "$y" mem)") |" \
      "$(ratio "$(cell O3 "$x" wall)" "$(cell O3 "$y" wall)") |" \
      "$(ratio "$(cell O3 "$x" user)" "$(cell O3 "$y" user)") |" \
      "$(ratio "$(cell O3 "$x" mem)" "$(cell O3 "$y" mem)") |"
  done
  echo
fi

if has_part growth; then
  names=()
  for n in "${hook_counts[@]}"; do names+=("hooks_$n"); done
  for n in "${layer_counts[@]}"; do names+=("layers_$n"); done
  for level in "${growth_levels[@]}"; do
    load_before=$(load)
    alternate "$level" "${names[@]}"
    load_after=$(load)
    echo "## Growth, $(level_title "$level") (load average before: $load_before, after: $load_after)"
    echo
    echo "The object file's size is deterministic (the same bytes every run); \"per added\" is the"
    echo "median CPU time's growth from the row above, divided by the added hooks or layers."
    echo
    echo "| translation unit | wall s | user CPU s | per added, CPU s | peak MiB | object bytes | wall s, each run |"
    echo "|---|---|---|---|---|---|---|"
    for kind in hooks layers; do
      prev_n='' prev_user=''
      if [ "$kind" = hooks ]; then counts=("${hook_counts[@]}"); else counts=("${layer_counts[@]}"); fi
      for n in "${counts[@]}"; do
        name="${kind}_$n"
        user=$(cell "$level" "$name" user)
        per=''
        if [ -n "$prev_n" ]; then
          per=$(awk -v u="$user" -v p="$prev_user" -v n="$n" -v m="$prev_n" \
            'BEGIN { printf "%.2f", (u - p) / (n - m) }')
        fi
        if [ "$kind" = hooks ]; then
          label="session with $n hook$([ "$n" = 1 ] || echo s) (bench/compile/hooks_n.cpp)"
        else
          label="model with $n dense layers (bench/compile/layers_n.cpp)"
        fi
        echo "| $label | $(cell "$level" "$name" wall) | $user | $per |" \
          "$(cell "$level" "$name" mem) | $(stat -c %s "$work/$level.$name.o") |" \
          "$(runs "$level" "$name") |"
        prev_n=$n prev_user=$user
      done
    done
    echo
  done
fi

if has_part example; then
  if [ ! -f "$work/O3.d.wall" ]; then
    load_before=$(load)
    alternate O3 d
    load_after=$(load)
  fi
  echo "## Fashion-MNIST example, $(level_title O3) (load average before: $load_before, after: $load_after)"
  echo
  echo "| translation unit | wall s | user CPU s | peak MiB | wall s, each run |"
  echo "|---|---|---|---|---|"
  echo "| Fashion-MNIST example (examples/fashion_mnist/main.cpp) | $(cell O3 d wall) |" \
    "$(cell O3 d user) | $(cell O3 d mem) | $(runs O3 d) |"
  echo
  "$cxx" -O3 -DNDEBUG "$work/O3.d.o" -o "$work/fashion_mnist" -lfmt -lz -lleveldb -lsnappy
  strip -o "$work/fashion_mnist.stripped" "$work/fashion_mnist"
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
fi
