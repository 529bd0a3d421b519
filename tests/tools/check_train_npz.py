#!/usr/bin/python3
"""plexus-train --data FILE.npz trains exactly as on the IDX folder it was made from: the folder's images and
labels are written to an .npz (x_train (N, 28, 28) uint8, y_train int64, ...), both runs use one seed, and
their epoch lines must agree digit for digit; float images train alike in float32, float64 and float16.
Then .npz files with int32 images or bad labels are refused with the reason.
usage: check_train_npz.py PLEXUS_TRAIN IDX_FOLDER WORK_FOLDER"""
import gzip
import os
import re
import subprocess
import sys

import numpy as np

train, folder, work = sys.argv[1:4]
os.makedirs(work, exist_ok=True)


def idx(name):
    with open(os.path.join(folder, name), "rb") as f:
        raw = f.read()
    if raw[:2] == b"\x1f\x8b":  # gzip, or plain as read_idx also takes
        raw = gzip.decompress(raw)
    rank = raw[3]
    dims = [int.from_bytes(raw[4 + 4 * i:8 + 4 * i], "big") for i in range(rank)]
    return np.frombuffer(raw[4 + 4 * rank:], dtype=np.uint8).reshape(dims)


arrays = {"x_train": idx("train-images-idx3-ubyte.gz"), "y_train": idx("train-labels-idx1-ubyte.gz").astype(np.int64),
          "x_test": idx("t10k-images-idx3-ubyte.gz"), "y_test": idx("t10k-labels-idx1-ubyte.gz").astype(np.int64)}
npz = os.path.join(work, "small.npz")
np.savez_compressed(npz, **arrays)


def epochs(data):
    out = subprocess.run([train, "--device", "cpu:0", "--data", data, "--epochs", "2", "--batch-size", "25",
                          "--no-progress", "--seed", "3", "--out", os.path.join(work, "out")],
                         capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit("plexus-train --data %s failed:\n%s%s" % (data, out.stdout, out.stderr))
    lines = [re.sub(r", in [0-9.]+ sec", "", line) for line in out.stdout.splitlines() if line.startswith("Epoch ")]
    if len(lines) != 2:
        sys.exit("expected two epoch lines from --data %s:\n%s" % (data, out.stdout))
    return lines


from_idx, from_npz = epochs(folder), epochs(npz)
print("\n".join(from_npz))
if from_idx != from_npz:
    sys.exit("the .npz run differs from the IDX one:\n%s\n%s" % (from_idx, from_npz))

# Float images train the same in every float dtype that holds their values (k/256 fits float16 too):
# each is read as float32.
floats = {}
for dtype in ("float32", "float64", "float16"):
    as_float = dict(arrays, x_train=(arrays["x_train"] / 256).astype(dtype), x_test=(arrays["x_test"] / 256).astype(dtype))
    np.savez(npz, **as_float)
    floats[dtype] = epochs(npz)
print("\n".join(floats["float16"]))
if not floats["float32"] == floats["float64"] == floats["float16"]:
    sys.exit("float images trained differently by dtype:\n%s" % floats)
np.savez(npz, **dict(arrays, x_train=arrays["x_train"].astype(np.int32)))
out = subprocess.run([train, "--data", npz, "--epochs", "1", "--no-progress", "--out", os.path.join(work, "out")],
                     capture_output=True, text=True)
if out.returncode == 0 or "x_train is int32; images are uint8 (0..255) or floats" not in out.stderr:
    sys.exit("int32 images were not refused with the reason:\n%s%s" % (out.stdout, out.stderr))
print("refused: " + out.stderr.strip().splitlines()[-1])

arrays["y_test"] = arrays["y_test"] + 10
np.savez(npz, **arrays)
out = subprocess.run([train, "--data", npz, "--epochs", "1", "--no-progress", "--out", os.path.join(work, "out")],
                     capture_output=True, text=True)
if out.returncode == 0 or "y_test[0] is %d, not a class 0..9" % arrays["y_test"][0] not in out.stderr:
    sys.exit("labels outside 0..9 were not refused with the reason:\n%s%s" % (out.stdout, out.stderr))
print("refused: " + out.stderr.strip().splitlines()[-1])
