#!/usr/bin/env python3
"""tests/numpy_suppress/make_cases.py: the text numpy prints for values under suppress=True.

TensorFlow's LoggingTensorHook logs "%s = %s" % (tag, value) inside
np.set_printoptions(suppress=True) (basic_session_run_hooks.py, _log_tensors). This script asks
numpy itself for that text, for values chosen to exercise the suppress rules: tiny and huge
magnitudes, the 1e8 switch to scientific notation, rounding at 8 fraction digits, nan/inf,
zeros and -0.0, 75-column wrapping, summarising above 1000 elements, and scalars and integers
(which suppress does not change).

Writes JSON to stdout in the schema of the numpy_str fixture (HOOKFUSE_FIXTURES_DIR/numpy_str):
float32/float64 values as the hex digits of their IEEE bits, integers as JSON integers, flattened
row-major with their numpy shape ([] for a numpy scalar), and "str", numpy's text.

    /usr/bin/python3 tests/numpy_suppress/make_cases.py > tests/numpy_suppress/cases.json

tests/test_numpy_suppress.cpp reads the committed cases.json; ctest's numpy_suppress.cases_current
reruns this script and checks the committed file is still what numpy prints (skipped without
numpy).
"""
import decimal
import json
import struct
import sys

import numpy as np


def bits(dtype, x):
    if dtype == "float32":
        return "%08x" % struct.unpack("<I", struct.pack("<f", float(x)))[0]
    return "%016x" % struct.unpack("<Q", struct.pack("<d", float(x)))[0]


def case(name, value):
    """value: a numpy scalar or ndarray, as session.run returns it."""
    arr = np.asarray(value)
    dtype = str(arr.dtype)
    flat = arr.reshape(-1)
    if dtype in ("float32", "float64"):
        values = [bits(dtype, x) for x in flat]
    else:
        values = [int(x) for x in flat]
    with np.printoptions(suppress=True):
        text = "%s" % (value,)
    return {"name": name, "dtype": dtype, "shape": list(arr.shape), "values": values, "str": text}


def logspace(start, stop, num):
    """np.logspace(start, stop, num), computed without numpy's vectorised power.

    numpy picks its power/exp loops by the host's CPU (AVX-512 or not), and their last bits
    differ, so np.logspace made this file depend on the machine that ran the script. Decimal
    arithmetic (libmpdec, in software) at 40 digits, then one correctly rounded conversion to
    float64, gives the same values on every machine.
    """
    ctx = decimal.Context(prec=40)
    out = []
    for i in range(num):
        exponent = ctx.add(decimal.Decimal(start),
                           ctx.divide(decimal.Decimal((stop - start) * i), decimal.Decimal(num - 1)))
        out.append(float(ctx.power(decimal.Decimal(10), exponent)))
    return np.array(out, dtype=np.float64)


def main():
    f32, f64 = np.float32, np.float64
    rng = np.random.default_rng(20261201)
    cases = [
        # Scalars: numpy scalars' str() ignores suppress.
        case("float32 scalar 1e-5", f32(1e-5)),
        case("float64 scalar 1e-5", f64(1e-5)),
        case("float32 scalar 1e17", f32(1e17)),
        case("float64 scalar 1.5e-300", f64(1.5e-300)),
        case("float32 scalar ln 2", f32(float.fromhex("0x1.62e42fefa39efp-1"))),  # ln 2 as float64
        # The TensorFlow example: positional, not scientific.
        case("float32 [1e-5, 1]", np.array([1e-5, 1.0], dtype=f32)),
        case("float64 [0.1, 0.25, 1e-5]", np.array([0.1, 0.25, 1e-5], dtype=f64)),
        case("float32 [1] 1e-5", np.array([1e-5], dtype=f32)),
        case("float32 column [1e-5, 1]", np.array([[1e-5], [1.0]], dtype=f32)),
        case("float32 2x2 mixed", np.array([[1e-5, 2.5], [1000.0, -3.0]], dtype=f32)),
        # Below 8 fraction digits: rounded to 0 (with its sign).
        case("float64 [1e-9, 1]", np.array([1e-9, 1.0])),
        case("float64 [-1e-9, 1]", np.array([-1e-9, 1.0])),
        case("float64 all tiny", np.array([1e-9, 2e-12, -3e-20])),
        case("float64 1e-300 and 1", np.array([1e-300, 1.0])),
        case("float32 1e-38 and 1", np.array([1e-38, 1.0], dtype=f32)),
        case("float32 denormal and 1", np.array([1e-45, 1.0], dtype=f32)),
        case("float64 5e-9 rounds up", np.array([5e-9, 1.0])),
        case("float64 1.5e-8 and 2.5e-8", np.array([1.5e-8, 2.5e-8, 1.0])),
        case("float32 digits cut at 8", np.array([0.012345679, 1e-5], dtype=f32)),
        case("float64 thirds", np.array([1.0 / 3.0, 2.0 / 3.0, 1e-6])),
        case("float64 0.999999999 rounds to 1", np.array([0.999999999, 1e-5])),
        # 0.123456135 is stored just below ...135: numpy rounds the exact value (down), not its
        # shortest digits (half-even would give ...14).
        case("float64 rounds the exact value", np.array([0.999999995, 0.123456135])),
        # The 1e8 switch.
        case("float64 [1e8, 1]", np.array([1e8, 1.0])),
        case("float32 [1.5e8, 1e-5]", np.array([1.5e8, 1e-5], dtype=f32)),
        case("float64 just below 1e8", np.array([99999999.0, 1e-3])),
        case("float32 just below 1e8", np.array([np.nextafter(f32(1e8), f32(0)), 0.5], dtype=f32)),
        # Above 2^24 a float32's shortest digits can end in zeros (99999990); an array prints
        # its exact integer part (numpy's min_digits = 0).
        case("float32 above 2^24", np.array([33554436.0, 50331652.0, 0.001], dtype=f32)),
        case("float64 [1e7, 1e-7]", np.array([1e7, 1e-7])),
        case("float64 12345678.9 and 1e-8", np.array([12345678.9, 1e-8])),
        case("float32 large ratio", np.array([65504.0, 1e-4, -7.25], dtype=f32)),
        case("float64 huge and tiny", np.array([-3.5e12, 2e-7, 1.0])),
        # Negative values.
        case("float32 negatives", np.array([-1e-5, -0.5, 2.0], dtype=f32)),
        case("float64 -0.0 and 1e-5", np.array([-0.0, 1e-5])),
        # Zeros.
        case("float32 zeros", np.zeros(3, dtype=f32)),
        case("float64 2x2 zeros and tiny", np.array([[0.0, 1e-5], [0.0, 0.0]])),
        # Non-finite.
        case("float32 nan 1e-5 inf", np.array([np.nan, 1e-5, np.inf], dtype=f32)),
        case("float64 -inf 1e-6", np.array([-np.inf, 1e-6])),
        case("float64 nan and 1e-9", np.array([np.nan, 1e-9])),
        case("float64 nan -inf 1e-9", np.array([np.nan, -np.inf, 1e-9])),
        case("float32 nan inf 1e9", np.array([np.nan, np.inf, 1e9], dtype=f32)),
        case("float32 all nan", np.array([np.nan, np.nan], dtype=f32)),
        # Wrapping at 75 columns.
        case("float64 30 multiples of 1e-5", np.arange(30) * 1e-5),
        case("float32 gradients 24", (rng.standard_normal(24) * 1e-3).astype(f32)),
        case("float64 3x12 mixed", (rng.standard_normal((3, 12)) * logspace(-6, 3, 12))),
        case("float64 2x4 wide", np.array([[1e7, 1e-7, 3.0, -4.5], [0.0, 1e-3, 2.0, 6e6]])),
        # Summarising above 1000 elements.
        case("float32 1001 small", (np.arange(1001) * 1e-6).astype(f32)),
        case("float64 33x31 tiny and large", np.outer(logspace(-7, 2, 33), np.ones(31))),
        case("float32 1001 with 1e8", np.concatenate([np.full(1000, 1e-5), [1e8]]).astype(f32)),
        # Integers: suppress does not change them.
        case("int32 [1 22 333]", np.array([1, 22, 333], dtype=np.int32)),
        case("int64 2x2", np.array([[1, -20], [300000000000, 4]], dtype=np.int64)),
        case("int64 scalar", np.int64(1234567)),
    ]
    doc = {
        "numpy": np.__version__,
        "how": "'%s' % value under np.printoptions(suppress=True), value = what session.run "
               "returns; generated by tests/numpy_suppress/make_cases.py",
        "cases": cases,
    }
    # One case per line: a small file that diffs well.
    head = json.dumps({k: v for k, v in doc.items() if k != "cases"})[:-1]
    sys.stdout.write(head + ', "cases": [\n')
    sys.stdout.write(",\n".join(json.dumps(c) for c in cases))
    sys.stdout.write("\n]}\n")


if __name__ == "__main__":
    main()
