"""Random tensors from the runtime's seeded stream (plexus.seed(n) reseeds it). The shape is `shape`
(MXNet's nd spelling) or `size` (NumPy's and mxnet.np's, as d2l writes it)."""
from . import _plexus


def _shape(shape, size):
    if size is not None and shape is not None:
        raise TypeError("give the shape as shape= or size=, not both")
    shape = size if size is not None else shape
    return (1,) if shape is None else ((shape,) if isinstance(shape, int) else shape)


def uniform(low=0.0, high=1.0, shape=None, device=None, dtype="float32", ctx=None, size=None):
    """Values in [low, high)."""
    from . import _device
    return _plexus._uniform(float(low), float(high), _shape(shape, size), _device(device, ctx), dtype)


def normal(loc=0.0, scale=1.0, shape=None, device=None, dtype="float32", ctx=None, size=None):
    """Values around `loc` with standard deviation `scale`."""
    from . import _device
    return _plexus._normal(float(loc), float(scale), _shape(shape, size), _device(device, ctx), dtype)
