#!/bin/sh
# tests/scripts/plot_scalars_restart.sh: a restarted process writes a second event file into the
# run directory; its SessionLog START at step S drops the points of the EARLIER file at steps
# >= S, as TensorBoard's EventAccumulator does for a run (the purge is per run, not per file).
# The two files are written here by an independent encoder (its own CRC32C and protobuf bytes):
#   a (first process):  START at 1, loss = 1.0 at steps 1, 101, 201, 301 (killed after 301)
#   b (restarted at 100, from a checkpoint at step 100): START at 101, loss = 2.0 at 101, 201
# Expected --dump: loss 1 -> 1.0, then 101 -> 2.0, 201 -> 2.0 (a's 101, 201, 301 purged).
#
#   plot_scalars_restart.sh <python3> <plot_scalars.py> <work dir>
#
# Exit 77 (skipped) when python3 is absent.
set -u
python=$1 script=$2 work=$3
fail() { echo "FAILED: $*"; exit 1; }
if [ -z "$python" ] || ! "$python" -c 'import struct' 2>/dev/null; then
  echo "SKIPPED: python3 not found"; exit 77
fi
rm -rf "$work" && mkdir -p "$work" || fail "cannot create $work"
"$python" - "$work" <<'PY' || fail "cannot write the event files"
import struct, sys
def crc32c(data):
    crc = 0xffffffff
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    return crc ^ 0xffffffff
def masked(c):
    return ((((c >> 15) | (c << 17)) & 0xffffffff) + 0xa282ead8) & 0xffffffff
def record(payload):
    n = struct.pack("<Q", len(payload))
    return (n + struct.pack("<I", masked(crc32c(n))) + payload +
            struct.pack("<I", masked(crc32c(payload))))
def ld(field, body):  # a length-delimited field (bodies here are < 128 bytes)
    return bytes([field << 3 | 2, len(body)]) + body
def event(step, rest):  # Event{wall_time(1) = step, step(2) = step, ...}
    return struct.pack("<Bd", 0x09, float(step)) + bytes([0x10]) + varint(step) + rest
def varint(n):
    out = b""
    while True:
        b, n = n & 0x7f, n >> 7
        if not n:
            return out + bytes([b])
        out += bytes([b | 0x80])
start = lambda step: event(step, ld(7, bytes([0x08, 0x01])))       # session_log{status: START}
loss = lambda step, v: event(step, ld(5, ld(1, ld(1, b"loss") + struct.pack("<Bf", 0x15, v))))
version = struct.pack("<Bd", 0x09, 0.0) + ld(3, b"brain.Event:2")
files = {"events.out.tfevents.1000000000.h.1.0.v2":
             [version, start(1)] + [loss(s, 1.0) for s in (1, 101, 201, 301)],
         "events.out.tfevents.1000000100.h.2.0.v2":
             [version, start(101)] + [loss(s, 2.0) for s in (101, 201)]}
for name, events in files.items():
    with open(sys.argv[1] + "/" + name, "wb") as f:
        f.write(b"".join(record(e) for e in events))
PY
got=$("$python" "$script" "$work" --dump | awk -F, 'NR > 1 { printf "%s %s %s;", $1, $2, $4 }') ||
  fail "--dump exited with an error"
want="loss 1 1.0;loss 101 2.0;loss 201 2.0;"
[ "$got" = "$want" ] || fail "got '$got', want '$want'"
echo "PASSED: a restart's START in a later file purges the earlier file's points at steps >= S"
