#!/bin/sh
# examples/fashion_mnist/mpi_test.sh MPIEXEC EXE_MPI EXE CHECKER WORKDIR (ctest
# example.fashion_mnist_mpi): data-parallel training on 2 ranks equals one process.
#   1. mpirun -np 2 fashion_mnist_mpi --model_dir D --max_steps 200 --batch_size 32 (each rank
#      16 rows of every global batch of 32; 60000 = 1875 * 32, so no batch of the 200 is short),
#      with the divergence check every 50 steps;
#   2. fashion_mnist --model_dir D2 --max_steps 200 --batch_size 32, the same seed (7);
#   3. the two latest checkpoints (both model.ckpt-200) hold the same variables: relative 1e-5
#      (checkpoint_compare: max |a - b| over max |b| per tensor), global_step equal.
#   4. 2 ranks to step 120 into D3 (a checkpoint every 50 steps), then to 200: the second run
#      resumes both ranks at 120 from rank 0's checkpoint, and D3's model.ckpt-200 equals D2's
#      (relative 1e-5).
#   5. steps 1 and 3 with --optimizer adam (AverageGradientsHook; the default SGD, above, runs
#      AverageVariablesHook): the 2-rank and the 1-process checkpoints equal to a relative 1e-4.
#      Looser than SGD's: Adam divides by the root of its second moment, so where a pixel's
#      gradients are near 0 (the images' borders) the last bits of the averaged gradient move
#      the weight visibly (measured 8.3e-6 on dense/kernel; every other tensor below 7e-7).
# Also: one "test_accuracy" and one "global_step: 200" line in the 2-rank output (rank 0 alone
# prints), and D holds the files of one writer (one event file). Exit 77 (skipped) without the
# Fashion-MNIST files. The wall time of the first two runs is printed (not checked).
set -eu
mpiexec=$1
exe_mpi=$2
exe=$3
checker=$4
work=$5
. "$(dirname "$0")/test_lib.sh"
require_fashion_mnist
fresh_dir "$work"
now() { date +%s.%N; }

t0=$(now)
"$mpiexec" --allow-run-as-root --oversubscribe -np 2 "$exe_mpi" --model_dir "$work/D" \
  --max_steps 200 --batch_size 32 --divergence_check_steps 50 >"$work/ranks2.txt" 2>&1 ||
  fail "2 ranks: $(tail -5 "$work/ranks2.txt")"
t1=$(now)
"$exe" --model_dir "$work/D2" --max_steps 200 --batch_size 32 >"$work/rank1.txt" 2>&1 ||
  fail "1 process: $(tail -3 "$work/rank1.txt")"
t2=$(now)

[ "$(grep -c '^test_accuracy: ' "$work/ranks2.txt")" -eq 1 ] ||
  fail "expected one test_accuracy line from 2 ranks (rank 0's):" \
    "$(grep '^test_accuracy' "$work/ranks2.txt")"
[ "$(grep -c '^global_step: 200$' "$work/ranks2.txt")" -eq 1 ] ||
  fail "expected one 'global_step: 200' line from 2 ranks"
events=$(ls "$work/D" | grep -c '^events\.out\.tfevents\.' || true)
[ "$events" -eq 1 ] || fail "$events event files in D, expected 1 (rank 0's)"
[ -e "$work/D/model.ckpt-200.index" ] || fail "no model.ckpt-200 in D"

"$checker" "$work/D" "$work/D2" 1e-5 >"$work/compare.txt" 2>&1 ||
  fail "the checkpoints differ: $(cat "$work/compare.txt")"
cat "$work/compare.txt"

for steps in 120 200; do
  "$mpiexec" --allow-run-as-root --oversubscribe -np 2 "$exe_mpi" --model_dir "$work/D3" \
    --save_checkpoint_steps 50 --max_steps $steps --batch_size 32 >"$work/resume$steps.txt" 2>&1 ||
    fail "2 ranks to $steps: $(tail -5 "$work/resume$steps.txt")"
done
grep -qx 'resumed at global_step: 120' "$work/resume200.txt" ||
  fail "the second 2-rank run did not resume at 120"
"$checker" "$work/D3" "$work/D2" 1e-5 >"$work/compare_resumed.txt" 2>&1 ||
  fail "resumed on 2 ranks, the checkpoints differ: $(cat "$work/compare_resumed.txt")"
echo "resumed at 120 on 2 ranks: $(tail -1 "$work/compare_resumed.txt")"
# Adam: the ranks average gradients (AverageGradientsHook) instead of the updated variables.
"$mpiexec" --allow-run-as-root --oversubscribe -np 2 "$exe_mpi" --model_dir "$work/A" \
  --optimizer adam --max_steps 200 --batch_size 32 >"$work/adam2.txt" 2>&1 ||
  fail "2 ranks, adam: $(tail -5 "$work/adam2.txt")"
"$exe" --model_dir "$work/A1" --optimizer adam --max_steps 200 --batch_size 32 \
  >"$work/adam1.txt" 2>&1 || fail "1 process, adam: $(tail -3 "$work/adam1.txt")"
"$checker" "$work/A" "$work/A1" 1e-4 >"$work/compare_adam.txt" 2>&1 ||
  fail "adam: the checkpoints differ: $(cat "$work/compare_adam.txt")"
echo "adam on 2 ranks: $(tail -1 "$work/compare_adam.txt")"
echo "test_accuracy 2 ranks: $(sed -n 's/^test_accuracy: //p' "$work/ranks2.txt")," \
  "1 process: $(sed -n 's/^test_accuracy: //p' "$work/rank1.txt")"
awk -v a="$t0" -v b="$t1" -v c="$t2" \
  'BEGIN { printf "wall seconds: 2 ranks %.2f, 1 process %.2f\n", b - a, c - b }'
echo "PASSED"
