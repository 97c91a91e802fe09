#!/bin/sh
# tests/scripts/plot_scalars_errors.sh: scripts/plot_scalars.py writes the PNG to exactly the
# path given by -o, and an output it cannot write is a one-line error naming that path (exit
# status 1, no Python traceback):
#   -o <dir>/missing/x.png  -> "plot_scalars: cannot write <dir>/missing/x.png: ..."
#   -o <dir> (a directory)  -> "plot_scalars: cannot write <dir>: ...", and no <dir>.png appears
#   -o <dir>/noext          -> the PNG is <dir>/noext (signature bytes), no <dir>/noext.png
#
#   plot_scalars_errors.sh <python3> <plot_scalars.py> <fixtures dir> <work dir>
#
# Exit 77 (skipped) when python3, matplotlib or the fixtures are absent.
set -u
python=$1 script=$2 fixture=$3/tf/events_tf2_scalar work=$4
fail() { echo "FAILED: $*"; exit 1; }
if [ -z "$python" ] || ! "$python" -c 'import matplotlib' 2>/dev/null; then
  echo "SKIPPED: python3 with matplotlib not found"; exit 77
fi
[ -d "$fixture" ] || { echo "SKIPPED: $fixture not found"; exit 77; }
rm -rf "$work" && mkdir -p "$work/outdir" || fail "cannot create $work"

out=$("$python" "$script" "$fixture" -o "$work/missing/x.png" 2>&1)
[ $? -eq 1 ] || fail "missing parent: exit status not 1: $out"
case $out in *Traceback*) fail "missing parent: traceback: $out" ;; esac
case $out in "plot_scalars: cannot write $work/missing/x.png: "*) ;;
  *) fail "missing parent: message: $out" ;; esac

out=$("$python" "$script" "$fixture" -o "$work/outdir" 2>&1)
[ $? -eq 1 ] || fail "directory: exit status not 1: $out"
case $out in "plot_scalars: cannot write $work/outdir: "*) ;; *) fail "directory: message: $out" ;; esac
[ ! -e "$work/outdir.png" ] || fail "directory: wrote $work/outdir.png"

"$python" "$script" "$fixture" -o "$work/noext" >/dev/null || fail "noext: exit status"
[ ! -e "$work/noext.png" ] || fail "noext: wrote $work/noext.png instead of $work/noext"
sig=$(od -An -tx1 -N8 "$work/noext" | tr -d ' \n')
[ "$sig" = 89504e470d0a1a0a ] || fail "noext: not a PNG (signature $sig)"
echo "PASSED: unwritable outputs are one-line errors naming the path; -o is the file written"
