#!/bin/sh
# tests/scripts/plot_scalars_fixtures.sh: scripts/plot_scalars.py --dump decodes the two
# TensorFlow event-file fixtures (../shared/fixtures/tf/README.md) to their documented scalars:
#   events_tf2_scalar: tag "my_metric", steps 0..99, value 0.5 * step (rank-0 DT_FLOAT tensors);
#   events_legacy_simple_value: tag "strict/foo", steps 0, 5, ..., 495, 100 simple_values whose
#   sum is 148.84195291996002, min 1.0012359619140625, max 1.9970664978027344, the first
#   1.4962565898895264.
#
#   plot_scalars_fixtures.sh <python3> <plot_scalars.py> <fixtures dir>
#
# Exit 77 (skipped) when python3 or the fixtures are absent.
set -u
python=$1 script=$2 fixtures=$3/tf
fail() { echo "FAILED: $*"; exit 1; }
if [ -z "$python" ] || ! "$python" -c 'import struct' 2>/dev/null; then
  echo "SKIPPED: python3 not found"; exit 77
fi
if [ ! -d "$fixtures/events_tf2_scalar" ] || [ ! -d "$fixtures/events_legacy_simple_value" ]; then
  echo "SKIPPED: event fixtures not found in $fixtures"; exit 77
fi
"$python" "$script" "$fixtures/events_tf2_scalar" --dump > "${TMPDIR:-/tmp}/plot_scalars_tf2.$$" ||
  fail "--dump events_tf2_scalar"
awk -F, 'NR == 1 { next }
  { n++; if ($1 != "my_metric" || $2 != n - 1 || $4 + 0 != 0.5 * (n - 1)) bad = bad " " $0 }
  END { if (n != 100 || bad != "") { print "FAILED: tf2 fixture: " n " values, wrong:" bad; exit 1 } }' \
  "${TMPDIR:-/tmp}/plot_scalars_tf2.$$" || { rm -f "${TMPDIR:-/tmp}/plot_scalars_tf2.$$"; exit 1; }
rm -f "${TMPDIR:-/tmp}/plot_scalars_tf2.$$"
legacy=$("$python" "$script" "$fixtures/events_legacy_simple_value" --dump) ||
  fail "--dump events_legacy_simple_value"
printf '%s\n' "$legacy" | awk -F, 'NR == 1 { next }
  { n++; if ($1 != "strict/foo" || $2 != 5 * (n - 1)) bad = bad " " $0
    s += $4; if (n == 1 || $4 < lo) lo = $4; if (n == 1 || $4 > hi) hi = $4
    if (n == 1) first = $4 }
  END {
    d = s - 148.84195291996002; if (d < 0) d = -d
    if (n != 100 || bad != "" || d > 1e-9 || lo != 1.0012359619140625 ||
        hi != 1.9970664978027344 || first != 1.4962565898895264) {
      printf "FAILED: legacy fixture: %d values, sum %.14f, min %.16g, max %.16g, first %.16g%s\n",
             n, s, lo, hi, first, (bad == "" ? "" : ", wrong:" bad); exit 1 }
    printf "PASSED: my_metric 0..99 = 0.5 * step; strict/foo: 100 values, sum %.14f\n", s }' ||
  exit 1
