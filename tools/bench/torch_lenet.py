#!/usr/bin/env python3
"""PyTorch baseline for plexus-bench: seed 002's LeNet (or, with --net
resnet18, d2l's ResNet-18 for 28x28 images, as nn::resnet18 builds it) on
Fashion-MNIST with the same recipe (SGD lr 0.1, batch 256 or --batch,
inputs normalized with 0.13/0.31). Prints one JSON line: the median
training-step time and one epoch's time."""
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


class Residual(nn.Module):
    """d2l's residual block (nn::Residual)."""

    def __init__(self, cin, channels, use_1x1conv=False, strides=1):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, channels, 3, padding=1, stride=strides)
        self.conv2 = nn.Conv2d(channels, channels, 3, padding=1)
        self.conv3 = nn.Conv2d(cin, channels, 1, stride=strides) if use_1x1conv else None
        self.bn1, self.bn2 = nn.BatchNorm2d(channels), nn.BatchNorm2d(channels)

    def forward(self, x):
        y = torch.relu(self.bn1(self.conv1(x)))
        y = self.bn2(self.conv2(y))
        return torch.relu(y + (self.conv3(x) if self.conv3 is not None else x))


def resnet18(num_classes=10):
    """nn::resnet18: a 3x3 convolution, no max pooling, four stages of two blocks."""
    def stage(cin, channels, first):
        return [Residual(cin, channels) if first else Residual(cin, channels, True, 2), Residual(channels, channels)]
    return nn.Sequential(nn.Conv2d(1, 64, 3, padding=1), nn.BatchNorm2d(64), nn.ReLU(),
                         *stage(64, 64, True), *stage(64, 128, False), *stage(128, 256, False), *stage(256, 512, False),
                         nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(512, num_classes))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--data", default="/usr/share/datasets/fashion-mnist")
    p.add_argument("--device", default="cpu")
    p.add_argument("--threads", type=int, default=0, help="0: PyTorch's default")
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--epoch", action="store_true")
    p.add_argument("--net", default="lenet", choices=["lenet", "resnet18"])
    p.add_argument("--batch", type=int, default=256)
    a = p.parse_args()
    if a.threads:
        torch.set_num_threads(a.threads)
    dev = torch.device(a.device)
    x = torch.from_numpy(idx(f"{a.data}/train-images-idx3-ubyte.gz").astype(np.float32) / 255.0)
    x = ((x - 0.13) / 0.31).reshape(-1, 1, 28, 28)
    y = torch.from_numpy(idx(f"{a.data}/train-labels-idx1-ubyte.gz").astype(np.int64))
    torch.manual_seed(0)
    net = (resnet18() if a.net == "resnet18" else nn.Sequential(
        nn.Conv2d(1, 6, 5), nn.ReLU(), nn.MaxPool2d(2, 2), nn.Conv2d(6, 16, 3), nn.ReLU(), nn.MaxPool2d(2, 2),
        nn.Flatten(), nn.Linear(400, 120), nn.ReLU(), nn.Linear(120, 84), nn.ReLU(), nn.Linear(84, 10))).to(dev)
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

    xb, yb = x[:a.batch].to(dev), y[:a.batch].to(dev)
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
        for i in range(0, x.shape[0], a.batch):
            idx_ = perm[i:i + a.batch]
            total += step(x[idx_].to(dev), y[idx_].to(dev)).detach() * len(idx_)
        float(total)
        sync()
        out["epoch_s"] = time.perf_counter() - t0
    print(json.dumps(out))


if __name__ == "__main__":
    main()
