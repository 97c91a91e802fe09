#!/usr/bin/env bash
# bench/compare.sh: hookfuse against its peers, LibTorch and dlib, on the benchmark MLP
# (bench/mlp.hpp): one training step at batch 1, 32 and 128, and one Fashion-MNIST epoch at
# batch 32 with its test accuracy. Installs what it needs (Debian 12, as root; skipped when
# present), builds in build-compare/, runs the binaries alternately for several rounds (the order
# rotating each round), and writes a markdown table of medians (min-max) with the machine, the
# compiler and the BLAS library each peer actually loaded to bench/results/<date>-<cpu>.md and
# bench/results/latest.md. Raw JSON and logs stay in <build dir>/compare/.
#
# The peers run with OpenBLAS (libopenblas0-pthread) selected through LD_LIBRARY_PATH and one
# thread (OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1, torch::set_num_threads(1)); the script stops
# if a peer loaded any other BLAS (Debian's reference BLAS is about 10x slower).
#
# Usage: bench/compare.sh [--rounds N] [--min-time SECONDS] [--jobs N] [--build-dir DIR]
#                         [--no-install] [--note TEXT]
#   --rounds N        rounds of every binary (default 5)
#   --min-time S      google benchmark --benchmark_min_time of each step benchmark (default 1)
#   --jobs N          parallel build jobs (default 2)
#   --build-dir DIR   build directory (default build-compare)
#   --no-install      do not run apt-get (fail later if something is missing)
#   --note TEXT       a line added to the results file (e.g. what else ran on the machine)
set -euo pipefail

rounds=5
min_time=1
jobs=2
build=build-compare
install=1
note=""
while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) rounds="$2"; shift 2 ;;
    --min-time) min_time="$2"; shift 2 ;;
    --jobs) jobs="$2"; shift 2 ;;
    --build-dir) build="$2"; shift 2 ;;
    --no-install) install=0; shift ;;
    --note) note="$2"; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "compare.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
case "$rounds" in ''|*[!0-9]*|0) echo "compare.sh: --rounds needs a positive integer" >&2; exit 2 ;; esac

root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
openblas_dir=/usr/lib/x86_64-linux-gnu/openblas-pthread

# --- packages -------------------------------------------------------------------------------
packages=(g++ cmake make python3 libeigen3-dev libboost-dev zlib1g-dev libbenchmark-dev
          dataset-fashion-mnist libtorch-dev libdlib-dev libopenblas0-pthread)
if [ "$install" = 1 ]; then
  missing=()
  for p in "${packages[@]}"; do
    dpkg -s "$p" 2>/dev/null | grep -qx 'Status: install ok installed' || missing+=("$p")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    echo "compare.sh: installing ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update
    apt-get install -y --no-install-recommends "${missing[@]}"
  else
    echo "compare.sh: all ${#packages[@]} packages present"
  fi
fi

# --- build ----------------------------------------------------------------------------------
mkdir -p "$build"
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DHOOKFUSE_BUILD_TESTS=OFF \
      -DHOOKFUSE_BUILD_EXAMPLES=OFF -DHOOKFUSE_BUILD_BENCHMARKS=ON > "$build/compare-configure.log" ||
  { cat "$build/compare-configure.log" >&2; exit 1; }
cmake --build "$build" -j"$jobs" --target bench_step bench_epoch
if cmake --build "$build" --target help | grep -qw torch_mlp; then
  peers_dir="$build/bench/peers"  # bench/CMakeLists.txt has add_subdirectory(peers)
  peers_build="$build"
else
  peers_dir="$build/peers-standalone"  # not (yet) part of the top-level build: on its own
  cmake -S bench/peers -B "$peers_dir" -DCMAKE_BUILD_TYPE=Release > /dev/null
  peers_build="$peers_dir"
fi
cmake --build "$peers_build" -j"$jobs" --target torch_mlp dlib_mlp

step_bin="$build/bench/step"
epoch_bin="$build/bench/epoch"
torch_bin="$peers_dir/torch_mlp"
dlib_bin="$peers_dir/dlib_mlp"
for b in "$step_bin" "$epoch_bin" "$torch_bin" "$dlib_bin"; do
  [ -x "$b" ] || { echo "compare.sh: $b was not built" >&2; exit 1; }
done

# --- runs -----------------------------------------------------------------------------------
out="$build/compare"
rm -rf "$out"
mkdir -p "$out"
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1
step_filter='^BM_(fma_peak|handwritten_eigen_step|handwritten_eigen_fused_update_step|hookfuse_step)(/|$)'

# What the dynamic loader resolves for each peer with the library path used for the runs.
for b in "$torch_bin" "$dlib_bin"; do
  echo "$(basename "$b"):"
  LD_LIBRARY_PATH="$openblas_dir" ldd "$b" | grep -E 'blas|lapack' | sed 's/^[[:space:]]*/  /'
done > "$out/ldd.txt"

# run <name> <round> <command...>: one run of a benchmark binary, JSON to
# $out/<name>.<round>.json, stderr (the peers' self-check) appended to $out/<name>.log.
run() {
  local name="$1" r="$2"
  shift 2
  echo "compare.sh: round $r/$rounds: $name"
  "$@" --benchmark_format=json --benchmark_repetitions=1 --benchmark_min_time="$min_time" \
    > "$out/$name.$r.json" 2>> "$out/$name.log"
}
run_one() {
  case "$1" in
    hookfuse_step) run hookfuse_step "$2" "$step_bin" --benchmark_filter="$step_filter" ;;
    hookfuse_epoch) run hookfuse_epoch "$2" "$epoch_bin" ;;
    libtorch) run libtorch "$2" env LD_LIBRARY_PATH="$openblas_dir" "$torch_bin" ;;
    dlib) run dlib "$2" env LD_LIBRARY_PATH="$openblas_dir" "$dlib_bin" ;;
  esac
}
order=(hookfuse_step libtorch hookfuse_epoch dlib)
load_before="$(cut -d' ' -f1-3 /proc/loadavg)"
for ((r = 1; r <= rounds; r++)); do
  for ((i = 0; i < ${#order[@]}; i++)); do
    run_one "${order[$(((i + r - 1) % ${#order[@]}))]}" "$r"
  done
done
load_after="$(cut -d' ' -f1-3 /proc/loadavg)"

# --- the table ------------------------------------------------------------------------------
cpu="$(grep -m1 '^model name' /proc/cpuinfo | sed 's/^[^:]*: *//')"
slug="$(echo "$cpu" | tr 'A-Z' 'a-z' | sed 's/([^)]*)//g; s/[^a-z0-9]\{1,\}/-/g; s/^-//; s/-$//')"
date_iso="$(date -u +%F)"
mkdir -p bench/results
result="bench/results/$date_iso-$slug-$(grep -c "^processor" /proc/cpuinfo)c.md"

OUT="$out" ROUNDS="$rounds" MIN_TIME="$min_time" CPU="$cpu" RESULT="$result" \
NOTE="$note" LOAD_BEFORE="$load_before" LOAD_AFTER="$load_after" OPENBLAS_DIR="$openblas_dir" \
SOURCE="$(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(
          [ -n "$(git status --porcelain -- include bench 2>/dev/null)" ] &&
          echo ' with uncommitted changes in include/ or bench/')" \
CXX_VERSION="$("$(sed -n 's/^CMAKE_CXX_COMPILER:[A-Z]*=//p' "$build/CMakeCache.txt")" --version |
              head -1)" \
PKG_VERSIONS="$(dpkg-query -W -f='${Package} ${Version}; ' libtorch-dev libdlib-dev \
                libopenblas0-pthread libeigen3-dev libbenchmark-dev 2>/dev/null)" \
python3 - <<'PY'
import glob, json, os, re, statistics, time

out, rounds = os.environ["OUT"], int(os.environ["ROUNDS"])
rows = [  # (label, step benchmark prefix, epoch benchmark)
    ("hand-written Eigen", "BM_handwritten_eigen_step", "BM_handwritten_eigen_epoch"),
    ("hand-written Eigen, fused update", "BM_handwritten_eigen_fused_update_step", None),
    ("hookfuse, 4 hooks", "BM_hookfuse_step", "BM_hookfuse_epoch"),
    ("LibTorch", "BM_libtorch_step", "BM_libtorch_epoch"),
    ("dlib", "BM_dlib_step", "BM_dlib_epoch"),
]
unit_scale = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}
times, acc, gflops, errors, contexts = {}, {}, {}, {}, {}
for path in sorted(glob.glob(os.path.join(out, "*.json"))):
    with open(path) as f:
        doc = json.load(f)
    contexts[os.path.basename(path).split(".")[0]] = doc.get("context", {})
    for b in doc["benchmarks"]:
        name = re.sub(r"/iterations:\d+$", "", b.get("run_name", b["name"]))
        if b.get("error_occurred"):
            errors[name] = b.get("error_message", "error")
            continue
        seconds = b["real_time"] * unit_scale[b["time_unit"]]
        times.setdefault(name, []).append(seconds)
        if "test_accuracy" in b:
            acc.setdefault(name, []).append(b["test_accuracy"])
        if "GFLOP/s" in b:
            gflops.setdefault(name, []).append(b["GFLOP/s"])

blas = {k: contexts.get(k, {}).get("blas", "?") for k in ("libtorch", "dlib")}
for name, b in blas.items():
    if "openblas" not in b:
        raise SystemExit(f"compare.sh: {name} did not load OpenBLAS but {b}; no table written")

def med(name):
    return statistics.median(times[name]) if name in times else None

def cell(name, scale, digits):
    if name in errors:
        return "skipped"
    if name not in times:
        return "–"
    v = [t * scale for t in times[name]]
    f = lambda x: f"{x:.{digits}f}"
    return f"{f(statistics.median(v))} ({f(min(v))}–{f(max(v))})"

batches = [1, 32, 128]
lines = []
lines.append("| implementation | " + " | ".join(f"step B={b} (µs)" for b in batches) +
             " | epoch, B=32 (s) | test accuracy |")
lines.append("|---|" + "---|" * (len(batches) + 2))
for label, step, epoch in rows:
    cells = [cell(f"{step}/{b}", 1e6, 0 if b > 1 else 1) for b in batches]
    cells.append(cell(epoch, 1.0, 3) if epoch else "–")
    a = acc.get(epoch, []) if epoch else []
    cells.append(f"{statistics.median(a):.4f}" if a else "–")
    lines.append(f"| {label} | " + " | ".join(cells) + " |")

def ratio(a, b):
    ma, mb = med(a), med(b)
    return f"{ma / mb:.3f}" if ma and mb else "–"

ratio_lines = ["| ratio of medians | " + " | ".join(f"B={b}" for b in batches) + " | epoch |",
               "|---|" + "---|" * (len(batches) + 1)]
for label, num, den in [("hookfuse / LibTorch", "hookfuse", "libtorch"),
                        ("hookfuse / dlib", "hookfuse", "dlib"),
                        ("hookfuse / hand-written Eigen", "hookfuse", "handwritten_eigen")]:
    cells = [ratio(f"BM_{num}_step/{b}", f"BM_{den}_step/{b}") for b in batches]
    cells.append(ratio(f"BM_{num}_epoch", f"BM_{den}_epoch"))
    ratio_lines.append(f"| {label} | " + " | ".join(cells) + " |")

def target(name, den, limit):
    m, d = med(name), med(den)
    if not m or not d:
        return f"≤ {limit}: not measured"
    r = m / d
    return f"{r:.3f} (target ≤ {limit}: {'met' if r <= limit else 'NOT met'})"

targets = [
    f"- hookfuse step at B=1 / LibTorch: "
    f"{target('BM_hookfuse_step/1', 'BM_libtorch_step/1', 0.15)}",
    f"- hookfuse step at B=32 / LibTorch: "
    f"{target('BM_hookfuse_step/32', 'BM_libtorch_step/32', 0.5)}",
    f"- hookfuse epoch at B=32 / LibTorch: "
    f"{target('BM_hookfuse_epoch', 'BM_libtorch_epoch', 0.5)}",
]

gf_lines = ["| GFLOP/s (median) | " + " | ".join(f"B={b}" for b in batches) + " | epoch |",
            "|---|" + "---|" * (len(batches) + 1)]
for label, step, epoch in rows:
    cells = [f"{statistics.median(gflops[f'{step}/{b}']):.1f}" if f"{step}/{b}" in gflops
             else "–" for b in batches]
    cells.append(f"{statistics.median(gflops[epoch]):.1f}" if epoch in gflops else "–")
    gf_lines.append(f"| {label} | " + " | ".join(cells) + " |")
peaks = []
for path in glob.glob(os.path.join(out, "*.json")):
    with open(path) as f:
        for b in json.load(f)["benchmarks"]:
            if b["name"].startswith("BM_fma_peak") and "peak_GFLOP/s" in b:
                peaks.append(b["peak_GFLOP/s"])

def read(name):
    p = os.path.join(out, name)
    return open(p).read().strip() if os.path.exists(p) else ""

checks = []
for log in ("libtorch.log", "dlib.log"):
    for line in read(log).splitlines():
        if "self-check" in line and line not in checks:
            checks.append(line)

ctx = contexts.get("hookfuse_step", {})
doc = []
doc.append(f"# hookfuse vs LibTorch and dlib: {time.strftime('%Y-%m-%d', time.gmtime())}")
doc.append("")
doc.append("Written by `bench/compare.sh`; the model, weights and batches are those of "
           "`bench/mlp.hpp` (784 → 256 ReLU → 10, softmax cross-entropy, plain SGD, float32, "
           "one thread). Step: forward + backward + update on a fixed random batch, SGD 0.01. "
           "Epoch: the 60,000 Fashion-MNIST training images at batch 32, SGD 0.1, NumpyInputFn "
           "seed 7, then the 10,000 test images (one evaluator for all).")
doc.append("")
doc.append(f"- machine: {os.environ['CPU']}, {ctx.get('num_cpus', '?')} logical CPUs, "
           f"{ctx.get('mhz_per_cpu', '?')} MHz (as reported), caches "
           + ", ".join(f"L{c['level']} {c['type'].lower()} {c['size'] // 1024} KiB"
                       for c in ctx.get("caches", [])))
doc.append(f"- compiler: {os.environ['CXX_VERSION']}, hookfuse and the peers' own code with "
           "`-O3 -march=native`")
doc.append(f"- packages: {os.environ['PKG_VERSIONS'].strip().rstrip(';')}")
doc.append(f"- BLAS loaded (peers, `LD_LIBRARY_PATH={os.environ['OPENBLAS_DIR']}`, "
           "`OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1`), as mapped in the process: "
           f"torch_mlp: `{blas['libtorch']}`; dlib_mlp: `{blas['dlib']}`. "
           "hookfuse and the hand-written step use Eigen's own kernels, no BLAS.")
doc.append(f"- source: commit {os.environ['SOURCE']}")
doc.append(f"- runs: {rounds} rounds, each binary once per round in rotating order, "
           f"`--benchmark_min_time={os.environ['MIN_TIME']} --benchmark_repetitions=1`; "
           "cells are the median over rounds (min–max)")
if peaks:
    doc.append(f"- measured FMA peak (BM_fma_peak): {statistics.median(peaks):.1f} GFLOP/s "
               f"median ({min(peaks):.1f}–{max(peaks):.1f})")
doc.append(f"- load average (1, 5, 15 min) before: {os.environ['LOAD_BEFORE']}, after: "
           f"{os.environ['LOAD_AFTER']}")
if os.environ["NOTE"]:
    doc.append(f"- note: {os.environ['NOTE']}")
doc.append("")
doc.extend(lines)
doc.append("")
doc.extend(ratio_lines)
doc.append("")
doc.append("Targets (issue):")
doc.extend(targets)
doc.append("")
doc.extend(gf_lines)
doc.append("")
doc.append("FLOPs per step 6·B·(784·256 + 256·10), the update not counted; dlib's first layer "
           "also computes the gradient of its input (2·B·784·256 more, not counted).")
if errors:
    doc.append("")
    doc.append("Errors:")
    for k, v in sorted(errors.items()):
        doc.append(f"- {k}: {v}")
doc.append("")
doc.append("Peer self-checks (20 SGD steps against the hand-written Eigen step):")
doc.extend(f"- {c}" for c in checks)
doc.append("")
doc.append("`ldd` of the peers with that library path:")
doc.append("")
doc.append("```")
doc.append(read("ldd.txt"))
doc.append("```")
text = "\n".join(doc) + "\n"
with open(os.environ["RESULT"], "w") as f:
    f.write(text)
print(text)
PY
cp "$result" bench/results/latest.md
echo "compare.sh: wrote $result and bench/results/latest.md"
