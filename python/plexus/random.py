"""Random tensors from the runtime's seeded stream (plexus.seed(n), or np.random.seed(n) here, reseeds it). The
shape is `shape` (MXNet's nd spelling) or `size` (NumPy's and mxnet.np's, as d2l writes it)."""
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


def _axes(who, shape):
    import numbers
    if any(isinstance(d, bool) or not isinstance(d, numbers.Integral) or d < 0 for d in shape):
        raise TypeError("%s: each axis is an int >= 0, given as its own argument (rand(2, 3)), got %r"
                        % (who, shape))
    return tuple(int(d) for d in shape) or (1,)


def rand(*shape, device=None, ctx=None, dtype="float32"):
    """Values in [0, 1) of shape `shape` (each axis an argument), as np.random.rand (none: one value)."""
    return uniform(0.0, 1.0, _axes("rand", shape), device=device, ctx=ctx, dtype=dtype)


def randn(*shape, device=None, ctx=None, dtype="float32"):
    """Standard normal values of shape `shape` (each axis an argument), as np.random.randn."""
    return normal(0.0, 1.0, _axes("randn", shape), device=device, ctx=ctx, dtype=dtype)


def seed(seed=None):
    """Reseeds the runtime's random stream, as np.random.seed (plexus.seed and npx.seed do the same): an int in
    [0, 2**64); None draws one from the operating system."""
    import numbers
    import os
    if seed is None:
        seed = int.from_bytes(os.urandom(8), "little")
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral):
        raise TypeError("seed: takes an int in [0, 2**64) (or None), not a %s" % type(seed).__name__)
    if not 0 <= seed < 2 ** 64:
        raise ValueError("seed: %d is outside [0, 2**64)" % seed)
    _plexus.seed(int(seed))


# Uniforms drawn and compared at a time (a (rows, draws, categories) comparison): bounds the memory of a large n.
_CHUNK = 1 << 22


def multinomial(n, pvals, size=None, device=None, ctx=None):
    """Counts of n draws among len(pvals) categories (int64, shape size + (len(pvals),)) from the seeded stream, as
    np.random.multinomial (the last category takes what pvals leave); on pvals' device for a tensor, else `device`."""
    import numbers
    import numpy
    from . import Tensor, _device, array, concat, cpu, zeros
    if isinstance(n, bool) or not isinstance(n, numbers.Integral):
        raise TypeError("multinomial: n (the number of draws) is an int, not a %s" % type(n).__name__)
    if n < 0:
        raise ValueError("multinomial: n must be 0 or more, got %d" % n)
    dev = _device(device, ctx)
    if isinstance(pvals, Tensor):
        dev = pvals.device if dev is None else dev
        pvals = pvals.astype("float64").asnumpy()  # the categories' probabilities: a few values, read once
    p = numpy.asarray(pvals, dtype=numpy.float64)
    if p.ndim != 1:
        raise ValueError("multinomial: pvals is one probability per category (1-D), got shape %s" % (p.shape,))
    if not numpy.isfinite(p).all():
        raise ValueError("multinomial: pvals must be finite, got %s" % p.tolist())
    if (p < 0).any():
        raise ValueError("multinomial: pvals must be 0 or more, got %s" % p.tolist())
    if p[:-1].sum() > 1.0 + 1e-12:  # NumPy's rule: the last category takes what the others leave
        raise ValueError("multinomial: sum(pvals[:-1]) is %r, more than 1" % float(p[:-1].sum()))
    if size is None:
        shape = ()
    elif isinstance(size, numbers.Integral) and not isinstance(size, bool):
        shape = (int(size),)
    else:
        shape = tuple(int(d) for d in size)
    if any(d < 0 for d in shape):
        raise ValueError("multinomial: size %s has a negative length" % (size,))
    dev = dev if dev is not None else cpu()
    k, rows = len(p), int(numpy.prod(shape, dtype=numpy.int64))
    if k <= 1 or n == 0 or rows == 0:  # nothing to draw: every count in the one category (or none)
        return zeros(shape + (k,), device=dev, dtype="int64") + (n if k == 1 else 0)
    # Each draw u in [0, 1) lands in the first category whose cumulative probability exceeds it; the last
    # category takes the rest. below[:, j] counts the draws under the j-th cumulative sum.
    edges = array(numpy.cumsum(p[:-1]), device=dev, dtype="float64").reshape(1, 1, k - 1)
    step = max(1, min(n, _CHUNK // (rows * (k - 1))))
    below = None
    for start in range(0, n, step):
        draws = min(step, n - start)
        u = _plexus._uniform(0.0, 1.0, (rows, draws, 1), dev, "float64")
        part = (u < edges).astype("int64").sum(axis=1)
        below = part if below is None else below + part
    bounds = concat([zeros((rows, 1), device=dev, dtype="int64"), below,
                     zeros((rows, 1), device=dev, dtype="int64") + n], axis=1)
    return (bounds[:, 1:] - bounds[:, :-1]).reshape(shape + (k,))


def randint(low, high=None, size=None, dtype="int64", device=None, ctx=None):
    """Integers drawn uniformly from [low, high) (from [0, low) with one bound), as np.random.randint, from the
    seeded stream; shape `size` (a single one without it)."""
    import numbers
    import numpy
    from . import _device
    if high is None:
        low, high = 0, low
    for name, v in (("low", low), ("high", high)):
        if isinstance(v, bool) or not isinstance(v, numbers.Integral):
            raise TypeError("randint: %s is an int, not a %s" % (name, type(v).__name__))
    if not low < high:
        raise ValueError("randint: low >= high (%d >= %d): the range is empty" % (low, high))
    if high - low > 2 ** 53:
        raise ValueError("randint: a range of more than 2**53 integers is not drawn evenly (float64 draws)")
    info = numpy.iinfo(dtype) if dtype in ("int32", "int64", "uint8") else None
    if info is None:
        raise TypeError("randint: dtype is int32, int64 or uint8, not %r" % (dtype,))
    if low < info.min or high - 1 > info.max:
        raise ValueError("randint: [%d, %d) does not fit %s" % (low, high, dtype))
    shape = () if size is None else _shape(size, None)
    u = _plexus._uniform(0.0, float(high - low), shape, _device(device, ctx), "float64")
    # floor of a draw in [0, n): every integer below n equally often (n <= 2**53 is exact in float64)
    from . import minimum
    whole = minimum(u.astype("int64"), high - low - 1)  # (a draw rounded up to n would be out of range)
    return (whole + low).astype(dtype) if dtype != "int64" else whole + low

