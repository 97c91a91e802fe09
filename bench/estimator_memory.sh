#!/usr/bin/env bash
# bench/estimator_memory.sh: peak resident memory of Estimator::evaluate at batch 1000, and of
# evaluate's graph bound with bind_forward and with bind, as a markdown table.
#
# Run from anywhere, after building the benchmark:
#   cmake --build build --target bench_estimator && bench/estimator_memory.sh
# Each row is one process of build/bench/estimator running one BM_rss_* benchmark (one call)
# under /usr/bin/time -v, its "Maximum resident set size"; the difference from the baseline
# process (the batch of 1000 and the Estimator object, no model) is what that call adds.
# BM_rss_prepare first writes the checkpoint that BM_rss_evaluate restores, in its own process.
# Environment: BUILD_DIR (default build), HOOKFUSE_BENCH_DIR (model directories; default
# /tmp/hookfuse_bench_estimator).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${BUILD_DIR:-$root/build}
exe=$build/bench/estimator

if [ ! -x /usr/bin/time ]; then
  echo "estimator_memory.sh: /usr/bin/time not found (apt-get install time)" >&2
  exit 1
fi
if [ ! -x "$exe" ]; then
  echo "estimator_memory.sh: $exe not found; build it: cmake --build $build --target bench_estimator" >&2
  exit 1
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# run NAME: runs BM_NAME alone; prints its maximum RSS in KiB.
run() {
  if ! /usr/bin/time -v -o "$work/time" "$exe" --benchmark_filter="^BM_$1(/|\$)" \
       --benchmark_format=json >"$work/out.json" 2>"$work/err"; then
    echo "estimator_memory.sh: BM_$1 failed:" >&2
    cat "$work/err" "$work/time" >&2
    exit 1
  fi
  sed -n 's/^[[:space:]]*Maximum resident set size (kbytes): //p' "$work/time"
}
# buffer_bytes NAME: the buffer_bytes counter BM_NAME reported in its last run.
buffer_bytes() {
  python3 -c 'import json,sys; print(int(json.load(open(sys.argv[1]))["benchmarks"][0]["buffer_bytes"]))' \
    "$work/out.json"
}

run rss_prepare >/dev/null
base=$(run rss_baseline)
eval_kib=$(run rss_evaluate)
fwd_kib=$(run rss_bind_forward)
fwd_bytes=$(buffer_bytes)
bind_kib=$(run rss_bind)
bind_bytes=$(buffer_bytes)

row() {  # LABEL KIB BYTES
  awk -v l="$1" -v k="$2" -v b="$base" -v g="$3" 'BEGIN {
    printf "| %s | %d | %+d | %s |\n", l, k, k - b, g }'
}
echo "Peak resident memory, build/bench/estimator (load average: $(cut -d' ' -f1-3 /proc/loadavg))"
echo
echo "| process | max RSS KiB | over baseline KiB | Graph::buffer_bytes() |"
echo "|---|---|---|---|"
row "baseline: batch of 1000, Estimator object" "$base" "–"
row "evaluate, 10 batches of 1000" "$eval_kib" "–"
row "bind_forward at 1000, one forward" "$fwd_kib" "$fwd_bytes"
row "bind at 1000, one forward and backward" "$bind_kib" "$bind_bytes"
