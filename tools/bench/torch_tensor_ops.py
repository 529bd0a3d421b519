#!/usr/bin/env python3
"""PyTorch baseline for plexus-bench's tensor-ops group: the same ops on the
same sizes (sums over each axis and over the first of the same values as
64 columns, a max over the first, an argmax over the
second, exp, log, tanh, sigmoid, a softmax over rows, a square, a transpose
made contiguous, where on a random mask, a comparison, uniform and normal
random tensors), timed as medians. Prints one JSON line of ms."""
import argparse, json, statistics, sys, time

try:
    import torch
except ImportError as e:  # plexus-bench reports the baseline as missing
    print(json.dumps({"error": f"PyTorch is not installed ({e})"}))
    sys.exit(0)


def median_ms(f, reps):
    f()
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        f()
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1e3


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--n", type=int, default=4096, help="the matrices are n x n float32")
    p.add_argument("--reps", type=int, default=11)
    p.add_argument("--threads", type=int, default=0, help="0: PyTorch's default (one per physical core, it says)")
    a = p.parse_args()
    if a.threads:
        torch.set_num_threads(a.threads)
    n = a.n
    torch.manual_seed(0)
    x, y = torch.rand(n, n), torch.rand(n, n)
    mask = x > 0.5
    out = {
        "sum0_ms": median_ms(lambda: x.sum(0), a.reps),
        "sum0_narrow_ms": median_ms(lambda: x.reshape(n * n // 64, 64).sum(0), a.reps),
        "sum1_ms": median_ms(lambda: x.sum(1), a.reps),
        "max0_ms": median_ms(lambda: x.max(0).values, a.reps),
        "argmax1_ms": median_ms(lambda: x.argmax(1), a.reps),
        "exp_ms": median_ms(lambda: x.exp(), a.reps),
        "log_ms": median_ms(lambda: x.log(), a.reps),
        "tanh_ms": median_ms(lambda: x.tanh(), a.reps),
        "sigmoid_ms": median_ms(lambda: x.sigmoid(), a.reps),
        "softmax_ms": median_ms(lambda: torch.softmax(x, 1), a.reps),
        "square_ms": median_ms(lambda: x ** 2, a.reps),
        "transpose_ms": median_ms(lambda: x.t().contiguous(), a.reps),
        "where_ms": median_ms(lambda: torch.where(mask, x, y), a.reps),
        "greater_ms": median_ms(lambda: x > y, a.reps),
        "uniform_ms": median_ms(lambda: torch.rand(n * n), a.reps),
        "normal_ms": median_ms(lambda: torch.randn(n * n), a.reps),
        "threads": torch.get_num_threads(),
        "torch": torch.__version__,
    }
    print(json.dumps(out))


if __name__ == "__main__":
    main()
