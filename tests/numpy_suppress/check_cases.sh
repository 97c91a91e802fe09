#!/bin/sh
# tests/numpy_suppress/check_cases.sh: the committed cases.json is what numpy prints: reruns
# make_cases.py and compares every case (the first line, which names numpy's version, aside).
#
#   check_cases.sh <python3> <make_cases.py> <cases.json>
#
# Exit 77 (skipped) when python3 or numpy is absent.
set -u
python=$1 script=$2 committed=$3
if [ -z "$python" ] || ! "$python" -c 'import numpy' 2>/dev/null; then
  echo "SKIPPED: python3 with numpy not found"; exit 77
fi
fresh="${TMPDIR:-/tmp}/numpy_suppress_cases.$$"
"$python" "$script" > "$fresh" || { rm -f "$fresh"; echo "FAILED: $script"; exit 1; }
tail -n +2 "$committed" > "$fresh.committed"
tail -n +2 "$fresh" > "$fresh.now"
if ! diff "$fresh.committed" "$fresh.now" > "$fresh.diff"; then
  echo "FAILED: $committed differs from what numpy $("$python" -c 'import numpy; print(numpy.__version__)') prints now:"
  head -n 40 "$fresh.diff"
  rm -f "$fresh" "$fresh.committed" "$fresh.now" "$fresh.diff"
  exit 1
fi
rm -f "$fresh" "$fresh.committed" "$fresh.now" "$fresh.diff"
echo "numpy_suppress: $(grep -c '"name"' "$committed") cases as numpy prints them"
