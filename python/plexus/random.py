"""Random tensors from the runtime's seeded stream (plexus.seed(n) reseeds it)."""
from . import _plexus


def uniform(low=0.0, high=1.0, shape=(1,), device=None, dtype="float32", ctx=None):
    """Values in [low, high)."""
    from . import _device
    return _plexus._uniform(float(low), float(high), shape, _device(device, ctx), dtype)


def normal(loc=0.0, scale=1.0, shape=(1,), device=None, dtype="float32", ctx=None):
    """Values around `loc` with standard deviation `scale`."""
    from . import _device
    return _plexus._normal(float(loc), float(scale), shape, _device(device, ctx), dtype)
