#!/bin/bash
# scripts/fault-injection.sh [--quick]: makes one file-system call of a saving program fail and
# checks what is left. tests/kill/fault_shim.c, an LD_PRELOAD library built here with cc, fails
# the N-th write/fwrite, fsync, rename or open-for-write with ENOSPC or EIO (odd N: ENOSPC,
# even N: EIO) in tests/kill/campaign_child, which resumes a directory holding checkpoint 3
# and trains to step 8 (a checkpoint and an event-file record per step). A first run without a
# fault counts the calls of each kind; the sweep then fails each one in turn (--quick: the
# first, the middle and the last of each kind). After each run it checks:
#   - a fault reached: exit status 2 (not 0, not a crash) and a message naming the file (the
#     file the call was on, its final name for a temporary, a file inside it for a directory
#     fsync) and the error's strerror text;
#   - always: the directory's latest checkpoint loads with every CRC and the weights of an
#     uninterrupted run, every event file reads, no temporary file is left
#     (campaign_driver check);
#   - a run that exits 0 (fault not reached, or absorbed) reached step 8 and lost no event.
# Prints a summary; exit 0 when every check passed, 77 (skipped) where it cannot run (no C
# compiler, an ASan build, LD_PRELOAD without effect).
#
# Programs: $FAULT_CHILD and $FAULT_DRIVER, or built in $BUILD_DIR (default: build).
set -euo pipefail
quick=0
if [[ "${1:-}" == "--quick" ]]; then quick=1; fi
root=$(cd "$(dirname "$0")/.." && pwd)
skip() { echo "SKIPPED: io.fault_injection: $*"; exit 77; }
if [[ -z "${FAULT_CHILD:-}" || -z "${FAULT_DRIVER:-}" ]]; then
  build=${BUILD_DIR:-$root/build}
  if [[ ! -f "$build/CMakeCache.txt" ]]; then
    cmake -S "$root" -B "$build" -DHOOKFUSE_BUILD_BENCHMARKS=OFF >/dev/null
  fi
  cmake --build "$build" -j1 --target campaign_child campaign_driver >/dev/null
  FAULT_CHILD=$build/tests/campaign_child
  FAULT_DRIVER=$build/tests/campaign_driver
fi
child=$(realpath "$FAULT_CHILD")
driver=$(realpath "$FAULT_DRIVER")
[[ -x "$child" && -x "$driver" ]] || skip "campaign_child or campaign_driver not built"
if ldd "$child" 2>/dev/null | grep -q 'libasan'; then skip "an AddressSanitizer build (LD_PRELOAD conflicts)"; fi
cc=${CC:-cc}
command -v "$cc" >/dev/null || skip "no C compiler ($cc)"
work=$(mktemp -d "${TMPDIR:-/tmp}/hookfuse_fault_injection.XXXXXX")
trap 'rm -rf "$work"' EXIT
"$cc" -shared -fPIC -O2 -o "$work/fault_shim.so" "$root/tests/kill/fault_shim.c" -ldl ||
  skip "cannot build the shim"
shim=$work/fault_shim.so
last=8

# The directory every run starts from: checkpoints up to step 3, relative paths (copyable).
mkdir -p "$work/base"
(cd "$work/base" && "$child" run - 3 >/dev/null)

# One run without a fault: how many calls of each kind, how many events.
cp -a "$work/base" "$work/count"
(cd "$work/count" && FAULT_REPORT="$work/count.report" LD_PRELOAD="$shim" "$child" run - "$last" >/dev/null)
[[ -f "$work/count.report" ]] || skip "LD_PRELOAD has no effect here"
read -r _ _ n_write _ n_fsync _ n_rename _ n_open < "$work/count.report"
ok_line=$("$driver" check "$work/count/run")
[[ "$ok_line" == "check: ok latest_step $last "* ]] || { echo "FAILED: the run without a fault: $ok_line"; exit 1; }
clean_events=$(awk '{print $7}' <<< "$ok_line")

declare -A outcome=() failure=()
runs=0 reached=0 failures=0
fail() {
  echo "FAILED: $1 #$2 ($3): $4"
  failure[$5]=$(( ${failure[$5]:-0} + 1 ))
  failures=$((failures + 1))
}

# Runs with the n-th call of kind $1 failing ($2) and checks the result.
inject() {
  local kind=$1 n=$2 err path final msg rc line
  if (( n % 2 )); then err=ENOSPC; msg="No space left on device"; else err=EIO; msg="Input/output error"; fi
  local run=$work/run_${kind}_$n
  cp -a "$work/base" "$run"
  rc=0
  (cd "$run" && FAULT_CALL=$kind FAULT_INDEX=$n FAULT_ERRNO=$err FAULT_REPORT="$run.report" \
    LD_PRELOAD="$shim" "$child" run - "$last" >"$run.out" 2>"$run.err") || rc=$?
  runs=$((runs + 1))
  line=$("$driver" check "$run/run") || fail "$kind" "$n" "$err" "$line" "directory check"
  if grep -q '^injected ' "$run.report" 2>/dev/null; then
    reached=$((reached + 1))
    path=$(grep '^injected ' "$run.report" | head -n 1 | cut -d' ' -f5-)
    if (( rc == 0 )); then
      outcome[absorbed]=$(( ${outcome[absorbed]:-0} + 1 ))
    elif (( rc != 2 )); then
      fail "$kind" "$n" "$err" "exit status $rc, expected 2: $(head -c 300 "$run.err")" "crash"
      return
    else
      outcome["exit 2"]=$(( ${outcome["exit 2"]:-0} + 1 ))
      grep -qF "$msg" "$run.err" ||
        fail "$kind" "$n" "$err" "no '$msg' in: $(head -c 300 "$run.err")" "message without reason"
      # A file as the program spelled it: relative to the directory it ran in, or absolute.
      if [[ -d "$path" ]]; then
        grep -qF "$path/" "$run.err" ||
          fail "$kind" "$n" "$err" "directory $path: no file in it named in: $(head -c 300 "$run.err")" "message without file"
      elif final=${path#"$run"/} && final=${final%%.tempstate*} && final=${final%%.tmp-*} &&
        ! grep -qF "$final" "$run.err"; then
        fail "$kind" "$n" "$err" "$path: not named in: $(head -c 300 "$run.err")" "message without file"
      fi
    fi
  else
    outcome["not reached"]=$(( ${outcome["not reached"]:-0} + 1 ))
    (( rc == 0 )) || fail "$kind" "$n" "$err" "no fault reached, yet exit status $rc" "spurious failure"
  fi
  if (( rc == 0 )); then
    [[ "$line" == "check: ok latest_step $last "* ]] ||
      fail "$kind" "$n" "$err" "exit 0 but $line" "lost silently"
    [[ "$(awk '{print $7}' <<< "$line")" == "$clean_events" ]] ||
      fail "$kind" "$n" "$err" "exit 0 but $line (a run without a fault: $clean_events events)" "lost silently"
  fi
  rm -rf "$run" "$run.report" "$run.out" "$run.err"
}

for kind in write fsync rename open; do
  var=n_$kind
  total=${!var}
  if (( quick )); then
    mapfile -t indices < <(printf '%s\n' 1 $(( (total + 1) / 2 )) "$total" | sort -un)
  else
    mapfile -t indices < <(seq 1 "$total")
  fi
  for n in "${indices[@]}"; do inject "$kind" "$n"; done
done

printf 'fault-injection: %d faults injected (calls without a fault: write %d, fsync %d, rename %d, open %d), %d reached, %d failed checks\n' \
  "$runs" "$n_write" "$n_fsync" "$n_rename" "$n_open" "$reached" "$failures"
printf '  outcomes:'
for k in "${!outcome[@]}"; do printf ' %s %d;' "$k" "${outcome[$k]}"; done
printf '\n  failures by kind:'
if (( failures == 0 )); then printf ' none'; fi
for k in "${!failure[@]}"; do printf ' %s %d;' "$k" "${failure[$k]}"; done
printf '\n'
(( failures == 0 ))
