#!/bin/sh
# examples/fashion_mnist/bad_input_test.sh EXE WORKDIR: the example refuses every bad flag and
# every bad data directory with one line, never a crash (ctest example.fashion_mnist_bad_input).
# Each run must exit non-zero but below 128 (no signal: no abort, no sanitizer halt), print
# exactly one line on stderr, "fashion_mnist: ..." naming the flag or the file at fault, and
# nothing about accuracy on stdout. The data sets are small IDX files written here by hand
# (uncompressed, one gzip-compressed), so the test does not need the Fashion-MNIST files; a
# well-formed set trains for 2 steps first, so every failure below comes from its fault.
set -eu
. "$(dirname "$0")/test_lib.sh"
exe=$1
work=$2
fresh_dir "$work"

# be32 N: N as 4 big-endian bytes.
be32() {
  printf "\\$(printf %03o $(($1 >> 24 & 255)))\\$(printf %03o $(($1 >> 16 & 255)))"
  printf "\\$(printf %03o $(($1 >> 8 & 255)))\\$(printf %03o $(($1 & 255)))"
}
# images FILE COUNT ROWS COLS [MAGIC]: an IDX3 file of COUNT zero images of ROWS x COLS.
images() {
  { be32 "${5:-2051}"; be32 "$2"; be32 "$3"; be32 "$4"; head -c $(($2 * $3 * $4)) /dev/zero; } >"$1"
}
# labels FILE LABEL...: an IDX1 file holding the labels.
labels() {
  f=$1
  shift
  { be32 2049; be32 $#; for v in "$@"; do printf "\\$(printf %03o "$v")"; done; } >"$f"
}
# good DIR: a well-formed set, 3 training and 2 test examples of 28x28.
good() {
  mkdir -p "$1"
  images "$1/train-images-idx3-ubyte" 3 28 28
  labels "$1/train-labels-idx1-ubyte" 0 1 9
  images "$1/t10k-images-idx3-ubyte" 2 28 28
  labels "$1/t10k-labels-idx1-ubyte" 3 4
}

runs=0
# expect_error WHAT NAME ARG...: runs the example with ARG...; NAME must appear in the one line.
expect_error() {
  what=$1
  name=$2
  shift 2
  status=0
  "$exe" "$@" >"$work/stdout.txt" 2>"$work/stderr.txt" || status=$?
  [ "$status" -ne 0 ] || fail "$what: exit status 0"
  [ "$status" -lt 128 ] || fail "$what: exit status $status (a signal); stderr: $(head -5 "$work/stderr.txt")"
  lines=$(wc -l <"$work/stderr.txt")
  [ "$lines" -eq 1 ] || fail "$what: $lines lines on stderr, expected 1: $(head -5 "$work/stderr.txt")"
  line=$(cat "$work/stderr.txt")
  case $line in
    "fashion_mnist: "*) ;;
    *) fail "$what: the line does not start with 'fashion_mnist: ': $line" ;;
  esac
  case $line in
    *"$name"*) ;;
    *) fail "$what: the line does not name $name: $line" ;;
  esac
  if grep -qi 'accuracy' "$work/stdout.txt"; then fail "$what: stdout reports an accuracy"; fi
  runs=$((runs + 1))
  echo "ok ($status) $what: $line"
}

d=$work/good
good "$d"
# The well-formed set trains and evaluates.
"$exe" --data_dir "$d" --max_steps 2 --batch_size 2 >"$work/stdout.txt" 2>"$work/stderr.txt" ||
  fail "the well-formed set: exit status $?: $(head -5 "$work/stderr.txt")"
grep -q '^test_accuracy: ' "$work/stdout.txt" || fail "the well-formed set: no test_accuracy"

# Flags: every numeric flag with NaN, infinities, zero, a negative, a huge value and text.
for flag in --epochs --batch_size --learning_rate --seed --max_steps --save_checkpoint_steps; do
  for value in nan inf -inf 0 -1 99999999999999999999999 1e999 abc 1.5 ''; do
    case "$flag $value" in
      "--seed 0") continue ;;  # a valid seed
      "--learning_rate 1.5") continue ;;  # a valid rate
    esac
    expect_error "$flag '$value'" "$flag" --data_dir "$d" "$flag" "$value"
  done
done
expect_error "--batch_size 60001" "--batch_size: 60001 not in [1, 60000]" --data_dir "$d" --batch_size 60001
expect_error "--max_steps 2^63-1" "--max_steps: 9223372036854775807 not in [1, 1000000000]" \
  --data_dir "$d" --max_steps 9223372036854775807
expect_error "--learning_rate 11" "--learning_rate: 11 not in (0, 10]" --data_dir "$d" --learning_rate 11
expect_error "--optimizer nope" "--optimizer" --data_dir "$d" --optimizer nope
expect_error "--batch_size without a value" "--batch_size" --data_dir "$d" --batch_size

# Data directories, each the well-formed set with one fault.
bad() {  # bad NAME: a fresh copy of the well-formed set in $work/NAME
  b=$work/$1
  rm -rf "$b"
  good "$b"
}
expect_error "missing directory" "$work/missing/train-images-idx3-ubyte" --data_dir "$work/missing"
bad empty_files
: >"$b/train-images-idx3-ubyte"
expect_error "empty image file" "$b/train-images-idx3-ubyte: truncated" --data_dir "$b"
bad empty_labels
: >"$b/t10k-labels-idx1-ubyte"
expect_error "empty test label file" "$b/t10k-labels-idx1-ubyte: truncated" --data_dir "$b"
bad truncated
head -c 1000 "$work/good/train-images-idx3-ubyte" >"$b/train-images-idx3-ubyte"
expect_error "truncated images" "$b/train-images-idx3-ubyte: truncated" --data_dir "$b"
bad truncated_header
head -c 6 "$work/good/t10k-labels-idx1-ubyte" >"$b/t10k-labels-idx1-ubyte"
expect_error "truncated label header" "$b/t10k-labels-idx1-ubyte: truncated" --data_dir "$b"
bad magic
images "$b/train-images-idx3-ubyte" 3 28 28 2049
expect_error "wrong magic" "$b/train-images-idx3-ubyte: magic number 0x00000801" --data_dir "$b"
bad labels_train
labels "$b/train-labels-idx1-ubyte" 0 10 2
expect_error "train label 10" "$b/train-labels-idx1-ubyte: record 1: label 10" --data_dir "$b"
bad labels_test
labels "$b/t10k-labels-idx1-ubyte" 3 255
expect_error "test label 255" "$b/t10k-labels-idx1-ubyte: record 1: label 255" --data_dir "$b"
bad labels_gz
labels "$b/t10k-labels-idx1-ubyte" 3 17
gzip "$b/t10k-labels-idx1-ubyte"
expect_error "test label 17 in a .gz" "$b/t10k-labels-idx1-ubyte.gz: record 1: label 17" --data_dir "$b"
bad size_train
images "$b/train-images-idx3-ubyte" 3 27 28
expect_error "train images 27x28" "$b/train-images-idx3-ubyte: images of 27x28, expected 28x28" \
  --data_dir "$b"
bad size_test
images "$b/t10k-images-idx3-ubyte" 2 27 28
expect_error "test images 27x28" "$b/t10k-images-idx3-ubyte: images of 27x28, expected 28x28" \
  --data_dir "$b"
bad zero_train
images "$b/train-images-idx3-ubyte" 0 28 28
labels "$b/train-labels-idx1-ubyte"
expect_error "zero training records" "$b/train-images-idx3-ubyte: 0 images" --data_dir "$b"
bad zero_test
images "$b/t10k-images-idx3-ubyte" 0 28 28
labels "$b/t10k-labels-idx1-ubyte"
expect_error "zero test records" "$b/t10k-images-idx3-ubyte: 0 images" --data_dir "$b"
bad count_train
labels "$b/train-labels-idx1-ubyte" 0 1
expect_error "train count mismatch" "$b/train-labels-idx1-ubyte: 2 labels (image/label count mismatch)" \
  --data_dir "$b"
bad count_test
images "$b/t10k-images-idx3-ubyte" 5 28 28
expect_error "test count mismatch" "$b/t10k-images-idx3-ubyte: 5 images but" --data_dir "$b"

echo "PASSED: $runs bad inputs refused with one line each"
