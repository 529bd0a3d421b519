"""Gluon's gluon.data.vision: the image transforms, each callable on one image as d2l's image-augmentation
chapter calls them (`aug(img)`), and the datasets read from files (CIFAR10, ImageFolderDataset).

A transform takes an image (H, W, C) (a tensor or a NumPy array; ToTensor makes it (C, H, W) float32 in
[0, 1], Normalize works on that) and gives a tensor on the image's device. The four plexus.data.transforms
(ToTensor, Normalize, RandomCrop, RandomFlipLeftRight) also run inside the DataLoader's prefetch thread on
whole batches, where a dataset's transform_first of only them puts them; any other transform makes
transform_first apply the transforms sample by sample in Python. Random choices come from NumPy's global
generator (numpy.random.seed repeats them). The pixel work is NumPy's, on the host."""
import math as _math
import os as _os

import numpy as _numpy

from . import data as _data
from . import image as _image

_t = _data.transforms


def _host(img, call):
    """img as a NumPy (H, W, C) array, its device, and whether it came as (H, W) (given back so)."""
    from . import Tensor
    ndim = img.ndim if isinstance(img, Tensor) else _numpy.ndim(img)
    a, device = _image._host(img, call)
    if a.shape[0] == 0 or a.shape[1] == 0:
        raise ValueError("%s: the image is empty (shape %s)" % (call, tuple(a.shape)))
    return a, (device, ndim == 2)


def _back(a, where):
    device, flat = where
    return _image._back(a[:, :, 0] if flat and a.ndim == 3 and a.shape[2] == 1 else a, device)


def _pixels(f, a):
    """f of a's pixels in float32, back in a's dtype (uint8 rounded and clipped)."""
    return _image._cast_like(f(a.astype(_numpy.float32)), a)


# ---- the plexus.data.transforms, callable on one image ----

def _to_tensor(self, img):
    """(H, W, C) or (N, H, W, C) uint8 (or float) as (C, H, W) or (N, C, H, W) float32 divided by 255."""
    from . import Tensor, array, cpu
    device = img.device if isinstance(img, Tensor) else None
    a = img.asnumpy() if isinstance(img, Tensor) else _numpy.asarray(img)
    if a.ndim == 2:
        a = a[:, :, None]
    if a.ndim not in (3, 4):
        raise ValueError("ToTensor: an image is (H, W, C) or a batch (N, H, W, C), got shape %s" % (a.shape,))
    out = _numpy.moveaxis(a.astype(_numpy.float32) / 255.0, -1, -3)
    return array(_numpy.ascontiguousarray(out), device=device or cpu(), dtype="float32")


def _normalize(self, img):
    """(C, H, W) or (N, C, H, W) float: (x - mean[c]) / std[c] for each channel c."""
    from . import Tensor, array, cpu
    device = img.device if isinstance(img, Tensor) else None
    a = img.asnumpy() if isinstance(img, Tensor) else _numpy.asarray(img)
    if a.ndim not in (3, 4) or a.dtype.kind != "f":
        raise ValueError("Normalize: the image is (C, H, W) or (N, C, H, W) floats (after ToTensor), got %s of "
                         "shape %s" % (a.dtype, a.shape))
    c = a.shape[-3]
    mean, std = (_numpy.asarray(v, dtype=a.dtype) for v in (self.mean, self.std))
    for name, v in (("mean", mean), ("std", std)):
        if v.size not in (1, c):
            raise ValueError("Normalize: %d %s values for %d channels" % (v.size, name, c))
    shape = (-1, 1, 1)
    return array((a - mean.reshape(shape)) / std.reshape(shape), device=device or cpu(), dtype=a.dtype.name)


def _random_crop(self, img):
    """A random height x width part of (H, W, C) img, after `padding` zeros on each side."""
    a, device = _host(img, "RandomCrop")
    p = self.padding
    if p:
        a = _numpy.pad(a, ((p, p), (p, p), (0, 0)))
    H, W = a.shape[:2]
    if self.height > H or self.width > W:
        raise ValueError("RandomCrop: a %dx%d crop of a %dx%d image (padded)" % (self.height, self.width, H, W))
    y0 = int(_numpy.random.randint(0, H - self.height + 1))
    x0 = int(_numpy.random.randint(0, W - self.width + 1))
    return _back(a[y0:y0 + self.height, x0:x0 + self.width], device)


def _flip_left_right(self, img):
    """(H, W, C) img mirrored left to right, with probability p."""
    a, device = _host(img, "RandomFlipLeftRight")
    return _back(a[:, ::-1] if _numpy.random.rand() < self.p else a, device)


_t.ToTensor.__call__ = _to_tensor
_t.Normalize.__call__ = _normalize
_t.RandomCrop.__call__ = _random_crop
_t.RandomHorizontalFlip.__call__ = _flip_left_right
NATIVE = (_t.ToTensor, _t.Normalize, _t.RandomCrop, _t.RandomHorizontalFlip)


# ---- transforms only Python runs ----

class Compose(list):
    """transforms.Compose([...]): the transforms in order; callable as one."""

    def __call__(self, img):
        for t in self:
            img = t(img)
        return img


class _Transform:
    def __repr__(self):
        return "%s(%s)" % (type(self).__name__, ", ".join("%s=%r" % kv for kv in vars(self).items()))


def _check_range(call, name, v):
    import numbers
    if isinstance(v, bool) or not isinstance(v, numbers.Real) or not 0 <= v < float("inf"):
        raise ValueError("%s: %s is a finite number >= 0, not %r" % (call, name, v))
    return float(v)


def _pair(call, name, v):
    try:
        low, high = (float(x) for x in v)
    except (TypeError, ValueError):
        raise ValueError("%s: %s is a pair (low, high), not %r" % (call, name, v)) from None
    return low, high


class RandomFlipTopBottom(_Transform):
    """(H, W, C) img mirrored top to bottom, with probability 0.5."""

    def __call__(self, img):
        a, device = _host(img, "RandomFlipTopBottom")
        return _back(a[::-1] if _numpy.random.rand() < 0.5 else a, device)


def _wh(size, call):
    if isinstance(size, (int, _numpy.integer)) and not isinstance(size, bool):
        return _image._size(size, size, call)
    try:
        w, h = size
    except (TypeError, ValueError):
        raise ValueError("%s: size is an int or (width, height), not %r" % (call, size)) from None
    return _image._size(w, h, call)


class Resize(_Transform):
    """(H, W, C) img resized to size (w, h), bilinearly; an int is a square, or with keep_ratio the shorter
    side."""

    def __init__(self, size, keep_ratio=False, interpolation=1):
        _image._interp(interpolation, "Resize")
        self.size, self.keep_ratio = size, bool(keep_ratio)
        _wh(size, "Resize")

    def __call__(self, img):
        a, device = _host(img, "Resize")
        w, h = _wh(self.size, "Resize")
        if self.keep_ratio and isinstance(self.size, (int, _numpy.integer)):
            H, W = a.shape[:2]
            # Gluon's: the other side truncated (int(), not rounded)
            w, h = (self.size, max(1, int(self.size * H / W))) if W <= H else (max(1, int(self.size * W / H)),
                                                                             self.size)
        return _back(_image.resized(a, w, h), device)


class CenterCrop(_Transform):
    """The centre of (H, W, C) img of size (w, h) (an int: a square); a smaller image is resized up."""

    def __init__(self, size, interpolation=1):
        _image._interp(interpolation, "CenterCrop")
        self.size = size
        _wh(size, "CenterCrop")

    def __call__(self, img):
        a, device = _host(img, "CenterCrop")
        return _back(_centre(a, _wh(self.size, "CenterCrop"), "CenterCrop"), device)


def _centre(a, size, call):
    """The centre of NumPy image a at size (w, h), as image.center_crop takes it."""
    H, W = a.shape[:2]
    cw, ch = _image._fitted(W, H, *size)
    return _image.cropped(a, (W - cw) // 2, (H - ch) // 2, cw, ch, size, call)


class RandomResizedCrop(_Transform):
    """A random part of (H, W, C) img with an area of `scale` of the image's and an aspect ratio (w / h) in
    `ratio` (drawn on a log scale), resized to size (w, h), as Gluon's (ten tries, then the centre)."""

    def __init__(self, size, scale=(0.08, 1.0), ratio=(3.0 / 4.0, 4.0 / 3.0), interpolation=1):
        _image._interp(interpolation, "RandomResizedCrop")
        _wh(size, "RandomResizedCrop")
        scale, ratio = _pair("RandomResizedCrop", "scale", scale), _pair("RandomResizedCrop", "ratio", ratio)
        if not (0 < scale[0] <= scale[1] <= 1):
            raise ValueError("RandomResizedCrop: scale is (low, high) with 0 < low <= high <= 1, not %r" % (scale,))
        if not (0 < ratio[0] <= ratio[1] < float("inf")):
            raise ValueError("RandomResizedCrop: ratio is (low, high) with 0 < low <= high, not %r" % (ratio,))
        self.size, self.scale, self.ratio = size, scale, ratio

    def __call__(self, img):
        a, device = _host(img, "RandomResizedCrop")
        H, W = a.shape[:2]
        size = _wh(self.size, "RandomResizedCrop")
        for _ in range(10):
            area = H * W * _numpy.random.uniform(*self.scale)
            aspect = _math.exp(_numpy.random.uniform(_math.log(self.ratio[0]), _math.log(self.ratio[1])))
            w, h = int(round(_math.sqrt(area * aspect))), int(round(_math.sqrt(area / aspect)))
            if 0 < w <= W and 0 < h <= H:
                x0 = int(_numpy.random.randint(0, W - w + 1))
                y0 = int(_numpy.random.randint(0, H - h + 1))
                return _back(_image.cropped(a, x0, y0, w, h, size, "RandomResizedCrop"), device)
        return _back(_centre(a, size, "RandomResizedCrop"), device)


_GRAY = _numpy.array([0.299, 0.587, 0.114], dtype=_numpy.float32)


def _rgb(f):
    if f.shape[-1] != 3:
        raise ValueError("the colour transforms take RGB images (H, W, 3), got %d channels" % f.shape[-1])
    return f


def _gray(f):
    """The luma of float RGB pixels (..., 3), as (..., 1)."""
    return (_rgb(f) @ _GRAY)[..., None]


def brightness(a, alpha):
    """a's pixels times alpha."""
    return _pixels(lambda f: f * alpha, a)


def contrast(a, alpha):
    """a's pixels moved toward (alpha < 1) or away from its mean luma."""
    return _pixels(lambda f: f * alpha + _gray(f).mean() * (1 - alpha), a)


def saturation(a, alpha):
    """a's pixels moved toward (alpha < 1) or away from their own luma."""
    return _pixels(lambda f: f * alpha + _gray(f) * (1 - alpha), a)


_TO_YIQ = _numpy.array([[0.299, 0.587, 0.114], [0.596, -0.274, -0.321], [0.211, -0.523, 0.311]])
_FROM_YIQ = _numpy.array([[1.0, 0.956, 0.621], [1.0, -0.272, -0.647], [1.0, -1.107, 1.705]])


def hue(a, alpha):
    """a's hues turned by alpha * 180 degrees: a rotation of the chroma plane of YIQ, as MXNet's."""
    u, w = _math.cos(alpha * _math.pi), _math.sin(alpha * _math.pi)
    turn = _FROM_YIQ @ _numpy.array([[1.0, 0.0, 0.0], [0.0, u, -w], [0.0, w, u]]) @ _TO_YIQ
    return _pixels(lambda f: _rgb(f) @ turn.T.astype(_numpy.float32), a)


class _RandomColor(_Transform):
    def __init__(self, amount):
        self.amount = _check_range(type(self).__name__, "the amount", amount)

    def __call__(self, img):
        a, device = _host(img, type(self).__name__)
        # Gluon's: the factor from [max(0, 1 - amount), 1 + amount]
        return _back(self.adjust(a, _numpy.random.uniform(max(0.0, 1.0 - self.amount), 1.0 + self.amount)), device)


class RandomBrightness(_RandomColor):
    """Pixels times U(max(0, 1 - brightness), 1 + brightness)."""
    adjust = staticmethod(brightness)

    def __init__(self, brightness):
        super().__init__(brightness)


class RandomContrast(_RandomColor):
    """Contrast scaled by U(max(0, 1 - contrast), 1 + contrast) about the image's mean luma."""
    adjust = staticmethod(contrast)

    def __init__(self, contrast):
        super().__init__(contrast)


class RandomSaturation(_RandomColor):
    """Saturation scaled by U(max(0, 1 - saturation), 1 + saturation)."""
    adjust = staticmethod(saturation)

    def __init__(self, saturation):
        super().__init__(saturation)


class RandomHue(_Transform):
    """Hues turned by U(-hue, hue) * 180 degrees."""

    def __init__(self, hue):
        self.hue = _check_range("RandomHue", "hue", hue)

    def __call__(self, img):
        a, device = _host(img, "RandomHue")
        return _back(hue(a, _numpy.random.uniform(-self.hue, self.hue)), device)


class RandomColorJitter(_Transform):
    """Brightness, contrast, saturation and hue jittered as the four transforms do, in a random order (those
    given as 0 left out)."""

    def __init__(self, brightness=0, contrast=0, saturation=0, hue=0):
        given = ((RandomBrightness, "brightness", brightness), (RandomContrast, "contrast", contrast),
                 (RandomSaturation, "saturation", saturation), (RandomHue, "hue", hue))
        self.parts = [kind(v) for kind, name, v in given if _check_range("RandomColorJitter", name, v) > 0]

    def __call__(self, img):
        if not self.parts:  # nothing to jitter: the image, as a tensor as the others give it
            return _back(*_host(img, "RandomColorJitter"))
        for k in _numpy.random.permutation(len(self.parts)):
            img = self.parts[k](img)
        return img


class RandomLighting(_Transform):
    """AlexNet's PCA lighting noise: the RGB eigenvectors of ImageNet's pixels, each scaled by its
    eigenvalue and a N(0, alpha) draw, added to every pixel."""
    _EIGVAL = _numpy.array([55.46, 4.794, 1.148])
    _EIGVEC = _numpy.array([[-0.5675, 0.7192, 0.4009], [-0.5808, -0.0045, -0.8140], [-0.5836, -0.6948, 0.4203]])

    def __init__(self, alpha):
        self.alpha = _check_range("RandomLighting", "alpha", alpha)

    def __call__(self, img):
        a, device = _host(img, "RandomLighting")
        rgb = (self._EIGVEC @ (_numpy.random.normal(0, self.alpha, 3) * self._EIGVAL)).astype(_numpy.float32)
        return _back(_pixels(lambda f: _rgb(f) + rgb, a), device)


class Cast(_Transform):
    """The image in another dtype."""

    def __init__(self, dtype="float32"):
        self.dtype = dtype

    def __call__(self, img):
        from . import Tensor, array
        return img.astype(self.dtype) if isinstance(img, Tensor) else array(_numpy.asarray(img), dtype=self.dtype)


def gluon_random_crop(size, pad=None, pad_value=0, interpolation=2):
    """Gluon's transforms.RandomCrop(size, pad=None): a random `size` (w, h) part (an int: a square) of the
    image padded by `pad` zeros on each side; the loader's RandomCrop, which takes (height, width)."""
    w, h = _wh(size, "RandomCrop")
    if pad_value != 0:
        raise ValueError("RandomCrop: pad_value=%r is not offered; Plexus pads with zeros" % (pad_value,))
    if pad is not None and (isinstance(pad, bool) or not isinstance(pad, (int, _numpy.integer)) or pad < 0):
        raise ValueError("RandomCrop: pad is a whole number >= 0 (the same on every side), not %r" % (pad,))
    return _t.RandomCrop((h, w), int(pad or 0))


transforms = __import__("types").SimpleNamespace(
    Compose=Compose, ToTensor=_t.ToTensor, Normalize=_t.Normalize, RandomCrop=gluon_random_crop,
    RandomFlipLeftRight=_t.RandomHorizontalFlip, RandomFlipTopBottom=RandomFlipTopBottom, Resize=Resize,
    CenterCrop=CenterCrop, RandomResizedCrop=RandomResizedCrop, RandomBrightness=RandomBrightness,
    RandomContrast=RandomContrast, RandomSaturation=RandomSaturation, RandomHue=RandomHue,
    RandomColorJitter=RandomColorJitter, RandomLighting=RandomLighting, Cast=Cast)


def flattened(fn):
    """The transforms fn stands for: a Compose's (nested ones too), or fn itself."""
    if isinstance(fn, (list, tuple)):
        return [t for part in fn for t in flattened(part)]
    return [fn]


class TransformedDataset(_data.Dataset):
    """A dataset with fn applied sample by sample in Python: to each sample's data (its first field) for
    Gluon's transform_first, when fn has transforms the DataLoader's thread does not run; to the whole sample
    (its fields as fn's arguments) for Gluon's transform."""

    def __init__(self, dataset, fn, first=True):
        self._dataset, self._first = dataset, first
        self._fn = fn if callable(fn) else Compose(flattened(fn))

    def __len__(self):
        return len(self._dataset)

    def __getitem__(self, idx):
        sample = self._dataset[idx]
        if not isinstance(sample, tuple):
            return self._fn(sample)
        if self._first:
            return (self._fn(sample[0]),) + tuple(sample[1:])
        return self._fn(*sample)


# ---- datasets read from files ----

class CIFAR10(_data.Dataset):
    """Gluon's CIFAR10(root, train): the 'CIFAR-10 binary version' files (data_batch_1.bin ... data_batch_5.bin,
    test_batch.bin) in `root` or its cifar-10-batches-bin folder. Plexus downloads nothing: fetch and unpack
    cifar-10-binary.tar.gz there. Sample i is an (32, 32, 3) uint8 image tensor and its int32 label."""

    def __init__(self, root=_os.path.join("~", ".mxnet", "datasets", "cifar10"), train=True, transform=None):
        if transform is not None:
            raise TypeError("CIFAR10: transform= is Gluon 1's; use .transform_first(transforms)")
        root = _os.path.expanduser(_os.fspath(root))
        names = ["data_batch_%d.bin" % i for i in range(1, 6)] if train else ["test_batch.bin"]
        folder = next((f for f in (root, _os.path.join(root, "cifar-10-batches-bin"))
                       if all(_os.path.isfile(_os.path.join(f, n)) for n in names)), None)
        if folder is None:
            raise FileNotFoundError("CIFAR10: %s not found in %s (or its cifar-10-batches-bin folder); Plexus "
                                    "downloads nothing: unpack the CIFAR-10 binary version there"
                                    % (", ".join(names), root))
        records = []
        for n in names:
            raw = _numpy.fromfile(_os.path.join(folder, n), dtype=_numpy.uint8)
            if raw.size % 3073:
                raise ValueError("CIFAR10: %s is not whole records of 1 + 3072 bytes (%d bytes)"
                                 % (_os.path.join(folder, n), raw.size))
            records.append(raw.reshape(-1, 3073))
        rows = _numpy.concatenate(records)
        self._label = rows[:, 0].astype(_numpy.int32)
        if self._label.size and self._label.max() > 9:
            raise ValueError("CIFAR10: a label %d is not one of the 10 classes" % self._label.max())
        self._data = _numpy.ascontiguousarray(rows[:, 1:].reshape(-1, 3, 32, 32).transpose(0, 2, 3, 1))

    def __len__(self):
        return len(self._label)

    def __getitem__(self, idx):
        from . import array
        return array(self._data[idx], dtype="uint8"), self._label[idx]


class ImageFolderDataset(_data.Dataset):
    """Gluon's ImageFolderDataset(root, flag): every image file in root's subfolders, labelled by its folder
    (synsets: the folder names, sorted); sample i is (imread(path, flag), label). Files that are not .jpg,
    .jpeg, .png, .bmp or .gif are left out, as Gluon leaves them."""
    _EXTENSIONS = (".jpg", ".jpeg", ".png", ".bmp", ".gif")

    def __init__(self, root, flag=1, transform=None):
        if transform is not None:
            raise TypeError("ImageFolderDataset: transform= is Gluon 1's; use .transform_first(transforms)")
        _image._flag(flag, "ImageFolderDataset")
        self._root, self._flag = _os.path.expanduser(_os.fspath(root)), flag
        if not _os.path.isdir(self._root):
            raise FileNotFoundError("ImageFolderDataset: %s is not a folder" % self._root)
        self.synsets, self.items = [], []
        for name in sorted(_os.listdir(self._root)):
            path = _os.path.join(self._root, name)
            if not _os.path.isdir(path):
                continue
            label = len(self.synsets)
            self.synsets.append(name)
            for f in sorted(_os.listdir(path)):
                if f.lower().endswith(self._EXTENSIONS):
                    self.items.append((_os.path.join(path, f), label))

    def __len__(self):
        return len(self.items)

    def __getitem__(self, idx):
        path, label = self.items[idx]
        return _image.imread(path, self._flag), _numpy.int32(label)
