#!/bin/bash
# scripts/fault-injection.sh [--quick]: makes one file-system call of a saving program fail and
# checks what is left. tests/kill/fault_shim.c, an LD_PRELOAD library built here with cc, fails
# the N-th write/pwrite/fwrite, fsync, rename or open-for-write with ENOSPC or EIO (odd N: ENOSPC,
# even N: EIO) in tests/kill/campaign_child, which resumes a directory holding checkpoint 3
# and trains to step 8 (a checkpoint and an event-file record per step). A first run without a
# fault counts the calls of each kind; the sweep then fails each one in turn (--quick: the
# first, the middle and the last of each kind), twice: with the default saver, and with a
# sharded one (CAMPAIGN_SHARDS=2: two data files per checkpoint, written as two bundles under
# "<prefix>_temp/" and merged). After each run it checks:
#   - a fault reached: exit status 2 (not 0, not a crash) and a message naming the file (the
#     file the call was on, its final name for a temporary, a file inside it for a directory
#     fsync) and the error's strerror text;
#   - always: the directory's latest checkpoint loads with every CRC and the weights of an
#     uninterrupted run, every event file reads, no temporary file and no data file without
#     its index is left (campaign_driver check), and a restart without a fault resumes at that checkpoint's step
#     (--quick: after the middle call's fault of each kind);
#   - a run that exits 0 (fault not reached, or absorbed) reached step 8 and lost no event.
# Short writes: runs where write(2) writes half of what it is asked (FAULT_SHORT: every call;
# then, without --quick, each call alone; with each saver) must exit 0 with step 8 and
# every event, and their last checkpoint must be byte-identical to that of a run without them.
# (The event file's fwrite calls loop inside libc, out of the shim's reach.)
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

# One run without a fault per saver (count: the default one, count2: sharded): how many calls
# of each kind, how many events.
count_calls() {
  local name=$1 shards=$2 ok_line
  cp -a "$work/base" "$work/$name"
  (cd "$work/$name" && CAMPAIGN_SHARDS=$shards FAULT_REPORT="$work/$name.report" LD_PRELOAD="$shim" \
    "$child" run - "$last" >/dev/null)
  [[ -f "$work/$name.report" ]] || skip "LD_PRELOAD has no effect here"
  ok_line=$("$driver" check "$work/$name/run")
  [[ "$ok_line" == "check: ok latest_step $last "* ]] ||
    { echo "FAILED: the run without a fault ($name): $ok_line"; exit 1; }
  clean_events=$(awk '{print $7}' <<< "$ok_line")
}
count_calls count 0
read -r _ _ n_write _ n_fsync _ n_rename _ n_open < "$work/count.report"
n_plain=$(awk '$1 == "plain_writes" {print $2}' "$work/count.report")
count_calls count2 2
read -r _ _ s_write _ s_fsync _ s_rename _ s_open < "$work/count2.report"
s_plain=$(awk '$1 == "plain_writes" {print $2}' "$work/count2.report")

declare -A outcome=() failure=()
runs=0 reached=0 failures=0
fail() {
  echo "FAILED: $1 #$2 ($3): $4"
  failure[$5]=$(( ${failure[$5]:-0} + 1 ))
  failures=$((failures + 1))
}

# Runs with the n-th call of kind $1 failing, with $3 shards (0: the default saver), and checks
# the result; $4 = 1: also that a restart resumes at the checkpoint left.
inject() {
  local kind=$1 n=$2 shards=$3 restart=$4 err path final msg rc line step first
  if (( n % 2 )); then err=ENOSPC; msg="No space left on device"; else err=EIO; msg="Input/output error"; fi
  local run=$work/run_${kind}_${n}_$shards
  cp -a "$work/base" "$run"
  rc=0
  (cd "$run" && CAMPAIGN_SHARDS=$shards FAULT_CALL=$kind FAULT_INDEX=$n FAULT_ERRNO=$err \
    FAULT_REPORT="$run.report" LD_PRELOAD="$shim" "$child" run - "$last" >"$run.out" 2>"$run.err") || rc=$?
  runs=$((runs + 1))
  (( shards == 0 )) || kind="$kind (sharded)"
  line=$("$driver" check "$run/run") || fail "$kind" "$n" "$err" "$line" "directory check"
  # A restart without a fault resumes at the checkpoint the check found.
  if (( restart )) && [[ "$line" == "check: ok latest_step "* ]]; then
    step=$(awk '{print $4}' <<< "$line")
    first=$(cd "$run" && CAMPAIGN_SHARDS=$shards "$child" run - "$step" 2>&1 | head -n 1) || true
    [[ "$first" == "restored $step temporaries 0" ]] ||
      fail "$kind" "$n" "$err" "restart after it: '$first', expected 'restored $step temporaries 0'" "restart"
  fi
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

# The indices of the calls to fail among $1: all, or with --quick the first, middle and last.
pick() {
  if (( quick )); then printf '%s\n' 1 $(( ($1 + 1) / 2 )) "$1" | sort -un; else seq 1 "$1"; fi
}

for shards in 0 2; do
  for kind in write fsync rename open; do
    if (( shards == 0 )); then var=n_$kind; else var=s_$kind; fi
    mapfile -t indices < <(pick "${!var}")
    # --quick: the restart after the middle call's fault only
    for n in "${indices[@]}"; do
      inject "$kind" "$n" "$shards" $(( !quick || n == indices[${#indices[@]} / 2] ))
    done
  done
done

# Runs whose writes are short ($1: every, or the index of the one write shortened), with $2
# shards; $3 names the run without a fault to compare the last checkpoint with.
short_writes=0
short_run() {
  local mode=$1 shards=$2 clean=$3 rc=0 line f shortened
  local run=$work/short_${mode}_$shards what="short writes ($mode, $shards shards)"
  cp -a "$work/base" "$run"
  (cd "$run" && CAMPAIGN_SHARDS=$shards FAULT_SHORT=$mode FAULT_REPORT="$run.report" \
    LD_PRELOAD="$shim" "$child" run - "$last" >"$run.out" 2>"$run.err") || rc=$?
  short_writes=$((short_writes + 1))
  shortened=$(awk '$1 == "plain_writes" {print $4}' "$run.report" 2>/dev/null)
  (( ${shortened:-0} > 0 )) || fail "$what" 0 - "no write was shortened" "short writes"
  (( rc == 0 )) || fail "$what" 0 - "exit status $rc: $(head -c 300 "$run.err")" "short writes"
  line=$("$driver" check "$run/run") || true
  [[ "$line" == "check: ok latest_step $last "* && "$(awk '{print $7}' <<< "$line")" == "$clean_events" ]] ||
    fail "$what" 0 - "$line (a run without a fault: $clean_events events)" "short writes"
  for f in "$work/$clean/run/model.ckpt-$last".*; do
    cmp -s "$f" "$run/run/${f##*/}" || fail "$what" 0 - "${f##*/} differs from a run without short writes" "short writes"
  done
  rm -rf "$run" "$run.report" "$run.out" "$run.err"
}
for shards in 0 2; do
  if (( shards == 0 )); then clean=count total=$n_plain; else clean=count2 total=$s_plain; fi
  short_run every "$shards" "$clean"
  if (( quick )); then continue; fi  # --quick: every write short, not each one alone
  for n in $(seq 1 "$total"); do short_run "$n" "$shards" "$clean"; done
done

printf 'fault-injection: %d faults injected (calls without a fault: write %d, fsync %d, rename %d, open %d; sharded: write %d, fsync %d, rename %d, open %d), %d reached, %d runs with short writes, %d failed checks\n' \
  "$runs" "$n_write" "$n_fsync" "$n_rename" "$n_open" "$s_write" "$s_fsync" "$s_rename" "$s_open" \
  "$reached" "$short_writes" "$failures"
printf '  outcomes:'
for k in "${!outcome[@]}"; do printf ' %s %d;' "$k" "${outcome[$k]}"; done
printf '\n  failures by kind:'
if (( failures == 0 )); then printf ' none'; fi
for k in "${!failure[@]}"; do printf ' %s %d;' "$k" "${failure[$k]}"; done
printf '\n'
(( failures == 0 ))
