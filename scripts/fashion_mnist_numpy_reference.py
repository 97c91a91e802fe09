#!/usr/bin/env python3
"""A plain-numpy twin of examples/fashion_mnist, written independently of hookfuse.

The same model and training as `fashion_mnist --optimizer adam|sgd`: 784 -> 256 ReLU -> 10,
glorot_uniform kernels (limit sqrt(6 / (fan_in + fan_out))), zero biases, pixels / 255,
sparse softmax cross-entropy averaged over the batch, batch 32, a fresh permutation every epoch,
float32 throughout, and TensorFlow 1.x's AdamOptimizer update (tf.compat.v1.train.AdamOptimizer,
the ApplyAdam kernel):

    lr_t = lr * sqrt(1 - beta2^t) / (1 - beta1^t)
    m = beta1 m + (1 - beta1) g;  v = beta2 v + (1 - beta2) g^2
    w -= lr_t m / (sqrt(v) + epsilon)

It reports the test loss and accuracy on all 10000 test images after every epoch and at the end
(the example's last lines: global_step, test_loss, test_accuracy).

Two sources of randomness (--rng):
  hookfuse  the example's own draws, re-implemented here: std::mt19937_64 seeded with --seed
            (hidden kernel) and --seed + 1 (output kernel), uniform = top 53 bits * 2^-53, and the
            batch order's Fisher-Yates shuffle (include/hookfuse/data/batch_order.hpp). The run
            then starts from the same weights and sees the same batches as
            `fashion_mnist --seed N`, so its accuracy should agree with the example's to within
            float32 rounding.
  numpy     numpy's default_rng(--seed) for the weights and the permutations: an independent
            sample of what this model reaches.

Usage:
  /usr/bin/python3 scripts/fashion_mnist_numpy_reference.py --seed 1 --rng numpy
Needs numpy (Debian: python3-numpy) and the Fashion-MNIST IDX files (Debian:
dataset-fashion-mnist, /usr/share/datasets/fashion-mnist). About 30 s per epoch on one core.
"""
import argparse
import gzip
import os
import struct
import sys

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")
try:
    import numpy as np  # noqa: E402
except ImportError:
    sys.exit("fashion_mnist_numpy_reference: needs numpy (Debian: apt-get install python3-numpy; "
             "then run it with /usr/bin/python3)")

MASK64 = (1 << 64) - 1


class MT19937_64:
    """std::mt19937_64 (C++ [rand.predef]): 64-bit Mersenne Twister, outputs as Python ints."""

    N, M = 312, 156

    def __init__(self, seed):
        mt = [seed & MASK64]
        for i in range(1, self.N):
            prev = mt[-1]
            mt.append((6364136223846793005 * (prev ^ (prev >> 62)) + i) & MASK64)
        self.mt = mt
        self.index = self.N

    def _twist(self):
        mt, n, m = self.mt, self.N, self.M
        upper, lower = 0xFFFFFFFF80000000, 0x7FFFFFFF
        for i in range(n):
            x = (mt[i] & upper) | (mt[(i + 1) % n] & lower)
            xa = x >> 1
            if x & 1:
                xa ^= 0xB5026F5AA96619E9
            mt[i] = mt[(i + m) % n] ^ xa
        self.index = 0

    def __call__(self):
        if self.index >= self.N:
            self._twist()
        x = self.mt[self.index]
        self.index += 1
        x ^= (x >> 29) & 0x5555555555555555
        x ^= (x << 17) & 0x71D67FFFEDA60000
        x ^= (x << 37) & 0xFFF7EEE000000000
        x ^= x >> 43
        return x & MASK64


def mt_glorot_uniform(seed, fan_in, fan_out):
    """hookfuse's glorot_uniform: row by row, (2 u - 1) limit with u = (x >> 11) 2^-53."""
    rng = MT19937_64(seed)
    limit = np.sqrt(6.0 / (fan_in + fan_out))
    u = np.array([(rng() >> 11) for _ in range(fan_in * fan_out)], dtype=np.float64) * 2.0**-53
    return ((2.0 * u - 1.0) * limit).reshape(fan_in, fan_out).astype(np.float32)


def mt_permutations(seed, n, epochs):
    """hookfuse's batch order: one generator seeded once; every epoch shuffles 0..n-1 afresh
    (Durstenfeld from the back, index j uniform in [0, i) by rejection of the low values)."""
    rng = MT19937_64(seed)
    for _ in range(epochs):
        order = list(range(n))
        for i in range(n, 1, -1):
            threshold = ((1 << 64) - i) % i
            while True:
                x = rng()
                if x >= threshold:
                    break
            j = x % i
            order[i - 1], order[j] = order[j], order[i - 1]
        yield np.array(order, dtype=np.int64)


def read_idx(path):
    with (gzip.open(path, "rb") if path.endswith(".gz") else open(path, "rb")) as f:
        data = f.read()
    magic, = struct.unpack(">I", data[:4])
    ndim = magic & 0xFF
    dims = struct.unpack(">" + "I" * ndim, data[4:4 + 4 * ndim])
    return np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * ndim).reshape(dims)


def load(data_dir, prefix):
    def find(name):
        for candidate in (name, name + ".gz"):
            p = os.path.join(data_dir, candidate)
            if os.path.exists(p):
                return p
        sys.exit(f"fashion_mnist_numpy_reference: no {name}[.gz] in {data_dir}")
    images = read_idx(find(f"{prefix}-images-idx3-ubyte"))
    labels = read_idx(find(f"{prefix}-labels-idx1-ubyte"))
    x = images.reshape(len(images), -1).astype(np.float32) * np.float32(1.0 / 255.0)
    return x, labels.astype(np.int64)


def forward(params, x):
    w1, b1, w2, b2 = params
    h = np.maximum(x @ w1 + b1, 0)
    return h, h @ w2 + b2


def evaluate(params, x, y):
    """(mean cross-entropy, accuracy) over all of x, in batches of 1000 as the example."""
    hits, loss = 0, 0.0
    for i in range(0, len(x), 1000):
        _, z = forward(params, x[i:i + 1000])
        yb = y[i:i + 1000]
        hits += int((z.argmax(axis=1) == yb).sum())
        z = z.astype(np.float64) - z.max(axis=1, keepdims=True)
        loss += float((np.log(np.exp(z).sum(axis=1)) - z[np.arange(len(yb)), yb]).sum())
    return loss / len(x), hits / len(x)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--rng", choices=("hookfuse", "numpy"), default="hookfuse")
    ap.add_argument("--optimizer", choices=("adam", "sgd"), default="adam")
    ap.add_argument("--learning_rate", type=float, default=None,
                    help="default 0.001 (adam), 0.1 (sgd), as the example")
    ap.add_argument("--epochs", type=int, default=5)
    ap.add_argument("--batch_size", type=int, default=32)
    ap.add_argument("--max_steps", type=int, default=None,
                    help="stop after this many steps (to compare with the example's --max_steps)")
    ap.add_argument("--data_dir", default="/usr/share/datasets/fashion-mnist")
    ap.add_argument("--dtype", choices=("float32", "float64"), default="float32",
                    help="float64 shows how far float32 rounding alone moves a run")
    args = ap.parse_args()
    f = np.float32 if args.dtype == "float32" else np.float64
    lr = args.learning_rate or (0.001 if args.optimizer == "adam" else 0.1)

    x_train, y_train = load(args.data_dir, "train")
    x_test, y_test = load(args.data_dir, "t10k")
    n = len(x_train)

    if args.rng == "hookfuse":
        w1 = mt_glorot_uniform(args.seed, 784, 256)
        w2 = mt_glorot_uniform(args.seed + 1, 256, 10)
        orders = mt_permutations(args.seed, n, args.epochs)
    else:
        rng = np.random.default_rng(args.seed)
        w1 = rng.uniform(-1, 1, (784, 256)) * np.sqrt(6.0 / (784 + 256))
        w2 = rng.uniform(-1, 1, (256, 10)) * np.sqrt(6.0 / (256 + 10))
        w1, w2 = w1.astype(np.float32), w2.astype(np.float32)
        orders = (rng.permutation(n) for _ in range(args.epochs))
    params = [w1.astype(f), np.zeros((1, 256), f), w2.astype(f), np.zeros((1, 10), f)]
    x_train, x_test = x_train.astype(f), x_test.astype(f)
    beta1, beta2, eps = f(0.9), f(0.999), f(1e-8)
    m = [np.zeros_like(p) for p in params]
    v = [np.zeros_like(p) for p in params]
    beta1_power, beta2_power = beta1, beta2  # TF1's non-slot variables, beta^t at step t

    global_step = 0
    for epoch, order in enumerate(orders, start=1):
        loss_sum, steps = 0.0, 0
        for start in range(0, n, args.batch_size):
            if args.max_steps is not None and global_step >= args.max_steps:
                break
            global_step += 1
            idx = order[start:start + args.batch_size]
            x, y = x_train[idx], y_train[idx]
            rows = len(idx)
            h, z = forward(params, x)
            z = z - z.max(axis=1, keepdims=True)
            e = np.exp(z)
            s = e.sum(axis=1, keepdims=True)
            loss_sum += float(np.mean(np.log(s[:, 0]) - z[np.arange(rows), y]))
            steps += 1
            dz = e / s
            dz[np.arange(rows), y] -= f(1)
            dz /= f(rows)  # the mean over the batch (SUM_BY_NONZERO_WEIGHTS)
            dh = (dz @ params[2].T) * (h > 0)
            grads = [x.T @ dh, dh.sum(axis=0, keepdims=True), h.T @ dz,
                     dz.sum(axis=0, keepdims=True)]
            if args.optimizer == "adam":
                lr_t = f(lr) * np.sqrt(f(1) - beta2_power) / (f(1) - beta1_power)
                for p, g, mk, vk in zip(params, grads, m, v):
                    mk += (g - mk) * (f(1) - beta1)
                    vk += (g * g - vk) * (f(1) - beta2)
                    p -= lr_t * mk / (np.sqrt(vk) + eps)
                beta1_power, beta2_power = beta1_power * beta1, beta2_power * beta2
            else:
                for p, g in zip(params, grads):
                    p -= f(lr) * g
        if steps == 0:
            break
        test_loss, test_accuracy = evaluate(params, x_test, y_test)
        print(f"epoch {epoch}: global_step {global_step} train_loss {loss_sum / steps:.4f} "
              f"test_loss {test_loss:.4f} test_accuracy {test_accuracy:.4f}", flush=True)
    test_loss, test_accuracy = evaluate(params, x_test, y_test)
    print(f"global_step: {global_step}")
    print(f"test_loss: {test_loss:.6f}")
    print(f"test_accuracy: {test_accuracy:.4f}")


if __name__ == "__main__":
    main()
