"""Gluon's layers written in Python: those over one spatial axis and the global max pooling (d2l's TextCNN:
Conv1D, GlobalMaxPool1D), the transposed convolution (d2l's FCN and DCGAN: Conv2DTranspose), and Gluon's
hybrid names. Written with npx.convolution, npx.deconvolution and npx.pooling, which run a (N, C, W) input as
a (N, C, 1, W) image through the runtime's 2-D ops, so they are differentiable and run on any device; the
weights have Gluon's shapes."""
import numbers as _numbers

from . import _plexus as _native
from .nn import Block, Parameter, Sequential, _not_a_tensor

__all__ = ["Conv1D", "Conv2DTranspose", "MaxPool1D", "AvgPool1D", "GlobalMaxPool1D", "GlobalAvgPool1D",
           "GlobalMaxPool2D", "HybridBlock", "HybridSequential"]


def _one(who, name, value, least):
    """An int of at least `least`, or a 1-tuple of one (Gluon takes both for a 1-D layer)."""
    if isinstance(value, (tuple, list)) and len(value) == 1:
        value = value[0]
    if isinstance(value, bool) or not isinstance(value, _numbers.Integral) or value < least:
        raise ValueError("%s: %s must be an int of at least %d (or a 1-tuple of one), got %r"
                         % (who, name, least, value))
    return int(value)


def _three_axes(who, x):
    if not isinstance(x, _native.Tensor):
        raise _not_a_tensor("%s(x)" % who, "x", x)
    if x.ndim != 3:
        raise _native.ShapeError("%s: takes (batch, channels, width) inputs (layout 'NCW'), got shape %s"
                                 % (who, tuple(x.shape)))
    return x


class _Convolution(Block):
    """What Conv1D and Conv2DTranspose share: a weight whose in_channels axis (`_in_axis`) may be inferred at the
    first call, a bias, an activation."""
    _in_axis = 1

    def _make_parameters(self, shape, use_bias, activation, weight_initializer, bias_initializer):
        self._activation = None if activation is None else _native.nn.Activation(activation)
        deferred = shape[self._in_axis] == 0
        self.weight = Parameter._deferred("weight", shape, weight_initializer) if deferred else \
            Parameter("weight", shape, weight_initializer)
        if use_bias:
            self.bias = Parameter("bias", (self._channels,), bias_initializer)
        self._use_bias = bool(use_bias)

    def _parameters_for(self, x):
        """(weight, bias or None) on x's device, the weight's in_channels inferred from x's, or checked."""
        who, have = type(self).__name__, self.weight.shape
        if have[self._in_axis] == 0:
            shape = list(have)
            shape[self._in_axis] = x.shape[1]
            self.weight._infer_shape(tuple(shape))
        elif have[self._in_axis] != x.shape[1]:
            raise _native.ShapeError("%s: the input has %d channels, and the layer takes %d (in_channels, or its "
                                     "first call's)" % (who, x.shape[1], have[self._in_axis]))
        return self.weight.data(x.device), self.bias.data(x.device) if self._use_bias else None

    def _activated(self, y):
        return self._activation(y) if self._activation is not None else y


class Conv1D(_Convolution):
    """A convolution over the last axis of (batch, in_channels, width) inputs, as Gluon's nn.Conv1D (arguments
    in its order; dilation, groups and other layouts than 'NCW' are not offered): weight (channels,
    in_channels, kernel_size) and bias (channels,); in_channels 0 is inferred at the first call."""

    def __init__(self, channels, kernel_size, strides=1, padding=0, dilation=1, groups=1, layout="NCW",
                 activation=None, use_bias=True, weight_initializer=None, bias_initializer="zeros", in_channels=0):
        super().__init__()
        who = "Conv1D"
        self._channels = _one(who, "channels", channels, 1)
        self._kernel = _one(who, "kernel_size", kernel_size, 1)
        self._stride = _one(who, "strides", strides, 1)
        self._pad = _one(who, "padding", padding, 0)
        if _one(who, "dilation", dilation, 1) != 1 or _one(who, "groups", groups, 1) != 1 or layout != "NCW":
            raise ValueError("Conv1D: dilation, groups and layouts other than 'NCW' are not offered by Plexus "
                             "(got dilation=%r, groups=%r, layout=%r)" % (dilation, groups, layout))
        self._make_parameters((self._channels, _one(who, "in_channels", in_channels, 0), self._kernel), use_bias,
                              activation, weight_initializer, bias_initializer)

    def describe(self):
        """As Gluon prints it: Conv1D(4 -> 8, kernel_size=(3,), stride=(1,))."""
        return "Conv1D(%s -> %d, kernel_size=(%d,), stride=(%d,)%s)" % (
            self.weight.shape[1] or "None", self._channels, self._kernel, self._stride,
            ", padding=(%d,)" % self._pad if self._pad else "")

    def forward(self, x):
        from . import convolution
        weight, bias = self._parameters_for(_three_axes("Conv1D", x))
        return self._activated(convolution(x, weight, bias, kernel=(self._kernel,), stride=(self._stride,),
                                           pad=(self._pad,), num_filter=self._channels, no_bias=bias is None))


def _two(who, name, value, least):
    """(h, w) from an int or a pair, each at least `least`."""
    values = (value, value) if isinstance(value, _numbers.Integral) and not isinstance(value, bool) else tuple(value)
    if len(values) != 2 or any(isinstance(v, bool) or not isinstance(v, _numbers.Integral) or v < least
                               for v in values):
        raise ValueError("%s: %s is an int or a pair of ints, each at least %d, got %r" % (who, name, least, value))
    return tuple(int(v) for v in values)


class Conv2DTranspose(_Convolution):
    """The transposed convolution, as Gluon's nn.Conv2DTranspose (arguments in its order; dilation, groups and
    other layouts than 'NCHW' are not offered): (N, in_channels, H, W) -> (N, channels, (H - 1) strides -
    2 padding + kernel_size + output_padding, ...); weight (in_channels, channels, kh, kw), bias (channels,);
    in_channels 0 is inferred at the first call."""
    _in_axis = 0

    def __init__(self, channels, kernel_size, strides=(1, 1), padding=(0, 0), output_padding=(0, 0),
                 dilation=(1, 1), groups=1, layout="NCHW", activation=None, use_bias=True, weight_initializer=None,
                 bias_initializer="zeros", in_channels=0):
        super().__init__()
        who = "Conv2DTranspose"
        self._channels = _one(who, "channels", channels, 1)
        self._kernel = _two(who, "kernel_size", kernel_size, 1)
        self._stride = _two(who, "strides", strides, 1)
        self._pad = _two(who, "padding", padding, 0)
        self._output_pad = _two(who, "output_padding", output_padding, 0)
        if _two(who, "dilation", dilation, 1) != (1, 1) or _one(who, "groups", groups, 1) != 1 or layout != "NCHW":
            raise ValueError("Conv2DTranspose: dilation, groups and layouts other than 'NCHW' are not offered by "
                             "Plexus (got dilation=%r, groups=%r, layout=%r)" % (dilation, groups, layout))
        self._make_parameters((_one(who, "in_channels", in_channels, 0), self._channels) + self._kernel, use_bias,
                              activation, weight_initializer, bias_initializer)

    def describe(self):
        """As Gluon prints it: Conv2DTranspose(4 -> 8, kernel_size=(4, 4), stride=(2, 2), padding=(1, 1))."""
        return "Conv2DTranspose(%s -> %d, kernel_size=%s, stride=%s%s)" % (
            self.weight.shape[0] or "None", self._channels, self._kernel, self._stride,
            ", padding=%s" % (self._pad,) if any(self._pad) else "")

    def forward(self, x):
        from . import deconvolution
        if not isinstance(x, _native.Tensor):
            raise _not_a_tensor("Conv2DTranspose(x)", "x", x)
        if x.ndim != 4:
            raise _native.ShapeError("Conv2DTranspose: takes (batch, channels, height, width) inputs, got shape %s"
                                     % (tuple(x.shape),))
        weight, bias = self._parameters_for(x)
        return self._activated(deconvolution(x, weight, bias, kernel=self._kernel, stride=self._stride, pad=self._pad,
                                             adj=self._output_pad, num_filter=self._channels, no_bias=bias is None))


class _Pool1D(Block):
    _type = "max"

    def __init__(self, pool_size=2, strides=None, padding=0, layout="NCW", ceil_mode=False, count_include_pad=True):
        super().__init__()
        who = type(self).__name__
        self._size = _one(who, "pool_size", pool_size, 1)
        self._stride = self._size if strides is None else _one(who, "strides", strides, 1)
        self._pad = _one(who, "padding", padding, 0)
        if layout != "NCW" or ceil_mode or count_include_pad is not True:
            raise ValueError("%s: layouts other than 'NCW', ceil_mode and count_include_pad=False are not offered by "
                             "Plexus" % who)

    def describe(self):
        return "%s(size=(%d,), stride=(%d,), padding=(%d,))" % (type(self).__name__, self._size, self._stride,
                                                                 self._pad)

    def forward(self, x):
        from . import pooling
        return pooling(_three_axes(type(self).__name__, x), kernel=(self._size,), pool_type=self._type,
                       stride=(self._stride,), pad=(self._pad,))


class MaxPool1D(_Pool1D):
    """The maximum of each window over the last axis, as Gluon's nn.MaxPool1D (strides default to pool_size)."""
    _type = "max"


class AvgPool1D(_Pool1D):
    """The mean of each window over the last axis (padding counted), as Gluon's nn.AvgPool1D."""
    _type = "avg"


class _GlobalPool(Block):
    _axes = (2,)
    _max = True

    def __init__(self, layout=None):
        super().__init__()
        if layout not in (None, "NCW", "NCHW"):
            raise ValueError("%s: layout %r is not offered by Plexus (channels come second)"
                             % (type(self).__name__, layout))

    def describe(self):
        return "%s()" % type(self).__name__

    def forward(self, x):
        who = type(self).__name__
        if not isinstance(x, _native.Tensor):
            raise _not_a_tensor("%s(x)" % who, "x", x)
        if x.ndim != 2 + len(self._axes):
            raise _native.ShapeError("%s: takes inputs of rank %d (batch, channels, ...), got shape %s"
                                     % (who, 2 + len(self._axes), tuple(x.shape)))
        # Gluon keeps the pooled axes as ones: (batch, channels, 1) or (batch, channels, 1, 1). The pooling op
        # over the whole plane: a tie's gradient goes to its first maximum, as MaxPool's and MXNet's.
        from . import pooling
        return pooling(x, pool_type="max" if self._max else "avg", global_pool=True)


class GlobalMaxPool1D(_GlobalPool):
    """The maximum over the last axis, as Gluon's nn.GlobalMaxPool1D: (batch, channels, 1)."""


class GlobalAvgPool1D(_GlobalPool):
    """The mean over the last axis, as Gluon's nn.GlobalAvgPool1D: (batch, channels, 1)."""
    _max = False


class GlobalMaxPool2D(_GlobalPool):
    """The maximum over the last two axes, as Gluon's nn.GlobalMaxPool2D: (batch, channels, 1, 1)."""
    _axes = (2, 3)


def _hybridize(self, active=True, **kwargs):
    """Gluon's hybridize: MXNet compiles the block's graph; Plexus runs each op as it is called, always, so
    this changes nothing (results are the same as MXNet's either way). Its options are taken and ignored."""


Block.hybridize = _hybridize


def _export(self, path, epoch=0, **kwargs):
    raise NotImplementedError("%s.export: Plexus has no compiled graph to export (hybridize changes nothing); save "
                              "the parameters with save_parameters(path) and rebuild the network in code"
                              % type(self).__name__)


Block.export = _export


class HybridBlock(Block):
    """Gluon's HybridBlock, a Block here (hybridize changes nothing). A subclass writes forward(self, x, ...),
    as Gluon 2's; one written for Gluon 1 with hybrid_forward(self, F, x, ..., **params) gets F = plexus (the
    np names) and its own parameters' data by name, on x's device."""

    def forward(self, *args):
        if type(self).hybrid_forward is HybridBlock.hybrid_forward:
            raise NotImplementedError("%s: define forward(self, x) (or Gluon 1's hybrid_forward(self, F, x))"
                                      % type(self).__name__)
        import plexus
        device = next((a.device for a in args if isinstance(a, _native.Tensor)), None)
        own = {name: p.data(device) if device is not None else p.data()
               for name, p in vars(self).items() if isinstance(p, Parameter)}
        return self.hybrid_forward(plexus, *args, **own)

    def hybrid_forward(self, F, x, *args, **kwargs):
        """Gluon 1's form of forward: define it, or forward."""
        raise NotImplementedError


class HybridSequential(Sequential):
    """Gluon's HybridSequential: a Sequential (hybridize changes nothing)."""
