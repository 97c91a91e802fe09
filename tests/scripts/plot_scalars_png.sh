#!/bin/sh
# tests/scripts/plot_scalars_png.sh: scripts/plot_scalars.py on an event file hookfuse wrote
# (tests/io/write_event_records: "loss" 0.5 at step 1 as a tensor, "accuracy" 0.75 at step 101
# as a legacy simple_value, a histogram at step 201, SessionLog START at step 1):
#   1. --dump decodes exactly the two scalars, with their steps and values;
#   2. -o writes a PNG (its 8 signature bytes) of non-trivial size (over 5000 bytes).
#
#   plot_scalars_png.sh <python3> <plot_scalars.py> <write_event_records binary> <out dir>
#
# Exit 77 (skipped) when python3 or its matplotlib (Debian's python3-matplotlib) is absent.
set -u
python=$1 script=$2 tool=$3 out=$4
fail() { echo "FAILED: $*"; exit 1; }
if [ -z "$python" ] || ! "$python" -c 'import matplotlib' 2>/dev/null; then
  echo "SKIPPED: python3 with matplotlib not found (apt-get install python3-matplotlib)"
  exit 77
fi
"$tool" "$out" >/dev/null || fail "$tool $out"
dump=$("$python" "$script" "$out/logs" --dump) || fail "--dump: exit status $?"
got=$(printf '%s\n' "$dump" | awk -F, 'NR > 1 { print $1 "," $2 "," $4 }' | tr '\n' ' ')
want="loss,1,0.5 accuracy,101,0.75 "
[ "$got" = "$want" ] || fail "decoded '$got', expected '$want'"
png="$out/scalars.png"
rm -f "$png"
"$python" "$script" "$out/logs" -o "$png" || fail "plot: exit status $?"
[ -f "$png" ] || fail "no $png"
magic=$(od -An -tx1 -N8 "$png" | tr -d ' \n')
[ "$magic" = "89504e470d0a1a0a" ] || fail "$png does not start with the PNG signature ($magic)"
size=$(wc -c < "$png")
[ "$size" -gt 5000 ] || fail "$png is only $size bytes"
echo "PASSED: decoded $want; PNG of $size bytes"
