#!/bin/bash
# scripts/kill-campaign.sh N [SEED]: the kill campaign. Starts tests/kill/campaign_child (real
# training under MonitoredTrainingSession: a checkpoint and an event-file record every step) N
# times on one directory and kills it with SIGKILL at random instants, a share of them timed
# into checkpoint saves and event-file writes (the child marks its phase in a shared page).
# After each kill it checks: the state file's latest checkpoint loads with every CRC and holds
# the weights of an uninterrupted run at its step; every event file reads to its last complete
# record; the restart resumes at that step; no temporary file is left once the restarted
# session exists. Ends with one clean run. Prints where the kills landed and the failures by
# kind (tests/kill/campaign_driver.cpp); exit 0 when every check passed.
#
# Not run by ctest (minutes): ctest runs the 20-kill io.saver_kill_test. Uses the build in
# $BUILD_DIR (default: build), building the two programs if needed.
set -euo pipefail
n=${1:?usage: scripts/kill-campaign.sh N [SEED]}
seed=${2:-}
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}
if [[ ! -f "$build/CMakeCache.txt" ]]; then
  cmake -S "$root" -B "$build" -DHOOKFUSE_BUILD_BENCHMARKS=OFF >/dev/null
fi
cmake --build "$build" -j1 --target campaign_child campaign_driver >/dev/null
work=$(mktemp -d "${TMPDIR:-/tmp}/hookfuse_kill_campaign.XXXXXX")
trap 'rm -rf "$work"' EXIT
args=(run "$build/tests/campaign_child" "$work/run" "$work/phase" "$n")
if [[ -n "$seed" ]]; then args+=("$seed"); fi
"$build/tests/campaign_driver" "${args[@]}"
