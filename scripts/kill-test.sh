#!/bin/sh
# scripts/kill-test.sh N [SEED]: the checkpoint crash test with N kills (ctest runs it with 20 as
# io.saver_kill_test). Starts tests/kill/kill_child (real training under MonitoredTrainingSession,
# a save every step) N times on one directory, kills it with SIGKILL at random instants, and
# after each kill checks that the latest checkpoint is complete (every CRC), holds the weights
# an uninterrupted run has at its global step, and is what a restart restores; each restarted
# child reports the step it resumed from (tests/kill/checkpoint_check.hpp, kill_driver.cpp).
# Prints a summary; exit 0 when all passed.
#
# Uses the build in $BUILD_DIR (default: build), building the two programs if needed.
set -eu
n=${1:?usage: scripts/kill-test.sh N [SEED]}
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}
if [ ! -f "$build/CMakeCache.txt" ]; then
  cmake -S "$root" -B "$build" -DHOOKFUSE_BUILD_BENCHMARKS=OFF >/dev/null
fi
cmake --build "$build" -j1 --target kill_child kill_driver >/dev/null
dir=${TMPDIR:-/tmp}/hookfuse_kill_test_$$
trap 'rm -rf "$dir"' EXIT
"$build/tests/kill_driver" "$build/tests/kill_child" "$dir" "$n" ${2:+"$2"}
