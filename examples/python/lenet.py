"""Seed 002's LeNet on Fashion-MNIST, driven from Python: the seed's training loop (split_and_load
over the devices, autograd.record, Trainer.step) with its per-epoch line, plus the test accuracy.

    PYTHONPATH=build/python /usr/bin/python3 examples/python/lenet.py --epochs 1
"""
import argparse
import time

import plexus
from plexus import autograd, nn


def lenet():
    net = nn.Sequential()
    net.add(nn.Conv2D(channels=6, kernel_size=5, activation="relu"), nn.MaxPool2D(pool_size=2, strides=2),
            nn.Conv2D(channels=16, kernel_size=3, activation="relu"), nn.MaxPool2D(pool_size=2, strides=2),
            nn.Flatten(), nn.Dense(120, activation="relu"), nn.Dense(84, activation="relu"), nn.Dense(10))
    return net


def accuracy(net, loader):
    correct, total = 0.0, 0
    for data, label in loader:
        pred = net(data).argmax(axis=1).astype("int32")
        correct += float((pred == label).astype("float32").sum())
        total += label.shape[0]
    return correct / max(total, 1)


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--epochs", type=int, default=10)
    p.add_argument("--batch-size", type=int, default=256)
    p.add_argument("--lr", type=float, default=0.1)
    p.add_argument("--max-batches", type=int, default=0, help="stop each epoch after this many batches (0: all)")
    args = p.parse_args()

    devices = plexus.try_all_gpus()
    net = lenet()
    net.initialize(ctx=devices)
    softmax_cross_entropy = plexus.loss.SoftmaxCrossEntropyLoss()
    trainer = nn.Trainer(net.collect_params(), "sgd", {"learning_rate": args.lr})
    train_data = plexus.data.DataLoader(plexus.data.fashion_mnist(train=True), args.batch_size, shuffle=True,
                                        device=devices[0])
    valid_data = plexus.data.DataLoader(plexus.data.fashion_mnist(train=False), args.batch_size,
                                        device=devices[0])
    for epoch in range(args.epochs):
        total, batches = None, 0
        tic = time.time()
        for data, label in train_data:
            data_list = nn.split_and_load(data, devices, even_split=False)  # any number of devices
            label_list = nn.split_and_load(label, devices, even_split=False)
            with autograd.record():
                losses = [softmax_cross_entropy(net(X), y) for X, y in zip(data_list, label_list)]
            for l in losses:
                l.backward()
            trainer.step(data.shape[0])
            # The seed adds float(l.sum()) here, which waits for every batch; summed on the device
            # instead (as plexus-train does), the loop queues the next batch while this one runs.
            for l in losses:
                s = l.sum().astype("float64").as_in_context(devices[0])
                total = s if total is None else total + s
            batches += 1
            if args.max_batches and batches >= args.max_batches:
                break
        train_loss = float(total)
        seconds = time.time() - tic
        test_acc = accuracy(net, valid_data)
        print("Epoch %d: loss %.3f, in %.1f sec, test acc %.3f" % (
            epoch, train_loss / batches / args.batch_size, seconds, test_acc), flush=True)


if __name__ == "__main__":
    main()
