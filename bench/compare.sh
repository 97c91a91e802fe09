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
# OpenBLAS's kernel: OpenBLAS picks its kernels ("core") from the CPU model, and 0.3.21 does not
# know every model (a KVM "Intel Xeon" with AVX-512 is run as "Prescott", SSE3, about 4x slower).
# The script reads the host's widest instruction set from /proc/cpuinfo (AVX-512 F+VL+BW+DQ:
# SkylakeX; AVX2+FMA: Haswell, Zen on AMD; AVX: Sandybridge), starts a peer once to see which core
# OpenBLAS detects by itself, and sets OPENBLAS_CORETYPE to the host's core only when the detected
# one is narrower (an equally wide detected core, e.g. Cooperlake for SkylakeX, keeps OpenBLAS's
# own tuning). It then starts each peer once with OPENBLAS_VERBOSE=2, reads the "Core: <name>"
# OpenBLAS prints, and writes that core into the results next to the BLAS library, with a
# WARNING line when it is not the requested core or is narrower than the host's.
#
# Threads: with --threads N (default 2), a second table compares the step at batch 32 and 128 on
# N threads: hookfuse's bench_threads (hookfuse::set_intra_op_parallelism_threads), LibTorch
# (torch::set_num_threads, OpenBLAS on N threads) and dlib (OpenBLAS on N threads; dlib's own
# code is single-threaded), each beside its one-thread step. LibTorch's threaded run gets
# OMP_WAIT_POLICY=PASSIVE: Debian's LibTorch runs its own parallel loops on OpenMP, whose idle
# workers otherwise spin on the cores OpenBLAS's threads need (on 2 cores its batch-32 step took
# 1,884 us with the default policy and 351 us with PASSIVE, against 414 us on one thread).
#
# Usage: bench/compare.sh [--rounds N] [--min-time SECONDS] [--jobs N] [--build-dir DIR]
#                         [--no-install] [--note TEXT] [--openblas-core auto|openblas|NAME]
#                         [--threads N] [--results-dir DIR]
#   --rounds N        rounds of every binary (default 5)
#   --min-time S      google benchmark --benchmark_min_time of each step benchmark (default 1)
#   --jobs N          parallel build jobs (default 2)
#   --build-dir DIR   build directory (default build-compare)
#   --no-install      do not run apt-get (fail later if something is missing)
#   --note TEXT       a line added to the results file (e.g. what else ran on the machine)
#   --openblas-core C auto (default): the host's widest core when OpenBLAS detects a narrower
#                     one; openblas: OpenBLAS's own detection; NAME: OPENBLAS_CORETYPE=NAME
#                     (OpenBLAS 0.3.21 knows Prescott, Nehalem, Sandybridge, Haswell, Zen,
#                     SkylakeX, ...). Without the flag, an OPENBLAS_CORETYPE already set in the
#                     environment is taken as NAME.
#   --threads N       threads of the second table (default 2; 1: no second table)
#   --results-dir DIR where the results markdown goes (default bench/results)
set -euo pipefail

rounds=5
min_time=1
jobs=2
build="build-compare"
install=1
note=""
core_request="${OPENBLAS_CORETYPE:-auto}"
threads=2
results_dir=bench/results
while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) rounds="$2"; shift 2 ;;
    --min-time) min_time="$2"; shift 2 ;;
    --jobs) jobs="$2"; shift 2 ;;
    --build-dir) build="$2"; shift 2 ;;
    --no-install) install=0; shift ;;
    --note) note="$2"; shift 2 ;;
    --openblas-core) core_request="$2"; shift 2 ;;
    --threads) threads="$2"; shift 2 ;;
    --results-dir) results_dir="$2"; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "compare.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
for value in "rounds:$rounds" "threads:$threads"; do
  case "${value#*:}" in
    '' | *[!0-9]* | 0) echo "compare.sh: --${value%%:*} needs a positive integer" >&2; exit 2 ;;
  esac
done
case "$core_request" in
  ''|*[!A-Za-z0-9_]*) echo "compare.sh: --openblas-core needs auto, openblas or a core name" \
                         "such as Haswell or SkylakeX, not '$core_request'" >&2; exit 2 ;;
esac
unset OPENBLAS_CORETYPE  # set again below, from core_request

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
bench_targets=(bench_step bench_epoch)
if [ "$threads" -gt 1 ]; then bench_targets+=(bench_threads); fi
cmake --build "$build" -j"$jobs" --target "${bench_targets[@]}"
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
threads_bin="$build/bench/threads"
torch_bin="$peers_dir/torch_mlp"
dlib_bin="$peers_dir/dlib_mlp"
built=("$step_bin" "$epoch_bin" "$torch_bin" "$dlib_bin")
if [ "$threads" -gt 1 ]; then built+=("$threads_bin"); fi
for b in "${built[@]}"; do
  [ -x "$b" ] || { echo "compare.sh: $b was not built" >&2; exit 1; }
done

out="$build/compare"
rm -rf "$out"
mkdir -p "$out"
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1

# --- OpenBLAS's kernel ----------------------------------------------------------------------
# The core of the host's widest instruction set, in OPENBLAS_CORETYPE's names, or nothing
# (not x86-64, or older than AVX: OpenBLAS's own detection stays). AVX-512 is SkylakeX even
# with AVX512_BF16: Cooperlake's float kernels are SkylakeX's (OpenBLAS 0.3.21's
# kernel/x86_64/KERNEL.COOPERLAKE includes KERNEL.SKYLAKEX and adds bfloat16 ones), and
# 0.3.21's OPENBLAS_CORETYPE does not accept Cooperlake ("Core not found").
host_core() {
  local flags vendor f
  flags=" $(grep -m1 '^flags' /proc/cpuinfo | sed 's/^[^:]*://') "
  vendor="$(grep -m1 '^vendor_id' /proc/cpuinfo | sed 's/^[^:]*: *//')"
  has() { for f in "$@"; do case "$flags" in *" $f "*) ;; *) return 1 ;; esac; done; }
  if has avx512f avx512vl avx512bw avx512dq; then
    echo SkylakeX
  elif has avx2 fma; then
    case "$vendor" in AuthenticAMD | HygonGenuine) echo Zen ;; *) echo Haswell ;; esac
  elif has avx; then
    echo Sandybridge
  fi
}
lower() { echo "$1" | tr '[:upper:]' '[:lower:]'; }
# The widest vector extension an OpenBLAS x86-64 core name runs: 4 AVX-512, 3 AVX2, 2 AVX,
# 1 SSE or unknown.
core_rank() {
  case "$(lower "$1")" in
    skylakex | cooperlake | sapphirerapids) echo 4 ;;
    haswell | zen) echo 3 ;;
    sandybridge | bulldozer | piledriver | steamroller | excavator) echo 2 ;;
    *) echo 1 ;;
  esac
}
# openblas_core <label> <binary>: starts <binary> once (its self-check, then
# --benchmark_list_tests) with the runs' library path and OPENBLAS_VERBOSE=2 and prints the core
# OpenBLAS reports when it loads ("Core: <name>" on stderr); empty when none. Its stderr goes to
# $out/openblas-core.log under a line naming <label> and OPENBLAS_CORETYPE.
openblas_core() {
  local label="$1" bin="$2" err
  err="$(env LD_LIBRARY_PATH="$openblas_dir" OPENBLAS_VERBOSE=2 "$bin" \
           --benchmark_list_tests=true 2>&1 > /dev/null)" || true
  { echo "== $label: $(basename "$bin") with OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE-(unset)}"
    echo "$err"; } >> "$out/openblas-core.log"
  echo "$err" | sed -n 's/^Core: *//p' | tail -1
}

wanted_core="$(host_core)"
detected_core="$(openblas_core "OpenBLAS's own detection" "$dlib_bin")"
detected="OpenBLAS by itself detects ${detected_core:-no core}"
core_set=""
case "$core_request" in
  auto)
    if [ -n "$wanted_core" ] &&
       [ "$(core_rank "$detected_core")" -lt "$(core_rank "$wanted_core")" ]; then
      core_set="$wanted_core"
      core_choice="OPENBLAS_CORETYPE=$core_set, the host's widest instruction set; $detected"
    else
      core_choice="OpenBLAS's own detection (${detected_core:-no core}), as wide as the host's"
      core_choice+=" widest instruction set (${wanted_core:-not known})"
    fi ;;
  openblas) core_choice="OpenBLAS's own detection (${detected_core:-no core}), as asked" ;;
  *)
    core_set="$core_request"
    core_choice="OPENBLAS_CORETYPE=$core_set, as asked; $detected" ;;
esac
if [ -n "$core_set" ]; then export OPENBLAS_CORETYPE="$core_set"; fi
torch_core="$(openblas_core "the runs" "$torch_bin")"
dlib_core="$(openblas_core "the runs" "$dlib_bin")"
core_warnings=""
for peer in "torch_mlp:$torch_core" "dlib_mlp:$dlib_core"; do
  name="${peer%%:*}" core="${peer#*:}"
  if [ -z "$core" ]; then
    core_warnings+="$name printed no OpenBLAS core with OPENBLAS_VERBOSE=2 (not OpenBLAS,"
    core_warnings+=" or one built without DYNAMIC_ARCH)"$'\n'
  elif [ -n "$core_set" ] && [ "$(lower "$core")" != "$(lower "$core_set")" ]; then
    core_warnings+="$name ran OpenBLAS core $core, not the requested"
    core_warnings+=" OPENBLAS_CORETYPE=$core_set"$'\n'
  fi
  if [ -n "$core" ] && [ -n "$wanted_core" ] &&
     [ "$(core_rank "$core")" -lt "$(core_rank "$wanted_core")" ]; then
    core_warnings+="$name ran OpenBLAS core $core, narrower than the host's widest instruction"
    core_warnings+=" set ($wanted_core): its BLAS does not run at its best"$'\n'
  fi
done
ran="torch_mlp ${torch_core:-reported none}, dlib_mlp ${dlib_core:-reported none}"
{ echo "== summary"
  echo "host's widest core: ${wanted_core:-not known}; $detected"
  echo "chosen: $core_choice"
  echo "OpenBLAS core run: $ran"
  printf '%s' "$core_warnings" | sed 's/^/WARNING: /'; } >> "$out/openblas-core.log"
echo "compare.sh: OpenBLAS core chosen: $core_choice"
echo "compare.sh: OpenBLAS core run: $ran"
printf '%s' "$core_warnings" | sed 's/^/compare.sh: WARNING: /' >&2

# --- runs -----------------------------------------------------------------------------------
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
# The threaded runs: batch 32 and 128 on $threads threads (hookfuse also on one, same binary).
n_env=(env OPENBLAS_NUM_THREADS="$threads" OMP_NUM_THREADS="$threads")
torch_wait=(OMP_WAIT_POLICY=PASSIVE)  # LibTorch's threaded run (see the header)
run_one() {
  case "$1" in
    hookfuse_step) run hookfuse_step "$2" "$step_bin" --benchmark_filter="$step_filter" ;;
    hookfuse_epoch) run hookfuse_epoch "$2" "$epoch_bin" ;;
    libtorch) run libtorch "$2" env LD_LIBRARY_PATH="$openblas_dir" "$torch_bin" ;;
    dlib) run dlib "$2" env LD_LIBRARY_PATH="$openblas_dir" "$dlib_bin" ;;
    hookfuse_threads)
      run hookfuse_threads "$2" "${n_env[@]}" "$threads_bin" \
        --benchmark_filter="^BM_hookfuse_step_threads/batch:(32|128)/threads:(1|$threads)(/|\$)" ;;
    libtorch_threads)
      run libtorch_threads "$2" "${n_env[@]}" "${torch_wait[@]}" LD_LIBRARY_PATH="$openblas_dir" \
        "$torch_bin" \
        --threads="$threads" --benchmark_filter='^BM_libtorch_step/(32|128)$' ;;
    dlib_threads)
      run dlib_threads "$2" "${n_env[@]}" LD_LIBRARY_PATH="$openblas_dir" "$dlib_bin" \
        --threads="$threads" --benchmark_filter='^BM_dlib_step/(32|128)$' ;;
  esac
}
order=(hookfuse_step libtorch hookfuse_epoch dlib)
if [ "$threads" -gt 1 ]; then order+=(hookfuse_threads libtorch_threads dlib_threads); fi
load_before="$(cut -d' ' -f1-3 /proc/loadavg)"
for ((r = 1; r <= rounds; r++)); do
  for ((i = 0; i < ${#order[@]}; i++)); do
    run_one "${order[$(((i + r - 1) % ${#order[@]}))]}" "$r"
  done
done
load_after="$(cut -d' ' -f1-3 /proc/loadavg)"

# --- the table ------------------------------------------------------------------------------
cpu="$(grep -m1 '^model name' /proc/cpuinfo | sed 's/^[^:]*: *//')"
slug="$(lower "$cpu" | sed 's/([^)]*)//g; s/[^a-z0-9]\{1,\}/-/g; s/^-//; s/-$//')"
date_iso="$(date -u +%F)"
mkdir -p "$results_dir"
result="$results_dir/$date_iso-$slug-$(grep -c "^processor" /proc/cpuinfo)c.md"

OUT="$out" ROUNDS="$rounds" MIN_TIME="$min_time" CPU="$cpu" RESULT="$result" \
NOTE="$note" LOAD_BEFORE="$load_before" LOAD_AFTER="$load_after" OPENBLAS_DIR="$openblas_dir" \
THREADS="$threads" CORE_CHOICE="$core_choice" CORE_SET="$core_set" CORE_WARNINGS="$core_warnings" \
TORCH_CORE="$torch_core" DLIB_CORE="$dlib_core" \
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
threads = int(os.environ["THREADS"])
core_warnings = [w for w in os.environ["CORE_WARNINGS"].splitlines() if w]
run_cores = {}  # (run, OpenBLAS core in its context): rounds
for path in sorted(glob.glob(os.path.join(out, "*.json"))):
    with open(path) as f:
        doc = json.load(f)
    kind = os.path.basename(path).split(".")[0]
    context = doc.get("context", {})
    contexts.setdefault(kind, context)
    if "openblas_core" in context:
        key = (kind, context["openblas_core"], context.get("openblas_threads", "?"))
        run_cores[key] = run_cores.get(key, 0) + 1
    # The threaded runs' benchmarks are kept apart from the one-thread runs of the same name.
    suffix = "@threads" if kind.endswith("_threads") else ""
    for b in doc["benchmarks"]:
        name = re.sub(r"(/iterations:\d+|/real_time)+$", "", b.get("run_name", b["name"])) + suffix
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
# Every run's own report (openblas_get_corename(), openblas_get_num_threads()) against the core
# the probe saw and the threads the run was given.
probe_core = {"libtorch": os.environ["TORCH_CORE"], "dlib": os.environ["DLIB_CORE"]}
for (kind, core, nthreads), n in sorted(run_cores.items()):
    peer = kind.removesuffix("_threads")
    want_threads = str(threads) if kind.endswith("_threads") else "1"
    if core.lower() != probe_core.get(peer, "").lower():
        core_warnings.append(f"{n} {kind} run(s) report OpenBLAS core {core}, the "
                             f"OPENBLAS_VERBOSE=2 start {probe_core.get(peer) or 'none'}")
    if nthreads != want_threads:
        core_warnings.append(f"{n} {kind} run(s) report {nthreads} OpenBLAS threads, "
                             f"not {want_threads}")

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
doc.append(f"- OpenBLAS core run (\"Core:\" with `OPENBLAS_VERBOSE=2`): torch_mlp "
           f"**{os.environ['TORCH_CORE'] or 'none reported'}**, dlib_mlp "
           f"**{os.environ['DLIB_CORE'] or 'none reported'}**; chosen: "
           f"{os.environ['CORE_CHOICE']}")
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
for w in core_warnings:
    doc.append("")
    doc.append(f"**WARNING: {w}.**")
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
if threads > 1:
    t_batches = [32, 128]
    t_rows = [  # (label, one-thread benchmark, threaded benchmark; the batch appended)
        ("hookfuse, 4 hooks", "BM_hookfuse_step_threads/batch:{b}/threads:1@threads",
         "BM_hookfuse_step_threads/batch:{b}/threads:" + str(threads) + "@threads"),
        ("LibTorch", "BM_libtorch_step/{b}", "BM_libtorch_step/{b}@threads"),
        ("dlib", "BM_dlib_step/{b}", "BM_dlib_step/{b}@threads"),
    ]
    doc.append("")
    doc.append(f"Step on {threads} threads: hookfuse's `bench/threads` "
               f"(`hookfuse::set_intra_op_parallelism_threads({threads})`; its one-thread row from "
               f"the same binary and run), LibTorch with `torch::set_num_threads({threads})` and "
               "`OMP_WAIT_POLICY=PASSIVE` (its OpenMP workers otherwise spin on the cores "
               "OpenBLAS's threads need), dlib "
               f"(its own code single-threaded; OpenBLAS's products on {threads} threads); the "
               f"peers with `OPENBLAS_NUM_THREADS={threads} OMP_NUM_THREADS={threads}` and the "
               "core above, their one-thread rows from the table above. Median (min–max), µs:")
    doc.append("")
    doc.append("| implementation | threads | " +
               " | ".join(f"step B={b} (µs)" for b in t_batches) + " | " +
               " | ".join(f"speed-up B={b}" for b in t_batches) + " |")
    doc.append("|---|---|" + "---|" * (2 * len(t_batches)))
    for label, one, many in t_rows:
        for n, pattern in ((1, one), (threads, many)):
            cells = [cell(pattern.format(b=b), 1e6, 0) for b in t_batches]
            if n == 1:
                cells += ["1" for _ in t_batches]
            else:
                cells += [ratio(one.format(b=b), many.format(b=b)) for b in t_batches]
            doc.append(f"| {label} | {n} | " + " | ".join(cells) + " |")
    doc.append("")
    doc.append("| ratio of medians, " + f"{threads} threads | " +
               " | ".join(f"B={b}" for b in t_batches) + " |")
    doc.append("|---|" + "---|" * len(t_batches))
    for label, den in (("hookfuse / LibTorch", 1), ("hookfuse / dlib", 2)):
        doc.append(f"| {label} | " + " | ".join(
            ratio(t_rows[0][2].format(b=b), t_rows[den][2].format(b=b)) for b in t_batches) + " |")
if errors:
    doc.append("")
    doc.append("Errors:")
    for k, v in sorted(errors.items()):
        doc.append(f"- {k}: {v}")
doc.append("")
doc.append("Peer self-checks (20 SGD steps against the hand-written Eigen step):")
doc.extend(f"- {c}" for c in checks)
doc.append("")
doc.append("OpenBLAS's start-up lines (`OPENBLAS_VERBOSE=2`), in the raw log "
           "`openblas-core.log`:")
doc.append("")
doc.append("```")
doc.append(read("openblas-core.log"))
doc.append("```")
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
cp "$result" "$results_dir/latest.md"
echo "compare.sh: wrote $result and $results_dir/latest.md"
