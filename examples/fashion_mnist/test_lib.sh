# examples/fashion_mnist/test_lib.sh: what the example's test scripts share, sourced by them
# (POSIX sh):
#   fail MESSAGE...          prints "FAILED: MESSAGE" and exits 1
#   require_fashion_mnist    sets data to the data set's directory; exits 77 (ctest: skipped)
#                            when the Fashion-MNIST files are not there
#   fresh_dir DIR            DIR removed and created empty
fail() { echo "FAILED: $*"; exit 1; }

require_fashion_mnist() {
  data=/usr/share/datasets/fashion-mnist
  if [ ! -e "$data/train-images-idx3-ubyte.gz" ] && [ ! -e "$data/train-images-idx3-ubyte" ]; then
    echo "SKIPPED: Fashion-MNIST not found in $data"
    exit 77
  fi
}

fresh_dir() {
  rm -rf "$1"
  mkdir -p "$1"
}
