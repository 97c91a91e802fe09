#!/bin/sh
# tests/io/protoc_decode_raw.sh: protoc --decode_raw (Debian's protobuf-compiler), an
# independent protobuf decoder, must decode every record of an event file hookfuse wrote, and
# print the fields expected for it.
#
#   protoc_decode_raw.sh <write_event_records binary> <out dir> <protoc or empty>
#
# Exit 77 (ctest's SKIP_RETURN_CODE) when protoc is absent: the test shows as skipped.
set -u
tool=$1 out=$2 protoc=${3:-}
if [ -z "$protoc" ] || [ ! -x "$protoc" ]; then
  echo "SKIPPED: protoc not found (apt-get install protobuf-compiler)"
  exit 77
fi
"$tool" "$out" || { echo "FAIL: $tool $out"; exit 1; }
n=0
for pb in "$out"/record_*.pb; do
  [ -e "$pb" ] || { echo "FAIL: no records in $out"; exit 1; }
  decoded=$("$protoc" --decode_raw < "$pb") || { echo "FAIL: protoc --decode_raw rejects $pb"; exit 1; }
  expect=${pb%.pb}.expect
  while IFS= read -r line; do
    printf '%s\n' "$decoded" | grep -qF -- "$line" || {
      echo "FAIL: $pb: protoc --decode_raw output lacks '$line':"; printf '%s\n' "$decoded"; exit 1; }
  done < "$expect"
  n=$((n + 1))
done
[ "$n" -eq 5 ] || { echo "FAIL: $n records decoded, expected 5"; exit 1; }
echo "protoc --decode_raw decoded all $n records"
