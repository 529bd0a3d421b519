"""Plexus for Python: tensors on devices that plugins provide, autograd, Gluon-style
layers, and tensors exchanged with NumPy and PyTorch through DLPack.

    >>> import plexus
    >>> x = plexus.array([1, 2, 3])
    >>> print(x)
    [1. 2. 3.]
    <Tensor 3 @cpu(0)>
"""
from . import _plexus
from ._plexus import (Device, Tensor, cpu, gpu, num_gpus, try_gpu, try_all_gpus, waitall, seed, where,
                      norm, maximum, minimum, dot, matmul, take, layer_norm, cumsum, dropout, autograd, from_dlpack,
                      Error, DeviceMismatchError, ShapeError, DTypeError, OutOfMemoryError, PluginError,
                      UnsupportedError, InvalidArgumentError, DeviceError)
from . import random, init, nn, loss, data, metric, lr_scheduler, rnn
from ._plexus import trace, trace_region  # where the time goes (docs/performance.md)
import builtins as _builtins
import numbers as _numbers
import sys as _sys
import types as _types
_sys.modules[__name__ + ".autograd"] = autograd

version = _plexus.version
__version__ = _plexus.version()[0]

__all__ = ["Device", "Tensor", "cpu", "gpu", "num_gpus", "try_gpu", "try_all_gpus", "waitall", "seed", "array",
           "empty", "zeros", "ones", "full", "arange", "from_dlpack", "where", "concat", "softmax", "norm",
           "maximum", "minimum", "dot", "stack", "save", "load", "concatenate", "clip", "expand_dims", "squeeze",
           "matmul", "pick", "take", "layer_norm", "leaky_relu", "log_softmax", "one_hot", "batch_dot", "cumsum",
           "repeat", "swapaxes", "tile", "dropout", "rnn", "broadcast_to",
           "sequence_mask", "linalg", "square", "power", "var", "std", "linspace", "eye", "identity", "meshgrid",
           "transpose", "size", "pi", "e", "inf", "nan", "newaxis", "mod", "remainder", "argsort", "sort",
           "nonzero", "unique", "flip", "split", "set_printoptions", "get_printoptions",
           "autograd", "random", "init", "nn", "loss", "data", "metric", "Error", "DeviceMismatchError", "ShapeError", "DTypeError",
           "OutOfMemoryError", "PluginError", "UnsupportedError", "InvalidArgumentError", "DeviceError",
           "float16", "bfloat16", "float32", "float64", "uint8", "int32", "int64", "set_np"]

# The dtypes by name, as NumPy's np.float32 (d2l's np.arange(16, dtype=np.float32)): every dtype= takes
# them, and a tensor's dtype compares equal to them.
float16, bfloat16, float32, float64 = "float16", "bfloat16", "float32", "float64"
uint8, int32, int64 = "uint8", "int32", "int64"


def set_np(shape=True, array=True):
    """MXNet's npx.set_np(), the first line of d2l's chapters: it switches MXNet to NumPy's semantics,
    which Plexus always has, so it does nothing."""


def _device(device, ctx):
    """The device= argument, or MXNet's ctx=; None means cpu(0). A string names one as PyTorch's do:
    'cpu', 'gpu:1', 'cuda:1', 'gpu(1)'."""
    device, ctx = _as_device(device, "device"), _as_device(ctx, "ctx")
    if device is not None and ctx is not None and device != ctx:
        raise ValueError("device=%s and ctx=%s disagree: give one" % (device, ctx))
    return device if device is not None else ctx


def _as_device(given, keyword):
    """A Device (or None) for a Device or a device string; a list or tuple of them (a net's devices) in kind."""
    if given is None or isinstance(given, Device):
        return given
    if isinstance(given, (list, tuple)):
        return (list if isinstance(given, list) else tuple)(_as_device(d, keyword) for d in given)
    if type(given).__name__ == "device" and hasattr(given, "type"):  # a torch.device: 'cpu', 'cuda:0'
        given = str(given)
    if isinstance(given, str):
        import re
        m = re.fullmatch(r"\s*(cpu|gpu|cuda)\s*(?:[:(]\s*([0-9]+)\s*\)?)?\s*", given, re.ASCII)
        if m and (given.count("(") == given.count(")")) and not (":" in given and ")" in given):
            return (cpu if m.group(1) == "cpu" else gpu)(int(m.group(2) or 0))
        raise ValueError("%s='%s' does not name a device: 'cpu', 'cpu:1', 'gpu:0' ('cuda:0'), or plexus.cpu(i), "
                         "plexus.gpu(i)" % (keyword, given))
    raise TypeError("%s= takes a device (plexus.cpu(i), plexus.gpu(i), or a string such as 'gpu:0'), not a %s"
                    % (keyword, type(given).__name__))


def _dtype_of(values):
    import numpy
    a = numpy.asarray(values)
    return a, a.dtype


def array(data, device=None, dtype=None, ctx=None):
    """A new tensor with the values of `data` (a list, a NumPy array, a Plexus tensor, anything
    numpy.asarray takes), on `device` (default cpu(0)). The dtype is `dtype`, else the source's for an
    array or tensor of a Plexus dtype (NumPy's, Plexus's, or a PyTorch or JAX tensor's), uint8 for bools (a
    mask, what comparisons give: MXNet's bool), else float32 (as MXNet's nd.array)."""
    import numpy
    dev = _device(device, ctx)
    if not isinstance(data, (Tensor, numpy.ndarray)) and hasattr(data, "__dlpack__") and hasattr(data, "dtype"):
        # A typed array of another runtime (PyTorch, JAX): through DLPack, which carries every dtype
        # (bfloat16 too) and the memory where it is; copied below, as array() always copies.
        if getattr(data, "requires_grad", False) and hasattr(data, "detach"):
            data = data.detach()  # (PyTorch exports no tensor that requires grad; the values are the same)
        shared = from_dlpack(data)
        copied = shared.copyto(dev if dev is not None else cpu())
        return copied if dtype is None else copied.astype(dtype)
    if isinstance(data, Tensor):
        if dtype is None:
            dtype = data._dtype_name
        # bfloat16 has no NumPy type; float32 holds its values exactly.
        data = (data.astype("float32") if data._dtype_name == "bfloat16" else data).asnumpy()
    source_typed = isinstance(data, numpy.ndarray) or hasattr(data, "__array_interface__")
    values = numpy.asarray(data)
    if dtype is None:
        name = values.dtype.name
        dtype = name if source_typed and name in ("float32", "float64", "int32", "int64", "uint8", "float16") else \
            "uint8" if name == "bool" else "float32"
    return _plexus._from_numpy(values, dev if dev is not None else cpu(), dtype)


def empty(shape, device=None, dtype="float32", ctx=None):
    """Uninitialized values."""
    return _plexus._empty(shape, _device(device, ctx), dtype)


def zeros(shape, device=None, dtype="float32", ctx=None):
    return _plexus._full(shape, 0.0, _device(device, ctx), dtype)


def ones(shape, device=None, dtype="float32", ctx=None):
    return _plexus._full(shape, 1.0, _device(device, ctx), dtype)


def full(shape, val, device=None, dtype="float32", ctx=None):
    """`val` everywhere. An integer dtype takes the values it holds (a float's integer part) and
    refuses the rest with a DTypeError, as NumPy 2 does."""
    if isinstance(val, Tensor):
        val = val.item()  # a Python int for an integer tensor, exactly
    return _plexus._full(shape, val, _device(device, ctx), dtype)


def arange(start, stop=None, step=1, device=None, dtype="float32", ctx=None):
    """start, start+step, ... below stop; arange(n) counts from 0. In an integer dtype, integer bounds give
    exact values (beyond 2**53 too) and values the dtype cannot hold are a DTypeError, as NumPy 2's."""
    if stop is None:
        start, stop = 0, start
    dev, name = _device(device, ctx), _plexus._parse_dtype(dtype)
    bounds = _plexus._integer_bounds(name)
    if bounds and all(isinstance(v, _numbers.Integral) for v in (start, stop, step)) and step:
        return _integer_arange(int(start), int(stop), int(step), dev, name, bounds)
    return _plexus._arange(float(start), float(stop), float(step), dev, dtype)


def _integer_arange(start, stop, step, dev, name, bounds):
    """arange of integers: through doubles where they hold every value, else counted and scaled exactly."""
    values = range(start, stop, step)
    lo, hi = bounds
    if values:
        least, most = (values[0], values[-1]) if step > 0 else (values[-1], values[0])
        if not (lo <= least and most <= hi):  # (this module's min and max are the tensors')
            raise DTypeError("arange: values from %d to %d are beyond what %s holds (%d to %d)"
                             % (values[0], values[-1], name, lo, hi))
    if all(-2 ** 53 <= v <= 2 ** 53 for v in (start, stop, step)):
        return _plexus._arange(float(start), float(stop), float(step), dev, name)
    # Exact, in int64 when a bound is beyond the dtype; the values fit it (checked above).
    return (_plexus._arange(0.0, float(len(values)), 1.0, dev, name) * step + start).astype(name)


def zeros_like(x):
    return zeros(x.shape, x.device, x.dtype)


def ones_like(x):
    return ones(x.shape, x.device, x.dtype)


def _joined(who, arrays, tensors, dim, axis):
    """The tensors of concat(*arrays) or concat([...]) and the axis given (None when none is)."""
    if dim is not None and axis is not None and dim != axis:
        raise ValueError("%s: dim=%s and axis=%s disagree: give one" % (who, dim, axis))
    if tensors is not None:
        if arrays:
            raise TypeError("%s: give the tensors as arguments or as tensors=, not both" % who)
        arrays = (tensors,)
    # NumPy's stack(arrays, axis) and concatenate(arrays, axis) with the axis positional (d2l's
    # np.stack((K, K + 1, K + 2), 0)): it had been taken for one more tensor.
    if len(arrays) == 2 and isinstance(arrays[0], (list, tuple)) and isinstance(arrays[1], _numbers.Integral) \
            and not isinstance(arrays[1], bool):
        if dim is not None or axis is not None:
            raise TypeError("%s: the axis is given twice (%s, and as a keyword)" % (who, arrays[1]))
        arrays, axis = arrays[:1], arrays[1]
    listed = len(arrays) == 1 and isinstance(arrays[0], (list, tuple))
    return (list(arrays[0]) if listed else list(arrays)), listed, (axis if axis is not None else dim)


def concat(*arrays, dim=None, axis=None, tensors=None):
    """Tensors joined along an existing axis. concat([a, b], axis=0) as NumPy's concatenate (axis 0 by
    default); concat(a, b, dim=1) as MXNet's nd.concat (dim 1 by default, as MXNet's)."""
    parts, listed, given = _joined("concat", arrays, tensors, dim, axis)
    return _plexus._concat(parts, (0 if listed else 1) if given is None else given)


def stack(*arrays, axis=None, dim=None):
    """Tensors of one shape joined along a new axis: stack([a, b], axis=0) as NumPy's, or stack(a, b) as
    MXNet's nd.stack."""
    parts, _, given = _joined("stack", arrays, None, dim, axis)
    return _plexus._stack(parts, 0 if given is None else given)


def concatenate(arrays, axis=0):
    """NumPy's name: concat(arrays, axis=axis)."""
    return _plexus._concat(list(arrays), axis)


def save(fname, data):
    """Writes a tensor, a list of tensors or a dict of them by name to `fname`, as MXNet's nd.save
    (the parameter file format, docs/parameter-file.md; any dtype), atomically."""
    import os
    if isinstance(data, Tensor):
        named = [("0", data)]
    elif isinstance(data, (list, tuple)):
        named = [(str(i), t) for i, t in enumerate(data)]
    elif isinstance(data, dict):
        named = list(data.items())
        if not all(isinstance(k, str) for k in data):
            raise TypeError("save: a dict's keys are names (str)")
    else:
        raise TypeError("save: data is a Tensor, a list of them or a dict of them by name, not a %s"
                        % type(data).__name__)
    for _, t in named:
        if not isinstance(t, Tensor):
            raise TypeError("save: %s is not a Tensor" % type(t).__name__)
    path = os.fspath(fname)
    folder = os.path.dirname(path) or "."
    if not os.path.isdir(folder):
        import errno
        raise FileNotFoundError(errno.ENOENT, "save: no such folder", folder)
    _plexus._save_tensors(path, named)


def load(fname, device=None, ctx=None):
    """What save wrote, on `device` (default cpu(0)), as MXNet's nd.load: a list for a tensor or a list
    (names "0", "1", ... in order; a dict with exactly those keys reads back as a list too), else a dict.
    A file that is not there is a FileNotFoundError."""
    from ._paths import existing_file
    named = _plexus._load_tensors(existing_file(fname, "load"), _device(device, ctx))
    if [name for name, _ in named] == [str(i) for i in range(len(named))]:
        return [t for _, t in named]
    return dict(named)


_tensor_clip = Tensor.clip


def _clip_method(self, a_min=None, a_max=None, min=None, max=None):  # noqa: A002 (MXNet's and PyTorch's names)
    """x with its values limited to [a_min, a_max], as NumPy's x.clip (None: no bound on that side); MXNet's and
    PyTorch's min= and max= name them too."""
    if min is not None or max is not None:
        if a_min is not None or a_max is not None:
            raise TypeError("clip: give the bounds as a_min/a_max or as min/max, not both")
        a_min, a_max = min, max
    if a_min is None and a_max is None:
        raise ValueError("clip: give a_min, a_max or both")
    return _tensor_clip(self, a_min, a_max)


Tensor.clip = _clip_method


def clip(x, a_min=None, a_max=None):
    """x with its values limited to [a_min, a_max], as np.clip (None: no bound on that side)."""
    return _need_tensor("clip", "x", x).clip(a_min, a_max)


def expand_dims(x, axis):
    """A view of x with a new axis of length 1 at `axis`."""
    return x.expand_dims(axis)


def squeeze(x, axis=None):
    """A view of x without its axes of length 1 (or the one at `axis`)."""
    return x.squeeze(axis)


def _reduction(name):
    def f(x, axis=None, keepdims=False):
        return getattr(x, name)(axis=axis, keepdims=keepdims)
    f.__name__ = name
    f.__doc__ = "x.%s(axis, keepdims), as np.%s." % (name, name)
    return f


# plexus.sum(x, axis) and the like; left out of __all__, so `from plexus import *` keeps Python's sum, max, min.
sum, mean, max, min, argmax, argmin = (_reduction(n) for n in ("sum", "mean", "max", "min", "argmax", "argmin"))


def _tensor_dtype(self):
    """The dtype, as a numpy.dtype (compares equal to 'float32' and numpy.float32); bfloat16, which
    NumPy lacks, as the string 'bfloat16'."""
    name = self._dtype_name
    try:
        import numpy
        return numpy.dtype(name)
    except (ImportError, TypeError):
        return name


Tensor.dtype = property(_tensor_dtype)
Tensor.context = property(lambda self: self.device)
Tensor.ctx = property(lambda self: self.device)


def _unary(name):
    def f(x, *args, **kwargs):
        if name == "round" and (args or kwargs) and (list(args) + list(kwargs.values())) != [0]:
            raise ValueError("round: decimals other than 0 are not offered by Plexus (x * 10**d, round, / 10**d)")
        if name != "round" and (args or kwargs):
            raise TypeError("%s(x) takes one tensor (NumPy's out=, where= and dtype= are not offered)" % name)
        return getattr(_need_tensor(name, "x", x), name)()
    f.__name__ = name
    f.__doc__ = "Elementwise %s, on x's device." % name
    return f


# plexus.exp(x), plexus.relu(x), ...: one per unary op of the op table.
# (tests/python/test_tensors.py checks that no row is named like one of the
# module's own names, which this would replace.)
for _name in _plexus._unary_ops:
    globals()[_name] = _unary(_name)
del _name
# (Those named like Python's builtins, abs and round, are left out of it, as sum and max are.)
__all__ += [_op for _op in _plexus._unary_ops if not hasattr(_builtins, _op)]


def leaky_relu(x, alpha=0.01):
    """x > 0 ? x : alpha * x, elementwise on x's device."""
    return x.leaky_relu(alpha)


Tensor.__float__ = lambda self: float(self.item())
Tensor.__int__ = lambda self: int(self.item())


def _format(self, spec):
    """f"{loss:.3f}" of a one-element tensor formats its value, as PyTorch's; no spec prints the tensor."""
    if not spec:
        return str(self)
    if self.size != 1:
        raise TypeError("format spec %r: only a one-element tensor formats as a number; this one is %s"
                        % (spec, "x".join(map(str, self.shape)) or "empty"))
    return format(self.item(), spec)


Tensor.__format__ = _format


# NumPy's operators with a tensor among the operands (NEP 13): np_array * x
# is x.__rmul__(np_array), a tensor on x's device that autograd follows, as
# with PyTorch's tensors. Any other ufunc (numpy.exp(x)), or one that writes
# an array given as out= (np_array += x), runs in NumPy on x's values.
_OPERATOR_UFUNCS = {"add": ("__add__", "__radd__"), "subtract": ("__sub__", "__rsub__"),
                    "multiply": ("__mul__", "__rmul__"), "divide": ("__truediv__", "__rtruediv__"),
                    "true_divide": ("__truediv__", "__rtruediv__"),
                    "floor_divide": ("__floordiv__", "__rfloordiv__"), "power": ("__pow__", "__rpow__"),
                    "matmul": ("__matmul__", "__rmatmul__"), "less": ("__lt__", "__gt__"),
                    "less_equal": ("__le__", "__ge__"), "greater": ("__gt__", "__lt__"),
                    "greater_equal": ("__ge__", "__le__"), "equal": ("__eq__", "__eq__"),
                    "not_equal": ("__ne__", "__ne__")}


def _array_ufunc(self, ufunc, method, *inputs, **kwargs):
    import numpy
    names = _OPERATOR_UFUNCS.get(ufunc.__name__)
    if names and method == "__call__" and not kwargs and len(inputs) == 2:
        a, b = inputs
        return getattr(a, names[0])(b) if isinstance(a, Tensor) else getattr(b, names[1])(a)
    if any(isinstance(o, Tensor) for o in kwargs.get("out", ())):
        return NotImplemented  # NumPy would write into a copy of the tensor's values
    return getattr(ufunc, method)(*(numpy.asarray(i) if isinstance(i, Tensor) else i for i in inputs), **kwargs)


Tensor.__array_ufunc__ = _array_ufunc


def _need_tensor(who, name, x):
    if not isinstance(x, Tensor):
        raise nn._not_a_tensor(who, name, x)
    return x


def _axis(who, axis, ndim):
    """`axis` (negative counts from the end) as 0..ndim-1; InvalidArgumentError when out of range, as x.sum's."""
    if isinstance(axis, bool) or not isinstance(axis, _numbers.Integral):
        raise TypeError("%s: axis is an int, not a %s" % (who, type(axis).__name__))
    if not -ndim <= axis < ndim:
        raise InvalidArgumentError("%s: axis %d is out of range for a tensor of rank %d" % (who, axis, ndim))
    return int(axis) % ndim


def _over_axis(who, rows, x, axis):
    """rows(x) computes over x's last axis: over `axis` instead, which is moved last and back."""
    _need_tensor(who, "x", x)
    if x.ndim == 0:
        raise ShapeError("%s: takes a tensor of rank 1 or more (the axis to normalize over), got shape ()" % who)
    a = _axis(who, axis, x.ndim)
    if a == x.ndim - 1:
        return rows(x)
    order = [i for i in range(x.ndim) if i != a] + [a]
    back = sorted(range(x.ndim), key=order.__getitem__)
    return rows(x.transpose(*order)).transpose(*back)


def softmax(x, axis=-1):
    """exp(x) / sum(exp(x)) over `axis` (default the last), any rank, as npx.softmax; differentiable. Over the
    last axis by the runtime's op (16-bit floats computed in float32)."""
    return _over_axis("softmax", _plexus.softmax, x, axis)


def log_softmax(x, axis=-1):
    """log(softmax(x)) over `axis` (default the last), computed stably (no log of an underflowed 0), as
    npx.log_softmax; differentiable."""
    return _over_axis("log_softmax", _plexus.log_softmax, x, axis)


def one_hot(indices, depth, on_value=1.0, off_value=0.0, dtype="float32"):
    """indices.shape + (depth,): on_value at each index, off_value elsewhere, on the indices' device (npx.one_hot).
    An index outside [0, depth) gives an all-off row, as MXNet's; float indices must be whole, else a ValueError."""
    if not isinstance(indices, Tensor):
        indices = array(indices)
    if isinstance(depth, bool) or not isinstance(depth, _numbers.Integral):
        raise TypeError("one_hot: depth is an int, not a %s" % type(depth).__name__)
    if depth < 0:
        raise ValueError("one_hot: depth must be 0 or more, got %d" % depth)
    dev, name = indices.device, indices._dtype_name
    if name in ("float32", "float64", "float16", "bfloat16"):
        wide = indices.astype("float64")
        if wide.size:
            # Whole when equal to its integer part; beyond 2**62 every float is whole (and out of range).
            broken = (wide != wide.astype("int64").astype("float64")) * ((wide.abs() >= 2.0 ** 62) == 0)
            if broken.max().item():
                raise ValueError("one_hot: float indices must be whole numbers; found %r"
                                 % (wide.reshape(-1)[int(broken.reshape(-1).argmax().item())].item(),))
        positions = arange(int(depth), device=dev, dtype="float64")
    else:
        wide = indices if name == "int64" else indices.astype("int64")
        positions = arange(int(depth), device=dev, dtype="int64")
    hit = wide.reshape(tuple(indices.shape) + (1,)) == positions
    return where(hit, full((), on_value, device=dev, dtype=dtype), full((), off_value, device=dev, dtype=dtype))


def batch_dot(a, b, transpose_a=False, transpose_b=False):
    """The matrix product of each pair in a batch, as npx.batch_dot: a (B, M, K) and b (B, K, N) give (B, M, N)
    (more leading batch axes too, the same on both); transpose_a/b take a (B, K, M), b (B, N, K). Differentiable."""
    _need_tensor("batch_dot", "a", a)
    _need_tensor("batch_dot", "b", b)
    sa, sb = tuple(a.shape), tuple(b.shape)
    if len(sa) < 3 or len(sa) != len(sb):
        raise ShapeError("batch_dot: takes a (B, M, K) and b (B, K, N) of one rank, 3 or more, got %s and %s"
                         % (sa, sb))
    if sa[:-2] != sb[:-2]:
        raise ShapeError("batch_dot: the batch axes differ: %s and %s (shapes %s and %s)"
                         % (sa[:-2], sb[:-2], sa, sb))
    m, k = sa[-2:] if not transpose_a else sa[:-3:-1]
    k2, n = sb[-2:] if not transpose_b else sb[:-3:-1]
    if k != k2:
        raise ShapeError("batch_dot: inner dimensions differ: %d of a %s%s and %d of b %s%s"
                         % (k, sa, " (transpose_a)" if transpose_a else "", k2, sb,
                            " (transpose_b)" if transpose_b else ""))
    rows = 1
    for d in sa[:-2]:
        rows *= d
    x, y = a.reshape(rows, *sa[-2:]), b.reshape(rows, *sb[-2:])
    x, y = x.transpose(0, 2, 1) if transpose_a else x, y.transpose(0, 2, 1) if transpose_b else y
    return matmul(x, y).reshape(sa[:-2] + (m, n))


def sequence_mask(data, sequence_length=None, use_sequence_length=False, value=0.0, axis=0):
    """npx.sequence_mask: `value` at each step at or past its sequence's length (sequence_length (batch,), floats
    truncated as MXNet's); axis=0 for data (steps, batch, ...), 1 for (batch, steps, ...). Differentiable in data."""
    _need_tensor("sequence_mask", "data", data)
    if not use_sequence_length:
        return data.copy()
    if sequence_length is None:
        raise ValueError("sequence_mask: use_sequence_length=True needs sequence_length (one length per sequence)")
    if data.ndim < 2:
        raise ShapeError("sequence_mask: data has a steps axis and a batch axis, (steps, batch, ...) or (batch, "
                         "steps, ...), got shape %s" % (tuple(data.shape),))
    if isinstance(axis, bool) or axis not in (0, 1):
        raise InvalidArgumentError("sequence_mask: axis is 0 (data (steps, batch, ...)) or 1 (data (batch, steps, "
                                   "...)), as MXNet's; got %r" % (axis,))
    dev, steps, batch = data.device, data.shape[axis], data.shape[1 - axis]
    lengths = sequence_length if isinstance(sequence_length, Tensor) else array(sequence_length, device=dev)
    if tuple(lengths.shape) != (batch,):
        raise ShapeError("sequence_mask: sequence_length has one length per sequence, shape (%d,) for data %s "
                         "with axis=%d; got shape %s" % (batch, tuple(data.shape), axis, tuple(lengths.shape)))
    lengths = lengths if lengths._dtype_name == "int64" else lengths.astype("int64")  # truncated, as MXNet's
    positions = arange(steps, device=dev, dtype="int64")
    keep = positions.reshape(steps, 1) < lengths.reshape(1, batch) if axis == 0 else \
        positions.reshape(1, steps) < lengths.reshape(batch, 1)
    keep = keep.reshape(tuple(keep.shape) + (1,) * (data.ndim - 2))
    return where(keep, data, full((), value, device=dev, dtype=data._dtype_name))


def _root_of(s):
    """sqrt(s) with the gradient 0 where s is 0 (PyTorch's for a norm of zeros), as plexus.norm's."""
    at_zero = s == 0
    return where(at_zero, 0.0, where(at_zero, 1.0, s).sqrt())


_VECTOR_ORDS = "vectors take ord None, 1, 2 or inf; matrices None or 'fro'"


def _linalg_norm(x, ord=None, axis=None, keepdims=False):
    """The norm of x, as np.linalg.norm: None is the 2-norm of every element (or along `axis`, an int; over
    two axes, Frobenius'); vectors also take ord 1, 2, inf, matrices 'fro'. Differentiable (0 at 0, as PyTorch's)."""
    _need_tensor("linalg.norm", "x", x)
    nd, name = x.ndim, x._dtype_name
    if isinstance(ord, bool) or not (ord is None or ord == "fro" or (isinstance(ord, _numbers.Real)
                                                                   and ord in (1, 2, float("inf")))):
        raise ValueError("linalg.norm: ord=%r is not supported: %s" % (ord, _VECTOR_ORDS))
    if axis is not None:
        axes = (axis,) if isinstance(axis, _numbers.Integral) and not isinstance(axis, bool) else axis
        if not isinstance(axes, (tuple, list)) or not 1 <= len(axes) <= 2:
            raise TypeError("linalg.norm: axis is None, an int or a tuple of two ints, not %r" % (axis,))
        axes = tuple(_axis("linalg.norm", a, nd) for a in axes)
        if len(axes) == 2 and axes[0] == axes[1]:
            raise InvalidArgumentError("linalg.norm: axis %r names one axis twice" % (axis,))
    elif ord is None:
        w = x if name.startswith("float") or name == "bfloat16" else x.astype("float64")
        n = norm(w)  # the runtime's: every element
        return n.reshape((1,) * nd) if keepdims else n
    elif nd in (1, 2):
        axes = tuple(range(nd))
    else:
        raise ShapeError("linalg.norm: ord=%r without axis= takes a vector or a matrix, got shape %s"
                         % (ord, tuple(x.shape)))
    if len(axes) == 1 and ord == "fro":
        raise ValueError("linalg.norm: ord='fro' is a matrix norm, and this is a vector's (%s)" % _VECTOR_ORDS)
    if len(axes) == 2 and ord not in (None, "fro"):
        raise ValueError("linalg.norm: ord=%r of a matrix is not supported (%s)" % (ord, _VECTOR_ORDS))
    w = x.astype("float64") if not (name.startswith("float") or name == "bfloat16") else \
        x.astype("float32") if name in ("float16", "bfloat16") else x
    along = axes[0] if len(axes) == 1 else axes
    if ord == 1:
        n = w.abs().sum(axis=along, keepdims=keepdims)
    elif ord == float("inf"):
        n = w.abs().max(axis=along, keepdims=keepdims)
    else:
        n = _root_of((w * w).sum(axis=along, keepdims=keepdims))
    return n.astype(name) if name in ("float16", "bfloat16") else n


def repeat(a, repeats, axis=None):
    """Each element `repeats` times in a row along `axis` (of the flattened tensor without one), as np.repeat;
    repeats an int or one count per element. Differentiable (a take of the places)."""
    _need_tensor("repeat", "a", a)
    import numpy
    if axis is None:
        a, axis = a.reshape(-1), 0
    axis = _axis("repeat", axis, a.ndim)
    n = a.shape[axis]
    if isinstance(repeats, Tensor):
        repeats = repeats.asnumpy()
    counts = numpy.asarray(repeats)
    if counts.dtype.kind not in "iu" or counts.ndim > 1 or (counts.ndim == 1 and counts.size not in (1, n)):
        raise ValueError("repeat: repeats is an int or one int per element along the axis (%d), got %r"
                         % (n, repeats))
    if (counts < 0).any():
        raise ValueError("repeat: repeats may not be negative, got %r" % (repeats,))
    places = numpy.repeat(numpy.arange(n), numpy.broadcast_to(counts.reshape(-1), (n,)))
    return a[(slice(None),) * axis + (places,)]


def broadcast_to(a, shape):
    """a broadcast to `shape` as NumPy's rules stretch it (a copy here; differentiable: the gradient sums back)."""
    _need_tensor("broadcast_to", "a", a)
    shape = (shape,) if isinstance(shape, _numbers.Integral) else tuple(shape)
    out = a + zeros(shape, device=a.device, dtype=a._dtype_name)
    if tuple(out.shape) != shape:
        raise ShapeError("broadcast_to: %s does not broadcast to %s" % (tuple(a.shape), shape))
    return out


def swapaxes(a, axis1, axis2):
    """a with two axes exchanged, as np.swapaxes (a copy; differentiable)."""
    _need_tensor("swapaxes", "a", a)
    order = list(range(a.ndim))
    i, j = _axis("swapaxes", axis1, a.ndim), _axis("swapaxes", axis2, a.ndim)
    order[i], order[j] = j, i
    return a.transpose(*order)


def pick(data, index, axis=-1, keepdims=False):
    """data's element at `index` along `axis` for each place of the other axes, as npx.pick (d2l's
    pick(y_hat, y): each row's label's score); index has data's shape without that axis. An index outside
    the axis is an error (MXNet's default clips it). Differentiable in data."""
    _need_tensor("pick", "data", data)
    if not isinstance(index, Tensor):
        index = array(index, device=data.device, dtype="int64")
    if data.ndim == 0:
        raise ShapeError("pick: data has an axis to pick along; got a scalar")
    a = _axis("pick", axis, data.ndim)
    rest = tuple(d for i, d in enumerate(data.shape) if i != a)
    if tuple(index.shape) != rest and not (keepdims and tuple(index.shape) == rest[:a] + (1,) + rest[a:]):
        raise ShapeError("pick: index has data's shape without axis %d, %s; got %s" % (a, rest, tuple(index.shape)))
    rows = data if a == data.ndim - 1 else data.transpose(*([i for i in range(data.ndim) if i != a] + [a]))
    picked = _plexus.pick(rows.reshape(-1, data.shape[a]), index.reshape(-1)).reshape(rest)
    return expand_dims(picked, a) if keepdims else picked


def tile(a, reps):
    """a repeated as a whole `reps` times along each axis (an int or one per axis), as np.tile. Differentiable."""
    _need_tensor("tile", "a", a)
    import numpy
    reps = (reps,) if isinstance(reps, _numbers.Integral) else tuple(reps)
    if any(isinstance(r, bool) or not isinstance(r, _numbers.Integral) or r < 0 for r in reps):
        raise ValueError("tile: reps are ints of 0 or more, got %r" % (reps,))
    if len(reps) > a.ndim:
        a = a.reshape((1,) * (len(reps) - a.ndim) + tuple(a.shape))
    reps = (1,) * (a.ndim - len(reps)) + reps
    for axis, r in enumerate(reps):
        if r != 1:
            a = a[(slice(None),) * axis + (numpy.tile(numpy.arange(a.shape[axis]), r),)]
    return a


Tensor.cumsum = lambda self, axis=None: cumsum(self, axis)
Tensor.repeat = lambda self, repeats, axis=None: repeat(self, repeats, axis)
Tensor.swapaxes = lambda self, axis1, axis2: swapaxes(self, axis1, axis2)


pi, e, inf, nan, newaxis = 3.141592653589793, 2.718281828459045, float("inf"), float("nan"), None


def square(x):
    """x * x elementwise, as np.square (differentiable)."""
    return _need_tensor("square", "x", x) * x


def power(x1, x2):
    """x1 ** x2 elementwise with broadcasting, as np.power; either may be a number (d2l's
    np.power(10000, np.arange(0, d, 2) / d)). Differentiable."""
    if not isinstance(x1, Tensor) and not isinstance(x2, Tensor):
        raise TypeError("power: one of x1 and x2 is a tensor (for two numbers use Python's **), got %s and %s"
                        % (type(x1).__name__, type(x2).__name__))
    return x1 ** x2


def _reduced_count(who, a, axis):
    """How many elements each result of a reduction of `a` over `axis` (None, an int or a tuple) takes."""
    if axis is None:
        return a.size
    axes = (axis,) if isinstance(axis, _numbers.Integral) and not isinstance(axis, bool) else tuple(axis)
    count = 1
    for ax in {_axis(who, ax, a.ndim) for ax in axes}:
        count *= a.shape[ax]
    return count


def var(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    """The variance over `axis` (None: every element), as np.var (its arguments in its order): the mean of the
    squared deviations from the mean, divided by (count - ddof); integers in float64, or in `dtype`.
    Differentiable."""
    _need_tensor("var", "a", a)
    if out is not None:
        raise TypeError("var: out= is not offered by Plexus; assign the result")
    if isinstance(ddof, bool) or not isinstance(ddof, _numbers.Real) or ddof < 0 or ddof != int(ddof):
        raise ValueError("var: ddof is a whole number >= 0, not %r" % (ddof,))
    ddof = int(ddof)
    name = a._dtype_name
    w = a.astype(dtype) if dtype is not None else \
        a if name.startswith("float") or name == "bfloat16" else a.astype("float64")
    count = _reduced_count("var", w, axis)
    if count - ddof <= 0:
        raise ValueError("var: %d element(s) with ddof=%d leave no degree of freedom" % (count, ddof))
    d = w - w.mean(axis=axis, keepdims=True)
    return (d * d).sum(axis=axis, keepdims=keepdims) / float(count - ddof)


def std(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    """The standard deviation over `axis`, as np.std: the square root of var (same arguments).
    Differentiable (where every element is equal the gradient through the root is 0)."""
    return _root_of(var(a, axis=axis, dtype=dtype, out=out, ddof=ddof, keepdims=keepdims))


Tensor.var = lambda self, axis=None, dtype=None, out=None, ddof=0, keepdims=False: var(self, axis, dtype, out, ddof,
                                                                                       keepdims)
Tensor.std = lambda self, axis=None, dtype=None, out=None, ddof=0, keepdims=False: std(self, axis, dtype, out, ddof,
                                                                                       keepdims)
Tensor.square = square


def linspace(start, stop, num=50, endpoint=True, dtype=None, device=None, ctx=None):
    """num values evenly spaced from start to stop (stop left out when endpoint is False), as np.linspace;
    float32 unless dtype says otherwise, as MXNet's."""
    import numpy
    if isinstance(num, bool) or not isinstance(num, _numbers.Integral) or num < 0:
        raise ValueError("linspace: num is a whole number >= 0, not %r" % (num,))
    values = numpy.linspace(float(start), float(stop), int(num), endpoint=bool(endpoint))
    return array(values, device=device, ctx=ctx, dtype=dtype or "float32")


def eye(N, M=None, k=0, dtype=None, device=None, ctx=None):
    """An N x M (M defaults to N) matrix of zeros with ones on diagonal k, as np.eye; float32 unless dtype
    says otherwise."""
    import numpy
    for name, v in (("N", N), ("M", M), ("k", k)):
        if v is not None and (isinstance(v, bool) or not isinstance(v, _numbers.Integral)):
            raise TypeError("eye: %s is an int, not a %s" % (name, type(v).__name__))
    if N < 0 or (M is not None and M < 0):
        raise ValueError("eye: N and M must be >= 0, got %d and %s" % (N, M))
    return array(numpy.eye(int(N), None if M is None else int(M), int(k)), device=device, ctx=ctx,
                 dtype=dtype or "float32")


def identity(n, dtype=None, device=None, ctx=None):
    """The n x n identity matrix, as np.identity."""
    return eye(n, dtype=dtype, device=device, ctx=ctx)


def meshgrid(*xi, indexing="xy"):
    """Coordinate grids from 1-D tensors, as np.meshgrid: with indexing 'xy' (the default) the first two
    axes of the grids are swapped, as NumPy's. Differentiable."""
    if indexing not in ("xy", "ij"):
        raise ValueError("meshgrid: indexing is 'xy' or 'ij', not %r" % (indexing,))
    for i, x in enumerate(xi):
        _need_tensor("meshgrid", "xi[%d]" % i, x)
    vectors = [x.reshape(-1) for x in xi]
    shape = [v.shape[0] for v in vectors]
    if indexing == "xy" and len(vectors) >= 2:
        shape[0], shape[1] = shape[1], shape[0]
    grids = []
    for i, v in enumerate(vectors):
        at = (1 if i == 0 else 0) if indexing == "xy" and len(vectors) >= 2 and i < 2 else i
        view = [1] * len(vectors)
        view[at] = v.shape[0]
        grids.append(broadcast_to(v.reshape(tuple(view)), tuple(shape)))
    return grids


def transpose(a, axes=None):
    """a with its axes reversed, or in the order `axes` gives, as np.transpose."""
    _need_tensor("transpose", "a", a)
    return a.transpose(*axes) if axes is not None else a.T


def size(a, axis=None):
    """The number of elements of a, or its length along `axis`, as np.size."""
    _need_tensor("size", "a", a)
    return a.size if axis is None else a.shape[_axis("size", axis, a.ndim)]


Tensor.dot = lambda self, b: dot(self, b)


def _iterate(self):
    """The tensor's rows along its first axis, as NumPy's iteration; a 0-d tensor cannot be iterated."""
    if self.ndim == 0:
        raise TypeError("iteration over a 0-d tensor")
    for i in range(self.shape[0]):
        yield self[i]


Tensor.__iter__ = _iterate


def _window(who, name, value, rank, default):
    """`value` as `rank` ints (an int stands for each), or `default` for None."""
    if value is None:
        return (default,) * rank
    values = (value,) * rank if isinstance(value, _numbers.Integral) and not isinstance(value, bool) else tuple(value)
    if len(values) != rank or any(isinstance(v, bool) or not isinstance(v, _numbers.Integral) for v in values):
        raise ValueError("%s: %s is %d int(s) for a %d-D window, got %r" % (who, name, rank, rank, value))
    return tuple(int(v) for v in values)


def _spatial(who, data, kernel):
    """(data as (N, C, H, W), the window's rank: 1 for (N, C, W) data, which runs as (N, C, 1, W))."""
    _need_tensor(who, "data", data)
    if kernel is None:
        raise TypeError("%s: give the window as kernel=(kh, kw), or (k,) for (N, C, W) data" % who)
    rank = 1 if isinstance(kernel, _numbers.Integral) else len(tuple(kernel))
    if rank not in (1, 2) or data.ndim != rank + 2:
        raise ShapeError("%s: a %d-D window takes data of rank %d ((N, C, W) or (N, C, H, W)), got kernel %r and "
                         "data of shape %s" % (who, rank, rank + 2, kernel, tuple(data.shape)))
    return (data.reshape(data.shape[0], data.shape[1], 1, data.shape[2]) if rank == 1 else data), rank


def _lift(values, rank, fill):
    """A 1-D window's values as the 2-D ones the runtime's ops take (height 1)."""
    return (fill,) + values if rank == 1 else values


# MXNet's arguments that only tune how an op runs (or name it in a graph): taken and left alone.
_TUNING_ONLY = ("workspace", "cudnn_tune", "cudnn_off", "name")


def _no_other_arguments(who, kwargs):
    other = sorted(k for k in kwargs if k not in _TUNING_ONLY)
    if other:
        raise TypeError("%s: %s not offered by Plexus (MXNet's stride= and pad= are; Gluon's strides= and padding= "
                        "are the layers')" % (who, ", ".join(other)))


def convolution(data=None, weight=None, bias=None, kernel=None, stride=None, dilate=None, pad=None,
                num_filter=None, num_group=1, no_bias=False, layout=None, **kwargs):
    """npx.convolution: data (N, C, H, W) with weight (num_filter, C, kh, kw) and bias (num_filter,), or (N, C, W)
    data with a (num_filter, C, k) weight and kernel=(k,); stride 1 and pad 0 by default. Differentiable. Dilation,
    groups and layouts other than channels-first are not offered."""
    who = "convolution"
    _no_other_arguments(who, kwargs)
    x, rank = _spatial(who, data, kernel)
    _need_tensor(who, "weight", weight)
    window = _window(who, "kernel", kernel, rank, 1)
    if weight.ndim != rank + 2 or tuple(weight.shape[2:]) != window:
        raise ShapeError("%s: the weight %s does not have the kernel %s after (num_filter, channels)"
                         % (who, tuple(weight.shape), window))
    if num_filter is not None and weight.shape[0] != num_filter:
        raise ShapeError("%s: num_filter=%d, but the weight has %d filters" % (who, num_filter, weight.shape[0]))
    if _window(who, "dilate", dilate, rank, 1) != (1,) * rank or num_group != 1 or layout not in (None, "NCW", "NCHW"):
        raise ValueError("%s: dilate, num_group and layouts other than channels-first are not offered by Plexus"
                         % who)
    w = weight.reshape(weight.shape[0], weight.shape[1], 1, weight.shape[2]) if rank == 1 else weight
    y = _plexus._conv2d(x, w, _lift(_window(who, "stride", stride, rank, 1), rank, 1),
                        _lift(_window(who, "pad", pad, rank, 0), rank, 0))
    if bias is not None and not no_bias:
        _need_tensor(who, "bias", bias)
        y = y + bias.reshape(1, -1, 1, 1)
    return y.reshape(y.shape[0], y.shape[1], y.shape[3]) if rank == 1 else y


def deconvolution(data=None, weight=None, bias=None, kernel=None, stride=None, dilate=None, pad=None, adj=None,
                  target_shape=None, num_filter=None, num_group=1, no_bias=True, layout=None, **kwargs):
    """npx.deconvolution, the transposed convolution (Gluon's Conv2DTranspose): data (N, C, H, W) with weight
    (C, num_filter, kh, kw) -> (N, num_filter, (H - 1) stride - 2 pad + kh + adj, ...); stride 1, pad and adj 0 by
    default; bias (num_filter,) unless no_bias (MXNet's default True). Differentiable; dilation, groups and
    target_shape are not offered."""
    who = "deconvolution"
    _no_other_arguments(who, kwargs)
    _need_tensor(who, "data", data)
    _need_tensor(who, "weight", weight)
    window = _window(who, "kernel", kernel, 2, 1)
    if data.ndim != 4 or weight.ndim != 4 or tuple(weight.shape[2:]) != window or weight.shape[0] != data.shape[1]:
        raise ShapeError("%s: takes data (N, C, H, W) and a weight (C, num_filter, %d, %d), got %s and %s"
                         % (who, window[0], window[1], tuple(data.shape), tuple(weight.shape)))
    if num_filter is not None and weight.shape[1] != num_filter:
        raise ShapeError("%s: num_filter=%d, but the weight has %d" % (who, num_filter, weight.shape[1]))
    if _window(who, "dilate", dilate, 2, 1) != (1, 1) or num_group != 1 or target_shape is not None or \
            layout not in (None, "NCHW"):
        raise ValueError("%s: dilate, num_group, target_shape and layouts other than 'NCHW' are not offered by Plexus"
                         % who)
    y = _plexus._conv2d_transpose(data, weight, _window(who, "stride", stride, 2, 1), _window(who, "pad", pad, 2, 0),
                                  _window(who, "adj", adj, 2, 0))
    if bias is not None and not no_bias:
        _need_tensor(who, "bias", bias)
        y = y + bias.reshape(1, -1, 1, 1)
    return y


def pooling(data=None, kernel=None, pool_type="max", global_pool=False, stride=None, pad=None, layout=None,
            pooling_convention="valid", count_include_pad=True, **kwargs):
    """npx.pooling: the maximum ('max') or the mean ('avg', padding counted, as MXNet's default) of each window of
    (N, C, H, W) data, or of (N, C, W) data with kernel=(k,); stride 1 and pad 0 by default, as MXNet's;
    global_pool takes the whole plane (through the same op: a tie's gradient goes to its first maximum, as
    MXNet's). Differentiable. pooling_convention 'full' and count_include_pad=False are not offered."""
    who = "pooling"
    _no_other_arguments(who, kwargs)
    if pool_type not in ("max", "avg"):
        raise ValueError("%s: pool_type is 'max' or 'avg', not %r" % (who, pool_type))
    if layout not in (None, "NCW", "NCHW"):
        raise ValueError("%s: layouts other than channels-first are not offered by Plexus" % who)
    if pooling_convention != "valid" or count_include_pad is not True:
        raise ValueError("%s: pooling_convention='valid' and count_include_pad=True (MXNet's defaults) are what Plexus "
                         "offers, not %r and %r" % (who, pooling_convention, count_include_pad))
    if global_pool:
        _need_tensor(who, "data", data)
        if data.ndim not in (3, 4):
            raise ShapeError("%s: takes (N, C, W) or (N, C, H, W) data, got shape %s" % (who, tuple(data.shape)))
        kernel, stride, pad = tuple(data.shape[2:]), None, None
    x, rank = _spatial(who, data, kernel)
    y = _plexus._pool2d(pool_type == "max", x, _lift(_window(who, "kernel", kernel, rank, 1), rank, 1),
                        _lift(_window(who, "stride", stride, rank, 1), rank, 1),
                        _lift(_window(who, "pad", pad, rank, 0), rank, 0))
    return y.reshape(y.shape[0], y.shape[1], y.shape[3]) if rank == 1 else y


def mod(x1, x2):
    """The remainder of x1 // x2 for integers, with the sign of x2, as np.mod and Python's % (x1 - (x1 // x2) *
    x2; a divisor of 0 fails on the device, as //). Floats are refused: NumPy's remainder is exact, and one made
    of the rounded quotient can be a whole step off (1 % 0.1)."""
    if not isinstance(x1, Tensor) and not isinstance(x2, Tensor):
        raise TypeError("mod: one of x1 and x2 is a tensor (for two numbers use Python's %%), got %s and %s"
                        % (type(x1).__name__, type(x2).__name__))
    for v in (x1, x2):
        if (isinstance(v, Tensor) and v._dtype_name.startswith(("float", "bfloat"))) or isinstance(v, float):
            raise DTypeError("%% (mod) takes integers, got %s: there is no exact remainder op for floats"
                             % (v._dtype_name if isinstance(v, Tensor) else "a float"))
    return x1 - (x1 // x2) * x2


remainder = mod
Tensor.__mod__ = lambda self, other: mod(self, other)
Tensor.__rmod__ = lambda self, other: mod(other, self)
Tensor.flatten = lambda self: self.reshape(-1)  # NumPy's and MXNet np's: one axis


def _host_values(who, a):
    """a's values as a NumPy array (a wait and a copy; bfloat16 through float32)."""
    _need_tensor(who, "a", a)
    return (a.astype("float32") if a._dtype_name == "bfloat16" else a).asnumpy()


def argsort(a, axis=-1, kind=None, order=None, is_ascend=True):
    """The indices that sort a along `axis` (int64), as np.argsort (stable for equal values); is_ascend=False
    (MXNet's) for descending. Computed on the host, NumPy's sort: a wait and two copies."""
    import numpy
    if order is not None:
        raise TypeError("argsort: order= (structured arrays) is not offered")
    values = _host_values("argsort", a)
    places = numpy.argsort(values if is_ascend else -values, axis=axis, kind="stable")
    return array(places, device=a.device, dtype="int64")


def sort(a, axis=-1, is_ascend=True):
    """a sorted along `axis`, as np.sort (is_ascend=False, MXNet's, for descending): a take of argsort's
    places, so it is differentiable."""
    places = argsort(a, axis=axis, is_ascend=is_ascend)
    return _take_along(a, places, axis)


def _take_along(a, places, axis):
    """a's elements at `places` (of a's shape but along `axis`), as np.take_along_axis; differentiable."""
    import numpy
    axis = _axis("take_along_axis", axis, a.ndim)
    grids = numpy.indices(tuple(places.shape), sparse=True)
    key = tuple(places if k == axis else array(grids[k], device=a.device, dtype="int64") for k in range(a.ndim))
    return a[key]


def topk(data, axis=-1, k=1, ret_typ="indices", is_ascend=False, dtype="float32"):
    """npx.topk: the k largest (is_ascend: smallest) along `axis`: their indices (ret_typ 'indices', in `dtype`,
    float32 by default as MXNet's), values ('value'), both ('both': values, indices) or a 0/1 mask of data's shape
    ('mask'). Sorted by the host, as argsort."""
    if ret_typ not in ("indices", "value", "both", "mask"):
        raise ValueError("topk: ret_typ is 'indices', 'value', 'both' or 'mask', not %r" % (ret_typ,))
    axis = _axis("topk", axis, _need_tensor("topk", "data", data).ndim)
    if isinstance(k, bool) or not isinstance(k, _numbers.Integral) or not 1 <= k <= data.shape[axis]:
        raise ValueError("topk: k is an int in [1, %d] (the axis' length), got %r" % (data.shape[axis], k))
    order = argsort(data, axis=axis, is_ascend=is_ascend)
    places = order[(slice(None),) * axis + (slice(0, k),)]
    if ret_typ == "mask":
        import numpy
        mask = numpy.zeros(tuple(data.shape), dtype=data._dtype_name if data._dtype_name != "bfloat16" else "float32")
        numpy.put_along_axis(mask, places.asnumpy(), 1, axis=axis)
        return array(mask, device=data.device, dtype=data._dtype_name)
    values = _take_along(data, places, axis)
    indices = places.astype(dtype)
    return {"indices": indices, "value": values, "both": [values, indices]}[ret_typ]


def nonzero(a):
    """The indices of a's nonzero elements, one int64 tensor per axis, as np.nonzero (computed on the host: a
    wait)."""
    import numpy
    return tuple(array(i, device=a.device, dtype="int64") for i in numpy.nonzero(_host_values("nonzero", a)))


def unique(ar, return_index=False, return_inverse=False, return_counts=False, axis=None):
    """The sorted unique values of ar, as np.unique (and the indices, inverse and counts asked for, int64);
    computed on the host."""
    import numpy
    out = numpy.unique(_host_values("unique", ar), return_index=return_index, return_inverse=return_inverse,
                       return_counts=return_counts, axis=axis)
    if not isinstance(out, tuple):
        return array(out, device=ar.device, dtype=ar._dtype_name)
    first = array(out[0], device=ar.device, dtype=ar._dtype_name)
    return (first,) + tuple(array(o, device=ar.device, dtype="int64") for o in out[1:])


def flip(m, axis=None):
    """m with the order of its elements reversed along `axis` (every axis for None), as np.flip: a take of the
    reversed places, so it is differentiable."""
    import numpy
    _need_tensor("flip", "m", m)
    axes = range(m.ndim) if axis is None else \
        (axis,) if isinstance(axis, _numbers.Integral) and not isinstance(axis, bool) else axis
    out = m
    for ax in {_axis("flip", a, m.ndim) for a in axes}:
        key = (slice(None),) * ax + (array(numpy.arange(m.shape[ax] - 1, -1, -1), device=m.device, dtype="int64"),)
        out = out[key]
    return out


def split(ary, indices_or_sections, axis=0):
    """np.split: ary cut along `axis` into `indices_or_sections` equal parts (an int that must divide the axis,
    as NumPy's), or at the given indices (a sorted list; parts past the end are empty). Each part is a slice of
    ary, so gradients flow back."""
    _need_tensor("split", "ary", ary)
    ax = _axis("split", axis, ary.ndim)
    n = ary.shape[ax]
    if isinstance(indices_or_sections, _numbers.Integral) and not isinstance(indices_or_sections, bool):
        sections = int(indices_or_sections)
        if sections <= 0:
            raise ValueError("split: the number of sections must be larger than 0, not %d" % sections)
        if n % sections:
            raise ValueError("split: array split does not result in an equal division (%d along axis %d into %d)"
                             % (n, ax, sections))
        bounds = [i * (n // sections) for i in range(1, sections)]
    else:
        import operator
        try:
            bounds = [operator.index(i) for i in indices_or_sections]
        except TypeError:
            raise TypeError("split: indices_or_sections is an int or a sequence of ints, not %r"
                            % (indices_or_sections,)) from None
    edges = [0] + bounds + [n]
    head = (slice(None),) * ax
    return [ary[head + (slice(a, b),)] for a, b in zip(edges[:-1], edges[1:])]


def batch_flatten(x):
    """npx.batch_flatten: x (N, ...) as (N, the product of the rest); a view, differentiable."""
    _need_tensor("batch_flatten", "x", x)
    if x.ndim == 0:
        raise ValueError("batch_flatten: a scalar has no batch axis")
    rest = 1
    for d in x.shape[1:]:
        rest *= d
    return x.reshape((x.shape[0], rest))  # (not -1: a batch of 0 infers nothing)


_numpy_printing = False


def set_printoptions(*args, **kwargs):
    """np.set_printoptions (d2l's set_printoptions(2)): NumPy's print options (precision, suppress, threshold,
    ...), which tensors then print with, as NumPy arrays do; get_printoptions gives them back."""
    import numpy
    global _numpy_printing
    numpy.set_printoptions(*args, **kwargs)
    _numpy_printing = True


def get_printoptions():
    """np.get_printoptions: the print options tensors print with (NumPy's)."""
    import numpy
    return numpy.get_printoptions()


_printed = Tensor.__repr__


def _tensor_repr(self):
    text = _printed(self)  # the values as NumPy's defaults print them, then <Tensor ... @device>
    if not _numpy_printing:
        return text
    import numpy
    shown = self.astype("float32") if self.dtype == "bfloat16" else self  # (NumPy has no bfloat16)
    return numpy.array_str(shown.asnumpy()) + "\n" + text.rsplit("\n", 1)[-1]


Tensor.__repr__ = Tensor.__str__ = _tensor_repr


def smooth_l1(data, scalar=1.0):
    """npx.smooth_l1 (d2l's SSD loss): 0.5 (scalar x)^2 where |x| < 1 / scalar^2, else |x| - 0.5 / scalar^2,
    elementwise; differentiable."""
    _need_tensor("smooth_l1", "data", data)
    s2 = float(scalar) ** 2
    a = data.abs()
    return where(a < 1.0 / s2, (data * data) * (0.5 * s2), a - 0.5 / s2)


Tensor.argsort = lambda self, axis=-1, kind=None, order=None: argsort(self, axis, kind, order)
Tensor.sort = lambda self, axis=-1: sort(self, axis)


_linalg_norm.__name__ = _linalg_norm.__qualname__ = "norm"
# np.linalg, NumPy's submodule, with the names Plexus has (`import plexus.linalg` works too).
linalg = _types.ModuleType(__name__ + ".linalg", "NumPy's linalg names that Plexus has: norm.")
linalg.norm = _linalg_norm
_linalg_norm.__module__ = linalg.__name__
_sys.modules[linalg.__name__] = linalg


# MXNet's module names, so that the seeds' code runs with its import line changed to
# `from plexus import autograd, gluon, np, npx`: np is this module (np.ones, np.arange, ...), npx the
# device and neural-network functions MXNet keeps apart, gluon MXNet's Gluon names (plexus/gluon.py).
np = _sys.modules[__name__]
npx = _types.SimpleNamespace(cpu=cpu, gpu=gpu, num_gpus=num_gpus, set_np=set_np, waitall=waitall, seed=seed,
                             relu=relu, sigmoid=sigmoid, softmax=softmax, log_softmax=log_softmax, pick=pick,
                             one_hot=one_hot, batch_dot=batch_dot, sequence_mask=sequence_mask, save=save, load=load,
                             dropout=dropout, convolution=convolution, deconvolution=deconvolution, pooling=pooling,
                             topk=topk, smooth_l1=smooth_l1, batch_flatten=batch_flatten)
from . import gluon  # noqa: E402 (after the names it uses)
try:  # the image tools need NumPy; the rest of Plexus does not
    import numpy as _numpy_there  # noqa: F401
except ImportError:
    pass
else:
    from . import image, vision  # noqa: E402,F401 (vision makes the loader's transforms callable on one image)
