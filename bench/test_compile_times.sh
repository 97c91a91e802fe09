#!/usr/bin/env bash
# bench/test_compile_times.sh: CPU seconds and peak compiler memory to compile each unit test
# (tests/test_*.cpp) to an object file, slowest first, as a markdown table on stdout. Issue 12
# asks that no test file take more than 60 s. Not part of ctest.
#
# Run from anywhere: bench/test_compile_times.sh [normal|sanitize]...  (default: both)
# normal: the flags CMake gives the tests in the Release build (-O3 -DNDEBUG, then
# HOOKFUSE_TEST_FLAGS -O2, hookfuse_warnings); sanitize: those of the .ci/run sanitizer build
# (-DHOOKFUSE_SANITIZE=ON: -fsanitize=address,undefined -fno-sanitize-recover=all
# -fno-omit-frame-pointer -g1, HOOKFUSE_TEST_FLAGS -O0, -Wno-maybe-uninitialized).
# CPU seconds are user + system of the compiler (GNU time), which another build running beside
# this one inflates less than the wall time; the load average is printed before and after.
# Environment: CXX (default c++), TOP (rows shown, default 5; 0 for all), TESTS (file names or
# globs under tests/, space-separated, default test_*.cpp), LIMIT (seconds flagged as too slow,
# default 60).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cxx=${CXX:-c++}
top=${TOP:-5}
limit=${LIMIT:-60}
modes=("$@")
if [ ${#modes[@]} -eq 0 ]; then modes=(normal sanitize); fi

if [ ! -x /usr/bin/time ]; then
  echo "test_compile_times.sh: /usr/bin/time not found (apt-get install time)" >&2
  exit 1
fi

common=(-DBOOST_ALL_NO_LIB -DHOOKFUSE_FIXTURES_DIR=\"/nonexistent\" -DLEVELDB_SHARED_LIBRARY
        -I"$root/include" -isystem /usr/include/eigen3)
warnings=(-Wall -Wextra -Wpedantic -Wconversion -Wno-aggressive-loop-optimizations -Wno-restrict)

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
load() { cut -d' ' -f1-3 /proc/loadavg; }

for mode in "${modes[@]}"; do
  case $mode in
    normal) flags=(-O3 -DNDEBUG -O2 "${warnings[@]}" -std=c++20) ;;
    sanitize)
      # shellcheck disable=SC2054  # the commas belong to -fsanitize
      flags=(-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer -g1
             -O3 -DNDEBUG -O0 "${warnings[@]}" -Wno-maybe-uninitialized -std=c++20) ;;
    *) echo "test_compile_times.sh: unknown mode $mode (normal, sanitize)" >&2; exit 1 ;;
  esac
  : >"$work/rows"
  load_before=$(load)
  read -r -a globs <<<"${TESTS:-test_*.cpp}"
  sources=()
  # shellcheck disable=SC2206  # the glob is meant to expand
  for glob in "${globs[@]}"; do sources+=("$root"/tests/$glob); done
  for source in "${sources[@]}"; do
    if ! /usr/bin/time -f '%U %S %e %M' -o "$work/time" \
        "$cxx" "${common[@]}" "${flags[@]}" -c "$source" -o "$work/test.o"; then
      echo "test_compile_times.sh: $source failed to compile ($mode)" >&2
      exit 1
    fi
    read -r user sys wall kib <"$work/time"
    awk -v u="$user" -v s="$sys" -v w="$wall" -v k="$kib" -v f="tests/$(basename "$source")" \
      'BEGIN { printf "%.1f %s %.1f %.0f\n", u + s, f, w, k / 1024 }' >>"$work/rows"
  done
  load_after=$(load)
  total=$(awk '{ t += $1 } END { printf "%.0f", t }' "$work/rows")
  count=$(wc -l <"$work/rows")
  echo "Unit test compile time, $mode flags, $("$cxx" --version | head -n1): $count files," \
    "$total CPU s in all (load average before: $load_before, after: $load_after)"
  echo
  echo "| test file | CPU s | wall s | peak MiB |"
  echo "|---|---|---|---|"
  sort -rg "$work/rows" | { if [ "$top" -gt 0 ]; then head -n "$top"; else cat; fi; } |
    while read -r cpu file wall mib; do echo "| $file | $cpu | $wall | $mib |"; done
  over=$(awk -v l="$limit" '$1 > l' "$work/rows" | wc -l)
  echo
  echo "Files over $limit s of CPU: $over"
  echo
done
