#!/bin/sh
# tests/mpi/kill_rank.sh MPIEXEC EXE WORKDIR (ctest mpi.kill_rank): one rank of a running
# 2-rank job is killed; the job ends, and a restart resumes both ranks from the chief's latest
# checkpoint. EXE is mpi_kill_rank (tests/mpi/kill_rank.cpp): checkpoints every 5 steps by rank 0,
# rank 1 raising SIGKILL on itself at global step 12 of a run started from step 0.
#   1. mpirun -np 2 EXE D 20 12: rank 1 dies at step 12; mpirun ends the job and exits non-zero
#      (no hang: each mpirun runs under `timeout 60`, the ctest under a timeout of 120 s). The
#      state file of D names the chief's latest checkpoint, at a step in [5, 12).
#   2. The same command again: both ranks print that they restored and start at that step, train
#      to step 20 and exit 0.
#   3. The same command once more, max_steps (20) already reached: both ranks print "skipping
#      training" and exit 0, and D is unchanged (names, sizes, times).
set -eu
mpiexec=$1
exe=$2
work=$3
fail() { echo "FAILED: $*"; exit 1; }
rm -rf "$work"
mkdir -p "$work/D"
run() {  # run OUTPUT: the 2-rank job on D, max_steps 20, kill at 12; its status in $status
  status=0
  timeout 60 "$mpiexec" --allow-run-as-root --oversubscribe -np 2 "$exe" "$work/D" 20 12 \
    >"$1" 2>&1 || status=$?
  [ "$status" -ne 124 ] || fail "mpirun did not end within 60 s (a hang): $(tail -5 "$1")"
}

# 1. Killed.
run "$work/killed.txt"
[ "$status" -ne 0 ] || fail "mpirun exited 0 although rank 1 was killed: $(cat "$work/killed.txt")"
grep -q 'rank 1: restored false, starts at global_step 0' "$work/killed.txt" ||
  fail "rank 1 did not start: $(cat "$work/killed.txt")"
if grep -q 'ends at global_step' "$work/killed.txt"; then
  fail "a rank finished training although rank 1 was killed: $(cat "$work/killed.txt")"
fi
echo "killed run: mpirun exited $status"
grep -i 'signal' "$work/killed.txt" || true  # Open MPI's report of the killed rank
latest=$(sed -n 's/^model_checkpoint_path: ".*model\.ckpt-\([0-9]*\)"$/\1/p' "$work/D/checkpoint")
[ -n "$latest" ] || fail "no latest checkpoint in D's state file: $(cat "$work/D/checkpoint")"
[ "$latest" -ge 5 ] && [ "$latest" -lt 12 ] ||
  fail "the latest checkpoint is at step $latest, expected one in [5, 12)"
[ -e "$work/D/model.ckpt-$latest.index" ] || fail "model.ckpt-$latest.index is missing"
echo "the chief's latest checkpoint: model.ckpt-$latest"

# 2. Restarted: both ranks resume at the latest checkpoint's step and finish.
run "$work/resumed.txt"
[ "$status" -eq 0 ] || fail "the restart exited $status: $(cat "$work/resumed.txt")"
for r in 0 1; do
  grep -qx "rank $r: restored true, starts at global_step $latest" "$work/resumed.txt" ||
    fail "rank $r did not resume at $latest: $(cat "$work/resumed.txt")"
  grep -qx "rank $r: ends at global_step 20" "$work/resumed.txt" ||
    fail "rank $r did not end at 20: $(cat "$work/resumed.txt")"
done
[ -e "$work/D/model.ckpt-20.index" ] || fail "no model.ckpt-20 after the restart"
echo "restart: both ranks resumed at $latest and ended at 20"

# 3. Restarted with max_steps already reached: no training, nothing written.
before=$(ls -l --full-time "$work/D")
run "$work/done.txt"
[ "$status" -eq 0 ] || fail "the restart at max_steps exited $status: $(cat "$work/done.txt")"
for r in 0 1; do
  grep -qx "rank $r: skipping training since max_steps has already saved (global_step 20)" \
    "$work/done.txt" || fail "rank $r did not skip training: $(cat "$work/done.txt")"
done
if grep -q 'starts at global_step' "$work/done.txt"; then
  fail "a session was created although max_steps was reached: $(cat "$work/done.txt")"
fi
[ "$(ls -l --full-time "$work/D")" = "$before" ] || fail "D changed although nothing trained"
echo "restart at max_steps: both ranks skipped training and exited 0"
echo "PASSED"
