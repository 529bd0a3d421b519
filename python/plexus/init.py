"""Initializers, as mxnet.init: net.initialize(init.Normal(sigma=0.01)) or init=init.Xavier(). They
set the parameters that have no initializer of their own (weights); biases start at zero, and
BatchNorm's and LayerNorm's gamma and beta at one and zero, whatever the network is given.

One of your own, as Gluon's (d2l's MyInit): subclass Initializer and write the values into `data`
(zeros of the parameter's shape, float32, on its first device) in place:

    class MyInit(init.Initializer):
        def _init_weight(self, name, data):
            data[:] = plexus.random.uniform(-10, 10, data.shape)
            data *= plexus.abs(data) >= 5
"""
from . import _plexus
import numbers as _numbers

from ._plexus.init import Initializer, Xavier, MSRAPrelu, Normal, Uniform, Zero, One
from ._plexus.init import Constant as _constant_number

_describe = Initializer.__repr__


def _repr(self):
    return _describe(self) if type(self) is Initializer else "%s()" % type(self).__name__


Initializer.__repr__ = _repr
_construct = Initializer.__init__


def _init(self, **kwargs):
    """As MXNet's Initializer(**kwargs): a subclass may pass its settings up; they are kept as _kwargs."""
    _construct(self)
    if kwargs:
        self._kwargs = kwargs


Initializer.__init__ = _init


class _ConstantValues(Initializer):
    """Writes the values of an array (broadcast to the parameter's shape), as MXNet's Constant of an array."""

    def __init__(self, values):
        super().__init__()
        self._values = values

    def _init_weight(self, name, data):
        data[...] = self._values

    def __repr__(self):
        return "Constant(array of shape %s)" % (tuple(getattr(self._values, "shape", ())),)


def Constant(value):  # noqa: N802 (MXNet's name)
    """Sets the parameters to `value`: a number, or an array (a tensor, a NumPy array, a list) of the
    parameter's shape or one that broadcasts to it (d2l's FCN: init.Constant(bilinear_kernel(...)))."""
    if isinstance(value, _numbers.Real) and not isinstance(value, bool):
        return _constant_number(float(value))
    from . import Tensor, array
    return _ConstantValues(value if isinstance(value, Tensor) else array(value))

__all__ = ["Initializer", "Xavier", "MSRAPrelu", "Normal", "Uniform", "Constant", "Zero", "One", "create"]

# MXNet's registered names (mx.init.create, initialize(init='xavier')).
_BY_NAME = {"xavier": Xavier, "msraprelu": MSRAPrelu, "normal": Normal, "uniform": Uniform,
            "zeros": Zero, "zero": Zero, "ones": One, "one": One}


def create(init):
    """An Initializer from an Initializer (a subclass written in Python too), a registered name
    ('xavier', 'normal', 'uniform', 'zeros', 'ones', 'msraprelu', any case) or None (Xavier-uniform,
    Plexus's default)."""
    if init is None:
        return Xavier()
    if isinstance(init, Initializer):
        if type(init) is Initializer:
            return init
        if not callable(getattr(init, "_init_weight", None)):
            raise TypeError("%s subclasses plexus.init.Initializer without an _init_weight(self, name, data) method; "
                            "write the parameter's values into data there" % type(init).__name__)
        return _plexus.init._python(init)
    if isinstance(init, str) and init.lower() in _BY_NAME:
        return _BY_NAME[init.lower()]()
    raise ValueError("initializer %r is not an Initializer (plexus.init.Xavier(), Normal(sigma), ...) or one of the "
                     "names %s" % (init, ", ".join(sorted(_BY_NAME))))
