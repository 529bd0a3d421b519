#!/usr/bin/env python3
"""PyTorch baseline for plexus-bench: seed 002's LeNet on Fashion-MNIST with
the same recipe (SGD lr 0.1, batch 256, inputs normalized with 0.13/0.31).
Prints one JSON line: the median training-step time and one epoch's time."""
import argparse, gzip, json, statistics, sys, time

try:
    import numpy as np
    import torch
    from torch import nn
except ImportError as e:  # plexus-bench reports the baseline as missing
    print(json.dumps({"error": f"PyTorch is not installed ({e})"}))
    sys.exit(0)


def idx(path):
    with gzip.open(path, "rb") as f:
        data = f.read()
    ndim = data[3]
    dims = [int.from_bytes(data[4 + 4 * i: 8 + 4 * i], "big") for i in range(ndim)]
    return np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * ndim).reshape(dims)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--data", default="/usr/share/datasets/fashion-mnist")
    p.add_argument("--device", default="cpu")
    p.add_argument("--threads", type=int, default=0, help="0: PyTorch's default")
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--epoch", action="store_true")
    a = p.parse_args()
    if a.threads:
        torch.set_num_threads(a.threads)
    dev = torch.device(a.device)
    x = torch.from_numpy(idx(f"{a.data}/train-images-idx3-ubyte.gz").astype(np.float32) / 255.0)
    x = ((x - 0.13) / 0.31).reshape(-1, 1, 28, 28)
    y = torch.from_numpy(idx(f"{a.data}/train-labels-idx1-ubyte.gz").astype(np.int64))
    torch.manual_seed(0)
    net = nn.Sequential(nn.Conv2d(1, 6, 5), nn.ReLU(), nn.MaxPool2d(2, 2), nn.Conv2d(6, 16, 3), nn.ReLU(),
                        nn.MaxPool2d(2, 2), nn.Flatten(), nn.Linear(400, 120), nn.ReLU(), nn.Linear(120, 84),
                        nn.ReLU(), nn.Linear(84, 10)).to(dev)
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    loss_fn = nn.CrossEntropyLoss()

    def sync():
        if dev.type == "cuda":
            torch.cuda.synchronize()

    def step(xb, yb):
        opt.zero_grad(set_to_none=True)
        loss = loss_fn(net(xb), yb)
        loss.backward()
        opt.step()
        return loss

    xb, yb = x[:256].to(dev), y[:256].to(dev)
    for _ in range(3):
        step(xb, yb)
    sync()
    times = []
    for _ in range(a.steps):
        t0 = time.perf_counter()
        step(xb, yb)
        sync()
        times.append(time.perf_counter() - t0)
    out = {"step_ms": statistics.median(times) * 1e3, "threads": torch.get_num_threads(),
           "torch": torch.__version__}
    if a.epoch:
        t0 = time.perf_counter()
        perm = torch.randperm(x.shape[0])
        total = torch.zeros((), device=dev)  # summed on the device: no wait per step
        for i in range(0, x.shape[0], 256):
            idx_ = perm[i:i + 256]
            total += step(x[idx_].to(dev), y[idx_].to(dev)).detach() * len(idx_)
        float(total)
        sync()
        out["epoch_s"] = time.perf_counter() - t0
    print(json.dumps(out))


if __name__ == "__main__":
    main()
