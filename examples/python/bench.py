"""Python-side figures of issue 39, each beside its baseline measured in the same run:
  - per-op overhead of a 1-element add from Python, beside PyTorch's (target: lower than PyTorch's);
  - a DLPack round trip NumPy -> Plexus -> NumPy of 1 element (target < 2 us);
  - a LeNet epoch driven from Python (examples/python/lenet.py) beside plexus-train's (target <= 1.1x),
    the mean of 3 epochs each;
  - x[:, ::2] = v beside NumPy, and d2l's boxes[B[0], :] beside PyTorch (indexing's cost).

    PYTHONPATH=build/python /usr/bin/python3 examples/python/bench.py [--plexus-train build/bin/plexus-train]

plexus-bench runs it (its group `python`) with --rows, which prints each figure as one tab-separated line
(ROW, figure, value, unit, baseline, baseline value, target) for plexus-bench's table and JSON.
"""
import argparse
import os
import re
import subprocess
import sys
import time

import plexus


def per_call(fn, n, repeats=5):
    """The best of `repeats` runs of `n` calls, in ns per call."""
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter_ns()
        fn(n)
        best = min(best, (time.perf_counter_ns() - t0) / n)
    return best


ROWS = False  # --rows: tab-separated lines for plexus-bench


def row(what, value, unit, baseline_name, baseline, target):
    if ROWS:
        print("\t".join(["ROW", what, "%.6g" % value, unit, baseline_name, "%.6g" % baseline, target]), flush=True)
        return
    line = "%-52s %10.1f %-6s  %-28s %10.1f %-6s ratio %.2fx  %s" % (
        what, value, unit, baseline_name, baseline, unit, value / baseline, target)
    print(line, flush=True)


def add_overhead(n):
    a, b = plexus.ones(1), plexus.ones(1)
    c = None

    def run(k):
        nonlocal c
        for _ in range(k):
            c = a + b
        c.wait_to_read()
    run(1000)
    return per_call(run, n)


def library_add_overhead(lib, n):
    """The same loop on a 1-element float32 array of `lib` (torch or numpy)."""
    a, b = lib.ones(1, dtype=lib.float32), lib.ones(1, dtype=lib.float32)

    def run(k):
        for _ in range(k):
            c = a + b  # noqa: F841
    run(1000)
    return per_call(run, n)


def round_trip(n, exchange):
    """ns per call of exchange(x) on a 1-element float32 NumPy array, the best of a few runs."""
    import numpy
    x = numpy.ones(1, numpy.float32)

    def run(k):
        for _ in range(k):
            exchange(x)
    run(100)
    return per_call(run, n)


def dlpack_round_trip(n):
    import numpy
    return round_trip(n, lambda x: numpy.from_dlpack(plexus.from_dlpack(x)))


def dlpack_round_trip_copied(n):
    """The same round trip through the copying path (copy=True both ways), as before plugin ABI 1.5."""
    import numpy

    class Copied:
        def __init__(self, t):
            self.t = t

        def __dlpack__(self, stream=None):
            return self.t.__dlpack__(copy=True)

        def __dlpack_device__(self):
            return self.t.__dlpack_device__()

    return round_trip(n, lambda x: numpy.from_dlpack(Copied(plexus.from_dlpack(x, copy=True))))


def torch_round_trip(n):
    """NumPy -> PyTorch -> NumPy through DLPack: the same exchange by PyTorch."""
    import numpy
    import torch
    return round_trip(n, lambda x: numpy.from_dlpack(torch.from_dlpack(x)))


def numpy_copy_round_trip(n):
    import numpy
    return round_trip(n, lambda x: numpy.array(numpy.array(x)))


def setitem_ms(lib, make):
    """ms for x[:, ::2] = v on a 1000x10000 float32 x of `lib` (its values then read), best of 5."""
    x, v = make(lib.zeros((1000, 10000), dtype=lib.float32)), make(lib.ones((1000, 5000), dtype=lib.float32))

    def run(k):
        for _ in range(k):
            x[:, ::2] = v
        x.sum().item()
    run(1)
    return per_call(run, 1) / 1e6


def row_index_us(lib, make):
    """us for boxes[B[0], :] (d2l's nms), with B a tensor of indices of `lib`, best of 5 runs of 1000."""
    boxes, order = make(lib.ones((2000, 4), dtype=lib.float32)), make(lib.arange(3))

    def run(k):
        for _ in range(k):
            boxes[order[0], :].sum()
    run(100)
    return per_call(run, 1000) / 1000


EPOCHS = 3


def epoch_seconds(command):
    """The mean of the epochs' seconds that `command` prints (seed 002's lines, 0.1 s apart): over
    EPOCHS epochs, so that a figure of about a second is not one rounding step from the next."""
    out = subprocess.run(command + ["--epochs", str(EPOCHS)], capture_output=True, text=True, check=True).stdout
    times = [float(t) for t in re.findall(r"Epoch \d+: loss [0-9.]+,.*?in ([0-9.]+) sec", out)]
    if len(times) != EPOCHS:
        raise RuntimeError("not %d epoch lines in the output of %s:\n%s" % (EPOCHS, " ".join(command), out))
    return sum(times) / EPOCHS


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--plexus-train", default=None, help="plexus-train for the LeNet baseline")
    p.add_argument("--skip-training", action="store_true")
    p.add_argument("--rows", action="store_true", help="tab-separated figures, for plexus-bench")
    args = p.parse_args()
    global ROWS
    ROWS = args.rows
    if not ROWS:
        print("plexus %s, Python %s, on %s" % (plexus.__version__, sys.version.split()[0], plexus.try_gpu()))
    try:
        import torch as baseline
        baseline_name = "PyTorch eager, same loop"
    except ImportError:
        import numpy as baseline
        baseline_name = "NumPy, same loop (no PyTorch)"
    ns = add_overhead(100000)
    row("1-element add from Python", ns, "ns/op", baseline_name, library_add_overhead(baseline, 100000),
        "target < the baseline")
    numpy_us = numpy_copy_round_trip(20000) / 1000
    row("DLPack NumPy->Plexus->NumPy, 1 elt", dlpack_round_trip(20000) / 1000, "us", "NumPy copy -> copy", numpy_us,
        "target < 2 us")
    if baseline.__name__ == "torch":
        row("DLPack NumPy->Plexus->NumPy, 1 elt", dlpack_round_trip(20000) / 1000, "us",
            "NumPy->PyTorch->NumPy", torch_round_trip(20000) / 1000, "PyTorch's own exchange")
    row("the same, copy=True both ways", dlpack_round_trip_copied(20000) / 1000, "us", "NumPy copy -> copy", numpy_us,
        "before plugin ABI 1.5")
    import numpy
    plexus_array = lambda a: plexus.array(a.numpy() if hasattr(a, "numpy") else a)  # noqa: E731
    row("x[:, ::2] = v, 1000x10000 float32", setitem_ms(numpy, plexus_array), "ms", "NumPy, same assignment",
        setitem_ms(numpy, lambda a: a), "one strided copy on the device")
    if baseline.__name__ == "torch":
        row("boxes[B[0], :] with B a tensor", row_index_us(baseline, plexus_array), "us", "PyTorch, same read",
            row_index_us(baseline, lambda a: a), "d2l's nms")
    if args.skip_training:
        return
    here = os.path.dirname(os.path.abspath(__file__))
    train = args.plexus_train or os.path.join(here, "..", "..", "build", "bin", "plexus-train")
    device = "gpu:0" if plexus.num_gpus() else "cpu:0"
    native = epoch_seconds([train, "--device", device, "--out", "/tmp/plexus-bench-train"])
    python = epoch_seconds([sys.executable, os.path.join(here, "lenet.py")])
    row("LeNet epoch driven from Python", python, "s", "plexus-train", native, "target <= 1.1x")


if __name__ == "__main__":
    main()
