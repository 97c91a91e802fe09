#!/usr/bin/env bash
# fuzz.sh SECONDS: builds the libFuzzer targets of fuzz/ (docs/fuzzing.md) in build-fuzz/ with
# clang++-14 (-fsanitize=fuzzer,address,undefined) and runs each for SECONDS (default 60), one
# after another, on a seed corpus copied from the fixtures (../shared/fixtures, or
# $HOOKFUSE_FIXTURES_DIR) into a temporary directory. Options of every run: -timeout=10
# -rss_limit_mb=2048 (which also caps a single allocation at 2048 MB).
#
# A finding (crash, sanitizer report, uncaught exception, leak, timeout, out-of-memory) is saved
# under build-fuzz/crashes/<target>/ (libFuzzer's crash-*, leak-*, timeout-*, oom-* files) with
# the run's log in build-fuzz/logs/<target>.log. Prints a per-target summary (runs, execs/s,
# findings) and exits non-zero when any target has a finding or fails to build.
#
# `scripts/fuzz.sh --install-only` installs clang-14 and libclang-rt-14-dev (libFuzzer and the
# sanitizer runtimes; apt, as root) and nothing else; a normal run installs them when missing.
# .ci/run runs every target for a short time (its fuzz stage). $FUZZ_JOBS sets the build's
# parallelism (default 1); $FUZZ_TARGETS (space-separated names) runs only those targets.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
build=$root/build-fuzz
jobs=${FUZZ_JOBS:-1}
install_only=false
seconds=60
case "${1:-}" in
  "") ;;
  --install-only) install_only=true ;;
  *[!0-9]*) echo "fuzz.sh: usage: scripts/fuzz.sh [SECONDS | --install-only]" >&2; exit 2 ;;
  *) seconds=$1 ;;
esac

# --- toolchain -------------------------------------------------------------------------------
packages=(clang-14 libclang-rt-14-dev)
missing=()
for p in "${packages[@]}"; do
  dpkg -s "$p" 2>/dev/null | grep -qx 'Status: install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "fuzz.sh: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update
  apt-get install -y --no-install-recommends "${missing[@]}"
fi
if $install_only; then
  exit 0
fi
scripts/install-deps.sh >/dev/null

# --- build -----------------------------------------------------------------------------------
all_targets=(fuzz_checkpoint_index fuzz_checkpoint_data fuzz_checkpoint_state fuzz_event_file
             fuzz_safetensors fuzz_idx fuzz_idx_gzip)
if [ -n "${FUZZ_TARGETS:-}" ]; then
  read -r -a targets <<<"$FUZZ_TARGETS"
  for t in "${targets[@]}"; do
    case " ${all_targets[*]} " in
      *" $t "*) ;;
      *) echo "fuzz.sh: FUZZ_TARGETS: unknown target '$t' (known: ${all_targets[*]})" >&2; exit 2 ;;
    esac
  done
else
  targets=("${all_targets[@]}")
fi
cmake -S . -B "$build" -DCMAKE_CXX_COMPILER=clang++-14 -DCMAKE_BUILD_TYPE=Debug \
  -DHOOKFUSE_FUZZ=ON -DHOOKFUSE_BUILD_TESTS=OFF -DHOOKFUSE_BUILD_EXAMPLES=OFF \
  -DHOOKFUSE_BUILD_BENCHMARKS=OFF >/dev/null
cmake --build "$build" -j"$jobs" --target "${targets[@]}"

# --- seed corpora ----------------------------------------------------------------------------
fixtures=${HOOKFUSE_FIXTURES_DIR:-$root/../shared/fixtures}
corpora=$(mktemp -d "${TMPDIR:-/tmp}/hookfuse-fuzz-corpus.XXXXXX")
trap 'rm -rf "$corpora"' EXIT
for t in "${all_targets[@]}"; do mkdir -p "$corpora/$t"; done

# copy_seeds TARGET FILE...: the files that exist, under numbered names.
copy_seeds() {
  local t=$1 i=0 f
  shift
  for f in "$@"; do
    [ -f "$f" ] || continue
    cp "$f" "$corpora/$t/seed$((i++))"
  done
}
# le32 N: N as 4 little-endian bytes.
le32() {
  printf "$(printf '\\x%02x\\x%02x\\x%02x\\x%02x' $(($1 & 255)) $(($1 >> 8 & 255)) \
    $(($1 >> 16 & 255)) $(($1 >> 24 & 255)))"
}
if [ -d "$fixtures" ]; then
  copy_seeds fuzz_checkpoint_index "$fixtures"/tf/*/*.index
  copy_seeds fuzz_checkpoint_state "$fixtures"/tf/*/checkpoint
  copy_seeds fuzz_event_file "$fixtures"/tf/events_*/*tfevents*
  copy_seeds fuzz_safetensors "$fixtures"/safetensors/*.safetensors
  copy_seeds fuzz_idx "$fixtures"/idx/*-ubyte
  i=0
  for index in "$fixtures"/tf/*/*.index; do
    data=${index%.index}.data-00000-of-00001
    [ -f "$data" ] || continue
    { le32 "$(stat -c %s "$index")"; cat "$index" "$data"; } >"$corpora/fuzz_checkpoint_data/seed$i"
    i=$((i + 1))
  done
  i=0
  for f in "$fixtures"/idx/*-ubyte "$fixtures"/idx/*.gz; do
    [ -f "$f" ] || continue
    case $f in *.gz) mode='\x01' ;; *) mode='\x00' ;; esac
    { printf "$mode"; cat "$f"; } >"$corpora/fuzz_idx_gzip/seed$i"
    i=$((i + 1))
  done
else
  echo "fuzz.sh: no fixtures at $fixtures (set HOOKFUSE_FIXTURES_DIR): empty seed corpora" >&2
fi

# --- runs ------------------------------------------------------------------------------------
mkdir -p "$build/logs"
export ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=1:detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
summary=()
failed=0
for t in "${targets[@]}"; do
  crashes=$build/crashes/$t
  mkdir -p "$crashes"
  log=$build/logs/$t.log
  seeds=$(find "$corpora/$t" -type f | wc -l)
  echo "== fuzz.sh: $t for ${seconds}s ($seeds seeds)"
  status=0
  "$build/fuzz/$t" "$corpora/$t" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
    -artifact_prefix="$crashes/" -print_final_stats=1 >"$log" 2>&1 || status=$?
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  speed=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  findings=$(find "$crashes" -type f \( -name 'crash-*' -o -name 'leak-*' -o -name 'timeout-*' \
    -o -name 'oom-*' \) | wc -l)
  if [ "$status" -ne 0 ] && [ "$findings" -eq 0 ]; then findings=1; fi  # e.g. a startup failure
  if [ "$findings" -ne 0 ]; then
    failed=1
    echo "fuzz.sh: $t: exit status $status, $findings finding(s) in $crashes; log $log" >&2
    grep -m1 -E '^(==[0-9]+==ERROR|SUMMARY|.*runtime error)' "$log" >&2 || tail -5 "$log" >&2
  fi
  summary+=("$(printf '%-24s runs %10s  execs/s %7s  findings %s' "$t" "${runs:-?}" \
    "${speed:-?}" "$findings")")
done

echo
echo "== fuzz.sh: ${seconds}s per target"
printf '%s\n' "${summary[@]}"
exit $failed
