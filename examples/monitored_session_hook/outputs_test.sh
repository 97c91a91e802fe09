#!/bin/sh
# examples/monitored_session_hook/outputs_test.sh: the example at the TF program's settings (100
# caller-fed runs of the full batch x = 1..4, y = 2x, SGD 0.01) with --dir <dir> (removed first)
# and --print_every 1, then again with --fetch_loss:
#   1. the hook printed 100 losses, runs 1 to 100, and reports 100 recorded; the first is 30
#      (W = b = 0: (4 + 16 + 36 + 64) / 4), none is above the one before (gradient descent on
#      this convex quadratic with a rate below 1 / 16.7, the Hessian's largest eigenvalue), and
#      the last is 0.034290 (+-1e-4), as are W 1.8463 and b 0.4518 (+-1e-3) after the 100th
#      update: the same 100 steps of full-batch gradient descent computed in double precision
#      by hand (the error's slow eigen-component shrinks by (1 - 0.01 * 0.2998) per step);
#   2. end() printed its checkpoint, <dir>/checkpoints/model.ckpt-100, which io::CheckpointReader
#      opens at global step 100 with W, b and global_step, and which the directory's state file
#      names as the latest (checkpoint_dump);
#   3. before_run saw the caller's fetches: [] (sess.run(train_op, feed_dict)) in all 100 runs,
#      and [loss] in all 100 with --fetch_loss (sess.run([train_op, loss], feed_dict)).
#
#   outputs_test.sh <example> <checkpoint_dump> <dir>
set -u
example=$1 checkpoint_dump=$2 dir=$3
fail() { echo "FAILED: $*"; exit 1; }
rm -rf "$dir"
mkdir -p "$dir" || fail "cannot create $dir"
out=$("$example" --dir "$dir" --print_every 1 2>"$dir/stderr.txt") || fail "example: exit status $?"
printf '%s\n' "$out"
printf '%s\n' "$out" | awk '
  /^run [0-9]+: loss = / { n++; r = $2 + 0; v = $5 + 0
    if (r != n) bad = bad " run " r " printed as loss " n
    if (n == 1 && v != 30) bad = bad " first loss " v " is not 30"
    if (n > 1 && v > prev) bad = bad " loss rose at run " r
    prev = v }
  /^W: / { w = $2 } /^b: / { b = $2 }
  END {
    if (n != 100) bad = bad " " n " losses printed, expected 100"
    if (prev < 0.03419 || prev > 0.03439) bad = bad " last loss " prev " not 0.034290 +- 1e-4"
    if (w < 1.8453 || w > 1.8473) bad = bad " W " w " not 1.8463 +- 1e-3"
    if (b < 0.4508 || b > 0.4528) bad = bad " b " b " not 0.4518 +- 1e-3"
    if (bad != "") { print "FAILED:" bad; exit 1 } }' || exit 1
printf '%s\n' "$out" | grep -qx "100 losses recorded; final loss: .*" ||
  fail "expected '100 losses recorded'"
printf '%s\n' "$out" | grep -qx "global_step: 100" || fail "expected global_step: 100"

saved=$(printf '%s\n' "$out" | sed -n 's/^end(): saved checkpoint //p')
[ "$saved" = "$dir/checkpoints/model.ckpt-100" ] ||
  fail "end() saved '$saved', expected '$dir/checkpoints/model.ckpt-100'"
got=$("$checkpoint_dump" "$saved") || fail "checkpoint_dump $saved: exit status $?"
[ "$got" = "checkpoint model.ckpt-100 global_step 100 tensors W,b,global_step" ] ||
  fail "checkpoint_dump read '$got'"
got=$("$checkpoint_dump" "$dir/checkpoints" | head -1) || fail "checkpoint_dump: exit status $?"
[ "$got" = "model_checkpoint_path model.ckpt-100" ] || fail "state file: '$got'"

seen=$(printf '%s\n' "$out" | grep '^before_run saw')
[ "$seen" = "before_run saw original_args.fetches = [] in 100 runs" ] ||
  fail "before_run saw '$seen', expected [] in 100 runs"
out=$("$example" --dir "$dir" --fetch_loss 2>>"$dir/stderr.txt") ||
  fail "example --fetch_loss: exit status $?"
seen=$(printf '%s\n' "$out" | grep '^before_run saw')
[ "$seen" = "before_run saw original_args.fetches = [loss] in 100 runs" ] ||
  fail "with --fetch_loss before_run saw '$seen', expected [loss] in 100 runs"
echo "monitored_session_hook: 100 losses, checkpoint at step 100 from end(), fetches [] and [loss]"
