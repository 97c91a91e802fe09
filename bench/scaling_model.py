#!/usr/bin/env python3
"""bench/scaling_model.py: the written scaling model of data-parallel training (docs/distributed.md,
"Scaling model"), evaluated for N = 1 ... 64 ranks, one rank per node.

A step of N ranks at global batch B (each rank B/N examples) is the compute of a per-rank batch
plus one allreduce of every gradient (distributed::AverageGradientsHook: one MPI_Allreduce of all
float gradients per step, not overlapped with compute):

    step(N, B)     = compute(B / N) + allreduce(N, bytes)                      microseconds
    compute(b)     = k * (a + c * b)                                           microseconds
    allreduce(N,S) = 2 (N - 1) / N * S * 8 / (G * 1e9) * 1e6  +  2 (N - 1) * L  microseconds

with S the bytes of the model's float variables, G the bandwidth in Gbit/s, L the latency per
message in microseconds (a ring allreduce: N - 1 reduce-scatter and N - 1 allgather steps, each
sending S / N bytes), a and c a least-squares line through measured single-process step times,
and k the ratio of the model's FLOPs per example to those of the measured model. allreduce is
0 for N = 1. speed-up = step(1, B) / step(N, B), efficiency = speed-up / N. Communication stops
dominating at the smallest per-rank batch b with compute(b) >= allreduce(N, S), global batch N b.

Defaults:
  compute fit: bench/README.md, "One step", hookfuse with the example's four hooks, medians of
      build/bench/step on the AMD EPYC (AVX2) machine: 56.4 us at batch 1, 555 us at 32, 1890 us
      at 128 (one thread, B examples of the Fashion-MNIST MLP 784-256-10).
  models: that MLP, 784*256 + 256 + 256*10 + 10 = 203,530 floats = 814,120 bytes, k = 1; and the
      same MLP 10x wider: the hidden layer 2560 units instead of 256, 784*2560 + 2560 + 2560*10 +
      10 = 2,035,210 floats = 8,140,840 bytes (10.0x the parameters: with one hidden layer
      between fixed input and output widths, the parameters grow with the width, not its
      square), k = FLOPs ratio (784*2560 + 2560*10) / (784*256 + 256*10) = 10 exactly (the
      step's FLOPs are 6 B (784 H + H 10)); the intercept a is scaled by k too, since at small
      batches the step is bound by passes over the weights, which grow with them.
  networks: "Ethernet", 10 Gbit/s with L = 20 us (MPI over TCP), and "InfiniBand", 100 Gbit/s
      with L = 2 us (or RoCE); assumptions, not measurements.
  global batches: 128 and 1024.

Hand computations that --check asserts:
  allreduce(2, 814120) at 10 Gbit/s, L = 20 us:
      2 * (1/2) * 814120 * 8 / 10e9 s = 6512960 / 1e10 s = 651.296 us; + 2 * 1 * 20 = 691.296 us.
  allreduce(64, 814120) at 100 Gbit/s, L = 2 us:
      2 * 63/64 = 1.96875; 814120 * 8 / 100e9 s = 65.1296 us; 1.96875 * 65.1296 = 128.2239 us;
      + 2 * 63 * 2 = 252 us: 380.2239 us.
  allreduce(1, S) = 0.
  compute fit through (1, 56.4), (32, 555), (128, 1890):
      mean b = 161/3 = 53.6667, mean t = 2501.4/3 = 833.8;
      Sxx = 1 + 1024 + 16384 - 161^2/3 = 17409 - 8640.333 = 8768.667;
      Sxy = 56.4 + 17760 + 241920 - 161 * 2501.4 / 3 = 259736.4 - 134241.8 = 125494.6;
      c = 125494.6 / 8768.667 = 14.3117 us per example; a = 833.8 - 14.3117 * 53.6667 = 65.74 us.
  communication stops dominating, N = 2, 10 Gbit/s, L = 20 us, the 814,120-byte model:
      (691.296 - 65.74) / 14.3117 = 43.71, so b = 44 per rank, global batch 88.
  step(1, 128) = 65.74 + 14.3117 * 128 = 1897.6 us.

Usage:
  python3 bench/scaling_model.py                       # the tables of docs/distributed.md
  python3 bench/scaling_model.py --check               # assert the values above, print "ok"
  python3 bench/scaling_model.py --verify-doc docs/distributed.md  # its tables are current
  python3 bench/scaling_model.py --network shm:27.08:2.21 --ranks 1 2   # a measured transport
  options: --network NAME:GBIT_PER_S:LATENCY_US (repeatable), --fit BATCH:MICROSECONDS
  (repeatable, at least two batches) or --compute A_US:C_US_PER_EXAMPLE, --model
  NAME:BYTES:FLOP_RATIO (repeatable), --batch B (repeatable), --ranks N ... (default 1 2 4 8 16
  32 64). Output is deterministic (no clock, no randomness). Bad values exit with status 2 and a
  message naming the option and what it expects.
"""
import argparse
import math
import sys

README_FIT = [(1, 56.4), (32, 555.0), (128, 1890.0)]
DEFAULT_RANKS = [1, 2, 4, 8, 16, 32, 64]
DEFAULT_BATCHES = [128, 1024]
DEFAULT_NETWORKS = [("Ethernet", 10.0, 20.0), ("InfiniBand", 100.0, 2.0)]
INPUTS, OUTPUTS, HIDDEN = 784, 10, 256


def mlp_params(hidden):
    """Float parameters of the MLP INPUTS-hidden-OUTPUTS: two kernels and two biases."""
    return INPUTS * hidden + hidden + hidden * OUTPUTS + OUTPUTS


def mlp_flop_ratio(hidden):
    """FLOPs per example of INPUTS-hidden-OUTPUTS over those of INPUTS-HIDDEN-OUTPUTS."""
    return (INPUTS * hidden + hidden * OUTPUTS) / (INPUTS * HIDDEN + HIDDEN * OUTPUTS)


def default_models():
    return [
        ("MLP 784-256-10", 4 * mlp_params(HIDDEN), mlp_flop_ratio(HIDDEN)),
        ("MLP 784-2560-10 (10x wider)", 4 * mlp_params(10 * HIDDEN), mlp_flop_ratio(10 * HIDDEN)),
    ]


def allreduce_us(ranks, nbytes, gbit_per_s, latency_us):
    """Ring allreduce of nbytes over ranks, microseconds: 2(N-1)/N * S / bandwidth + 2(N-1) * L."""
    if ranks == 1:
        return 0.0
    transfer = 2.0 * (ranks - 1) / ranks * nbytes * 8.0 / (gbit_per_s * 1e9) * 1e6
    return transfer + 2.0 * (ranks - 1) * latency_us


def fit_line(points):
    """Least-squares (a, c) of t = a + c * b through [(b, t), ...]."""
    n = len(points)
    mb = sum(b for b, _ in points) / n
    mt = sum(t for _, t in points) / n
    sxx = sum((b - mb) ** 2 for b, _ in points)
    sxy = sum((b - mb) * (t - mt) for b, t in points)
    c = sxy / sxx
    return mt - c * mb, c


def compute_us(a, c, ratio, batch):
    return ratio * (a + c * batch)


def step_us(ranks, batch, a, c, ratio, nbytes, gbit, latency):
    return compute_us(a, c, ratio, batch / ranks) + allreduce_us(ranks, nbytes, gbit, latency)


def break_even_batch(ranks, a, c, ratio, nbytes, gbit, latency):
    """Smallest per-rank batch b >= 1 with compute(b) >= allreduce(ranks, nbytes)."""
    need = allreduce_us(ranks, nbytes, gbit, latency) / ratio - a
    return max(1, math.ceil(need / c - 1e-9))


def tables(args, a, c):
    out = []
    out.append(f"compute(b) = k * ({a:.2f} us + {c:.4f} us * b)  ({args.fit_source})")
    out.append("allreduce(N, S) = 2(N-1)/N * S / bandwidth + 2(N-1) * latency")
    for name, nbytes, ratio in args.model:
        out.append("")
        out.append(f"### {name}: {nbytes // 4:,} floats, {nbytes:,} bytes, k = {ratio:g}")
        for net, gbit, latency in args.network:
            out.append("")
            out.append(f"{net}, {gbit:g} Gbit/s, latency {latency:g} us; microseconds:")
            out.append("")
            head = "| N | allreduce |"
            rule = "|---|---|"
            for b in args.batch:
                head += f" B={b}: step | speed-up | efficiency |"
                rule += "---|---|---|"
            out.append(head)
            out.append(rule)
            for n in args.ranks:
                row = f"| {n} | {allreduce_us(n, nbytes, gbit, latency):.0f} |"
                for b in args.batch:
                    t1 = step_us(1, b, a, c, ratio, nbytes, gbit, latency)
                    tn = step_us(n, b, a, c, ratio, nbytes, gbit, latency)
                    row += f" {tn:.0f} | {t1 / tn:.2f} | {t1 / tn / n:.2f} |"
                out.append(row)
        out.append("")
        out.append("Where communication stops dominating: the smallest per-rank batch b with "
                   "compute(b) >= allreduce, and the global batch N b:")
        out.append("")
        head = "| N |"
        rule = "|---|"
        for net, _, _ in args.network:
            head += f" {gbit:g} Gbit/s: allreduce us | per-rank b | global B |"
            rule += "---|---|---|"
        out.append(head)
        out.append(rule)
        for n in args.ranks:
            if n == 1:
                continue
            row = f"| {n} |"
            for _, gbit, latency in args.network:
                b = break_even_batch(n, a, c, ratio, nbytes, gbit, latency)
                row += f" {allreduce_us(n, nbytes, gbit, latency):.0f} | {b} | {n * b} |"
            out.append(row)
    return "\n".join(out)


def check():
    def near(name, got, want, tol):
        if abs(got - want) > tol:
            raise AssertionError(f"{name}: computed {got!r}, hand computation {want!r}")

    near("allreduce(2, 814120, 10 Gbit/s, 20 us)", allreduce_us(2, 814120, 10, 20), 691.296, 1e-6)
    near("allreduce(64, 814120, 100 Gbit/s, 2 us)", allreduce_us(64, 814120, 100, 2),
         380.2239, 1e-4)
    near("allreduce(1, ...)", allreduce_us(1, 814120, 10, 20), 0.0, 0.0)
    assert mlp_params(256) == 203530, mlp_params(256)
    assert mlp_params(2560) == 2035210, mlp_params(2560)
    near("FLOP ratio of the 10x wider MLP", mlp_flop_ratio(2560), 10.0, 1e-12)
    a, c = fit_line(README_FIT)
    near("fit c", c, 14.3117, 1e-4)
    near("fit a", a, 65.74, 0.01)
    near("fit through an exact line", fit_line([(1, 12.0), (3, 16.0), (9, 28.0)])[1], 2.0, 1e-12)
    assert break_even_batch(2, a, c, 1.0, 814120, 10, 20) == 44
    near("step(1, 128)", step_us(1, 128, a, c, 1.0, 814120, 10, 20), 1897.6, 0.1)
    print("ok")


def verify_doc(path):
    """0 if the '## Scaling model' section of path holds the default tables in order, else 1."""
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError as e:
        print(f"scaling_model.py: cannot read {path}: {e.strerror}", file=sys.stderr)
        return 1
    start = text.find("\n## Scaling model\n")
    if start < 0:
        print(f"scaling_model.py: {path} has no '## Scaling model' section", file=sys.stderr)
        return 1
    end = text.find("\n## ", start + 1)
    section = text[start:] if end < 0 else text[start:end]
    doc_lines = section.split("\n")
    defaults = parse_args([])
    a, c = fit_line(README_FIT)
    defaults.fit_source = ""
    want = [line for line in tables(defaults, a, c).split("\n")[2:] if line]
    at = 0
    for line in want:
        try:
            at = doc_lines.index(line, at) + 1
        except ValueError:
            print(f"scaling_model.py: {path}, section 'Scaling model': missing or out of order, "
                  f"the line {line!r} of the script's default output", file=sys.stderr)
            return 1
    print(f"ok: {len(want)} lines of the default tables in {path}")
    return 0


def parse_args(argv):
    def triple(kind, convert):
        def parse(text):
            parts = text.rsplit(":", 2)
            if len(parts) != 3 or not parts[0]:
                raise argparse.ArgumentTypeError(f"expected {kind}, got {text!r}")
            try:
                values = [convert[0](parts[1]), convert[1](parts[2])]
            except ValueError:
                raise argparse.ArgumentTypeError(f"expected {kind} with numbers, got {text!r}")
            if min(values) < 0 or values[0] <= 0:
                raise argparse.ArgumentTypeError(f"expected {kind}, positive, got {text!r}")
            return (parts[0], *values)
        return parse

    def pair(kind):
        def parse(text):
            try:
                x, y = (float(v) for v in text.split(":"))
            except ValueError:
                raise argparse.ArgumentTypeError(f"expected {kind} (two numbers), got {text!r}")
            return x, y
        return parse

    def positive_int(text):
        try:
            value = int(text)
        except ValueError:
            value = 0
        if value < 1:
            raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
        return value

    p = argparse.ArgumentParser(
        description="The data-parallel scaling model of docs/distributed.md, \"Scaling model\": "
                    "step(N, B) = compute(B / N) + ring allreduce of the model's bytes. The "
                    "formula and defaults are in this script's docstring.")
    p.add_argument("--check", action="store_true", help="assert the hand-computed values")
    p.add_argument("--verify-doc", metavar="FILE.md",
                   help="check that FILE.md's '## Scaling model' section holds the default "
                        "tables, line for line in order (docs/distributed.md); exit 1 if not")
    p.add_argument("--network", action="append", metavar="NAME:GBIT_PER_S:LATENCY_US",
                   type=triple("NAME:GBIT_PER_S:LATENCY_US", (float, float)),
                   help="a network, repeatable (default Ethernet:10:20 and InfiniBand:100:2)")
    p.add_argument("--fit", action="append", metavar="BATCH:MICROSECONDS",
                   type=pair("BATCH:MICROSECONDS"),
                   help="a measured single-process step time, repeatable, two batches at least "
                        "(default bench/README.md's One step: 1:56.4 32:555 128:1890)")
    p.add_argument("--compute", metavar="A_US:C_US_PER_EXAMPLE", type=pair("A_US:C_US_PER_EXAMPLE"),
                   help="compute(b) = A + C b directly, instead of --fit")
    p.add_argument("--model", action="append", metavar="NAME:BYTES:FLOP_RATIO",
                   type=triple("NAME:BYTES:FLOP_RATIO", (int, float)),
                   help="a model's float bytes and FLOPs per example over the fitted model's, "
                        "repeatable (default the MLP and its 10x wider variant)")
    p.add_argument("--batch", action="append", type=positive_int, metavar="B",
                   help="a global batch, repeatable (default 128 and 1024)")
    p.add_argument("--ranks", nargs="+", type=positive_int, metavar="N",
                   help="rank counts (default 1 2 4 8 16 32 64)")
    args = p.parse_args(argv)
    if args.fit and args.compute:
        p.error("--fit and --compute exclude each other: give the points or the line")
    if args.fit and len({b for b, _ in args.fit}) < 2:
        p.error("--fit needs at least two different batch sizes")
    args.network = args.network or DEFAULT_NETWORKS
    args.model = args.model or default_models()
    args.batch = args.batch or DEFAULT_BATCHES
    args.ranks = args.ranks or DEFAULT_RANKS
    return args


def main(argv):
    args = parse_args(argv)
    if args.check:
        check()
        return 0
    if args.verify_doc:
        return verify_doc(args.verify_doc)
    if args.compute:
        a, c = args.compute
        args.fit_source = "--compute"
    else:
        points = args.fit or README_FIT
        a, c = fit_line(points)
        source = ", ".join(f"{t:g} us at {b:g}" for b, t in points)
        args.fit_source = ("least squares through " + source +
                           ("" if args.fit else ": bench/README.md, One step, AMD EPYC (AVX2)"))
    if c <= 0 or a + c <= 0:
        print(f"scaling_model.py: the compute fit must be positive from batch 1 on, got a = {a} us"
              f" and c = {c} us per example", file=sys.stderr)
        return 2
    print(tables(args, a, c))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
