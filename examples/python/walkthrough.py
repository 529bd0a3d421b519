"""The seeds' walkthrough (000, 001, 003) in Plexus's Python: devices, tensors on them, explicit copies,
and an op on tensors of two devices refused rather than copied.

    PYTHONPATH=build/python /usr/bin/python3 examples/python/walkthrough.py
"""
import plexus

print(plexus.cpu(), plexus.gpu(), plexus.gpu(1))
print("GPUs:", plexus.num_gpus(), "try_gpu():", plexus.try_gpu(), "try_all_gpus():", plexus.try_all_gpus())

x = plexus.array([1, 2, 3])
print(x)                                   # made on cpu(0)
a = plexus.array([1, 2, 3], ctx=plexus.try_gpu())
print(a)
y = x.copyto(plexus.try_gpu())             # always a new tensor
z = x.as_in_context(plexus.try_gpu())      # the same tensor when already there
print((z + 2).exp() + y)                   # [ 21.085537  56.59815  151.41316 ]

# A second device: gpu(1), else a second CPU device (PLEXUS_CPU_DEVICES=2), else cpu(0).
second = plexus.gpu(1) if plexus.num_gpus() >= 2 else plexus.cpu(1)
try:
    plexus.zeros(1, device=second)
except plexus.PluginError:
    second = plexus.cpu(0)
X = plexus.ones((2, 3), ctx=plexus.try_gpu())
print(X)
Y = plexus.random.uniform(shape=(2, 3), ctx=second)
print(Y + X.copyto(Y.context))
if X.context != Y.context:
    try:
        X + Y
    except plexus.DeviceMismatchError as e:
        print("refused:", e)
