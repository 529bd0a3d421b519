"""Gluon's model_zoo.vision networks as d2l builds on them (fine-tuning, FCN, style transfer): ResNet v1 and
v2 (18, 34) and VGG (11, 13, 16, 19, with or without BatchNorm), with Gluon's layers, `features` and `output`.
Plexus downloads nothing: `pretrained=True` is refused; train the network, or load weights saved by Plexus
with load_parameters. Their parameters are initialized by `initialize()` as any Plexus network (Gluon's VGG
asks for Xavier weights: pass init.Xavier() to initialize)."""
from . import nn as _nn
from .gluon_layers import HybridBlock as _HybridBlock, HybridSequential as _HybridSequential

__all__ = ["get_model", "resnet18_v1", "resnet34_v1", "resnet18_v2", "resnet34_v2", "vgg11", "vgg13", "vgg16",
           "vgg19", "vgg11_bn", "vgg13_bn", "vgg16_bn", "vgg19_bn"]


def _conv3x3(channels, stride, in_channels):
    return _nn.Conv2D(channels, kernel_size=3, strides=stride, padding=1, use_bias=False, in_channels=in_channels)


class BasicBlockV1(_HybridBlock):
    """ResNet v1's block: two 3x3 convolutions, each normalized, added to the input (1x1-projected when it
    changes size), then relu."""

    def __init__(self, channels, stride, downsample=False, in_channels=0):
        super().__init__()
        self.body = _HybridSequential()
        self.body.add(_conv3x3(channels, stride, in_channels), _nn.BatchNorm(), _nn.Activation("relu"),
                      _conv3x3(channels, 1, channels), _nn.BatchNorm())
        if downsample:
            self.downsample = _HybridSequential()
            self.downsample.add(_nn.Conv2D(channels, kernel_size=1, strides=stride, use_bias=False,
                                           in_channels=in_channels), _nn.BatchNorm())
        else:
            self.downsample = None

    def forward(self, x):
        residual = x if self.downsample is None else self.downsample(x)
        return (self.body(x) + residual).relu()


class BasicBlockV2(_HybridBlock):
    """ResNet v2's block: normalization and relu before each 3x3 convolution, the input (1x1-projected after
    the first normalization when it changes size) added at the end."""

    def __init__(self, channels, stride, downsample=False, in_channels=0):
        super().__init__()
        self.bn1 = _nn.BatchNorm()
        self.conv1 = _conv3x3(channels, stride, in_channels)
        self.bn2 = _nn.BatchNorm()
        self.conv2 = _conv3x3(channels, 1, channels)
        if downsample:
            self.downsample = _nn.Conv2D(channels, 1, stride, use_bias=False, in_channels=in_channels)
        else:
            self.downsample = None

    def forward(self, x):
        residual = x
        x = self.bn1(x).relu()
        if self.downsample is not None:
            residual = self.downsample(x)
        x = self.conv1(x)
        x = self.bn2(x).relu()
        return self.conv2(x) + residual


def _layer(block, count, channels, stride, in_channels):
    layer = _HybridSequential()
    layer.add(block(channels, stride, channels != in_channels, in_channels=in_channels))
    for _ in range(count - 1):
        layer.add(block(channels, 1, False, in_channels=channels))
    return layer


def _stem(features, channels, thumbnail):
    if thumbnail:  # for 32x32 inputs (CIFAR)
        features.add(_conv3x3(channels, 1, 0))
    else:
        features.add(_nn.Conv2D(channels, 7, 2, 3, use_bias=False), _nn.BatchNorm(), _nn.Activation("relu"),
                     _nn.MaxPool2D(3, 2, 1))


class ResNetV1(_HybridBlock):
    """Gluon's ResNetV1(block, layers, channels, classes, thumbnail): `features` (stem, stages, global
    average pooling) then `output` (Dense)."""

    def __init__(self, block, layers, channels, classes=1000, thumbnail=False):
        super().__init__()
        self.features = _HybridSequential()
        _stem(self.features, channels[0], thumbnail)
        for i, count in enumerate(layers):
            self.features.add(_layer(block, count, channels[i + 1], 1 if i == 0 else 2, channels[i]))
        self.features.add(_nn.GlobalAvgPool2D())
        self.output = _nn.Dense(classes, in_units=channels[-1])

    def forward(self, x):
        return self.output(self.features(x))


class ResNetV2(_HybridBlock):
    """Gluon's ResNetV2: an input BatchNorm without scale or centre, the stem, the stages, then BatchNorm,
    relu, global average pooling and Flatten in `features`; `output` (Dense)."""

    def __init__(self, block, layers, channels, classes=1000, thumbnail=False):
        super().__init__()
        self.features = _HybridSequential()
        self.features.add(_nn.BatchNorm(scale=False, center=False))
        _stem(self.features, channels[0], thumbnail)
        in_channels = channels[0]
        for i, count in enumerate(layers):
            self.features.add(_layer(block, count, channels[i + 1], 1 if i == 0 else 2, in_channels))
            in_channels = channels[i + 1]
        self.features.add(_nn.BatchNorm(), _nn.Activation("relu"), _nn.GlobalAvgPool2D(), _nn.Flatten())
        self.output = _nn.Dense(classes, in_units=in_channels)

    def forward(self, x):
        return self.output(self.features(x))


class VGG(_HybridBlock):
    """Gluon's VGG(layers, filters, classes, batch_norm): `features` (3x3 convolutions and max pooling, then
    two Dense(4096) with dropout) and `output` (Dense)."""

    def __init__(self, layers, filters, classes=1000, batch_norm=False):
        super().__init__()
        if len(layers) != len(filters):
            raise ValueError("VGG: %d stages of layers and %d of filters" % (len(layers), len(filters)))
        self.features = _HybridSequential()
        for count, channels in zip(layers, filters):
            for _ in range(count):
                self.features.add(_nn.Conv2D(channels, kernel_size=3, padding=1))
                if batch_norm:
                    self.features.add(_nn.BatchNorm())
                self.features.add(_nn.Activation("relu"))
            self.features.add(_nn.MaxPool2D(strides=2))
        self.features.add(_nn.Dense(4096, activation="relu"), _nn.Dropout(0.5), _nn.Dense(4096, activation="relu"),
                          _nn.Dropout(0.5))
        self.output = _nn.Dense(classes)

    def forward(self, x):
        return self.output(self.features(x))


_RESNET = {18: [2, 2, 2, 2], 34: [3, 4, 6, 3]}
_RESNET_CHANNELS = [64, 64, 128, 256, 512]
_VGG = {11: [1, 1, 2, 2, 2], 13: [2, 2, 2, 2, 2], 16: [2, 2, 3, 3, 3], 19: [2, 2, 4, 4, 4]}
_VGG_FILTERS = [64, 128, 256, 512, 512]


def _no_pretrained(name, pretrained, kwargs):
    if pretrained:
        raise ValueError("%s(pretrained=True): Plexus downloads nothing and has no pretrained weights; make the "
                         "network with pretrained=False and train it, or load_parameters() a file Plexus saved"
                         % name)
    kwargs.pop("ctx", None), kwargs.pop("device", None), kwargs.pop("root", None)  # where Gluon keeps its weights


def _resnet(version, depth):
    name = "resnet%d_v%d" % (depth, version)

    def make(pretrained=False, classes=1000, thumbnail=False, **kwargs):
        _no_pretrained(name, pretrained, kwargs)
        if kwargs:
            raise TypeError("%s: %s not offered" % (name, ", ".join(sorted(kwargs))))
        net = (ResNetV1, ResNetV2)[version - 1]
        return net((BasicBlockV1, BasicBlockV2)[version - 1], _RESNET[depth], _RESNET_CHANNELS, classes, thumbnail)

    make.__name__ = make.__qualname__ = name
    make.__doc__ = "Gluon's %s: ResNet-%d v%d (classes, thumbnail for 32x32 inputs)." % (name, depth, version)
    return make


def _vgg(depth, batch_norm):
    name = "vgg%d%s" % (depth, "_bn" if batch_norm else "")

    def make(pretrained=False, classes=1000, **kwargs):
        _no_pretrained(name, pretrained, kwargs)
        if kwargs:
            raise TypeError("%s: %s not offered" % (name, ", ".join(sorted(kwargs))))
        return VGG(_VGG[depth], _VGG_FILTERS, classes, batch_norm)

    make.__name__ = make.__qualname__ = name
    make.__doc__ = "Gluon's %s: VGG-%d%s (classes)." % (name, depth, " with BatchNorm" if batch_norm else "")
    return make


resnet18_v1, resnet34_v1 = _resnet(1, 18), _resnet(1, 34)
resnet18_v2, resnet34_v2 = _resnet(2, 18), _resnet(2, 34)
vgg11, vgg13, vgg16, vgg19 = (_vgg(d, False) for d in (11, 13, 16, 19))
vgg11_bn, vgg13_bn, vgg16_bn, vgg19_bn = (_vgg(d, True) for d in (11, 13, 16, 19))
_MODELS = {f.__name__: f for f in (resnet18_v1, resnet34_v1, resnet18_v2, resnet34_v2, vgg11, vgg13, vgg16, vgg19,
                                   vgg11_bn, vgg13_bn, vgg16_bn, vgg19_bn)}


def get_model(name, **kwargs):
    """The network named (model_zoo.vision.get_model('resnet18_v2', classes=10))."""
    if name.lower() not in _MODELS:
        raise ValueError("get_model: %r is not one of Plexus's models (%s)" % (name, ", ".join(sorted(_MODELS))))
    return _MODELS[name.lower()](**kwargs)
