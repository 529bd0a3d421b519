"""Initializers, as mxnet.init: net.initialize(init.Normal(sigma=0.01)) or init=init.Xavier(). They
set the parameters that have no initializer of their own (weights); biases start at zero, and
BatchNorm's and LayerNorm's gamma and beta at one and zero, whatever the network is given."""
from ._plexus.init import Initializer, Xavier, MSRAPrelu, Normal, Uniform, Constant, Zero, One

__all__ = ["Initializer", "Xavier", "MSRAPrelu", "Normal", "Uniform", "Constant", "Zero", "One", "create"]

# MXNet's registered names (mx.init.create, initialize(init='xavier')).
_BY_NAME = {"xavier": Xavier, "msraprelu": MSRAPrelu, "normal": Normal, "uniform": Uniform,
            "zeros": Zero, "zero": Zero, "ones": One, "one": One}


def create(init):
    """An Initializer from an Initializer, a registered name ('xavier', 'normal', 'uniform', 'zeros',
    'ones', 'msraprelu', any case) or None (Xavier-uniform, Plexus's default)."""
    if init is None:
        return Xavier()
    if isinstance(init, Initializer):
        return init
    if isinstance(init, str) and init.lower() in _BY_NAME:
        return _BY_NAME[init.lower()]()
    raise ValueError("initializer %r is not an Initializer (plexus.init.Xavier(), Normal(sigma), ...) or one of the "
                     "names %s" % (init, ", ".join(sorted(_BY_NAME))))
