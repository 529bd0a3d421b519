"""MXNet's image module as d2l uses it (`from plexus import image`): images are (H, W, C) uint8 tensors on
cpu(0), C = 3 (RGB) or 1 (grayscale); sizes are (width, height), as MXNet's. Decoding goes through Pillow
(Debian's python3-pil; the README's set-up installs it). Resizing is bilinear, as OpenCV's INTER_LINEAR and
PyTorch's interpolate(align_corners=False); the work is NumPy's, on the host."""
import numpy as _numpy

__all__ = ["imread", "imdecode", "imresize", "resize_short", "fixed_crop", "center_crop", "random_crop",
           "color_normalize"]


def _pil(call):
    try:
        from PIL import Image
    except ImportError:
        raise ImportError("%s decodes images through Pillow, which is not installed: apt-get install python3-pil "
                          "(Debian) or pip install pillow" % call) from None
    return Image


def _host(src, call):
    """src (a tensor or a NumPy array of rank 2 or 3) as a NumPy (H, W, C) array, and the tensor's device."""
    from . import Tensor
    device = None
    if isinstance(src, Tensor):
        device, src = src.device, src.asnumpy()
    a = _numpy.asarray(src)
    if a.ndim == 2:
        a = a[:, :, None]
    if a.ndim != 3:
        raise ValueError("%s: an image is (H, W) or (H, W, C), got shape %s" % (call, tuple(a.shape)))
    return a, device


def _back(a, device):
    from . import array, cpu
    return array(_numpy.ascontiguousarray(a), device=device or cpu(), dtype=a.dtype.name)


def _decoded(image, flag, to_rgb):
    """A Pillow image as (H, W, 3) RGB (BGR when not to_rgb, as OpenCV's) or (H, W, 1) gray uint8; 16-bit
    samples are scaled to 8 bits (value / 256), as OpenCV's IMREAD_COLOR (Pillow's convert would clip them)."""
    if image.mode.startswith("I;16") or image.mode == "I":
        wide = _numpy.asarray(image).astype(_numpy.int64)
        image = _pil("imread").fromarray(_numpy.clip(wide >> 8, 0, 255).astype(_numpy.uint8), "L")
    if flag == 0:
        return _numpy.asarray(image.convert("L"), dtype=_numpy.uint8)[:, :, None]
    a = _numpy.asarray(image.convert("RGB"), dtype=_numpy.uint8)
    return a if to_rgb else a[:, :, ::-1]


def _decode(open_image, what, call):
    """The decoded image open_image() gives, or a ValueError naming `what` when Pillow cannot read it whole."""
    Image = _pil(call)
    try:
        with open_image(Image) as image:
            image.load()
            return image
    except (Image.UnidentifiedImageError, OSError, SyntaxError) as e:
        raise ValueError("%s: %s is not an image Pillow can decode (%s)" % (call, what, e)) from None


def _flag(flag, call):
    if flag not in (0, 1):
        raise ValueError("%s: flag is 1 (colour) or 0 (grayscale), not %r" % (call, flag))


def imread(filename, flag=1, to_rgb=True):
    """The image in a file (JPEG, PNG, BMP, GIF, ...) as an (H, W, 3) uint8 tensor (flag=0: (H, W, 1) gray)."""
    from ._paths import existing_file
    _flag(flag, "imread")
    path = existing_file(filename, "imread")
    return _back(_decoded(_decode(lambda Image: Image.open(path), path, "imread"), flag, to_rgb), None)


def imdecode(buf, flag=1, to_rgb=True):
    """An encoded image (the bytes of a JPEG or PNG file) decoded, as imread."""
    import io
    _flag(flag, "imdecode")
    if not isinstance(buf, (bytes, bytearray, memoryview)):
        raise TypeError("imdecode: buf is the bytes of an encoded image, not a %s" % type(buf).__name__)
    data = bytes(buf)
    image = _decode(lambda Image: Image.open(io.BytesIO(data)), "the %d bytes" % len(data), "imdecode")
    return _back(_decoded(image, flag, to_rgb), None)


def _size(w, h, call):
    for name, v in (("width", w), ("height", h)):
        if isinstance(v, bool) or not isinstance(v, (int, _numpy.integer)) or v < 1:
            raise ValueError("%s: the %s is a whole number >= 1, not %r" % (call, name, v))
    return int(w), int(h)


def resized(a, w, h):
    """NumPy (H, W, C) array `a` resized to (h, w, C) bilinearly: each output pixel's centre maps back to
    (x + 0.5) * W / w - 0.5 in the input (clamped to its edges), as OpenCV's INTER_LINEAR and PyTorch's
    interpolate(mode='bilinear', align_corners=False); uint8 rounds to nearest."""
    H, W = a.shape[:2]

    def taps(n_out, n_in):
        src = _numpy.clip((_numpy.arange(n_out) + 0.5) * (n_in / n_out) - 0.5, 0, n_in - 1)
        lo = _numpy.floor(src).astype(_numpy.int64)
        return lo, _numpy.minimum(lo + 1, n_in - 1), (src - lo).astype(_numpy.float32)

    y0, y1, wy = taps(h, H)
    x0, x1, wx = taps(w, W)
    f = a.astype(_numpy.float32)
    wx = wx[None, :, None]
    top = f[y0][:, x0] * (1 - wx) + f[y0][:, x1] * wx
    bottom = f[y1][:, x0] * (1 - wx) + f[y1][:, x1] * wx
    out = top * (1 - wy[:, None, None]) + bottom * wy[:, None, None]
    return _cast_like(out, a)


def _cast_like(out, a):
    """Float pixels back into a's dtype: rounded and clipped for integers."""
    if a.dtype == _numpy.uint8:
        return _numpy.clip(_numpy.rint(out), 0, 255).astype(_numpy.uint8)
    return out.astype(a.dtype)


def imresize(src, w, h, interp=1):
    """src resized to width w and height h (bilinear: interp 1, MXNet's default; the others are refused)."""
    _interp(interp, "imresize")
    w, h = _size(w, h, "imresize")
    a, device = _host(src, "imresize")
    return _back(resized(a, w, h), device)


def resize_short(src, size, interp=1):
    """src resized so that its shorter side is `size`, keeping its aspect ratio."""
    _interp(interp, "resize_short")
    a, device = _host(src, "resize_short")
    H, W = a.shape[:2]
    w, h = (size, int(size * H / W)) if H > W else (int(size * W / H), size)
    return _back(resized(a, *_size(w, h, "resize_short")), device)


def _interp(interp, call):
    if interp != 1:
        raise ValueError("%s: interp=%r is not offered; Plexus resizes bilinearly (interp=1)" % (call, interp))


def cropped(a, x0, y0, w, h, size=None, call="fixed_crop"):
    """NumPy (H, W, C) array a's w x h pixels from (x0, y0), resized to `size` (w, h) when given."""
    H, W = a.shape[:2]
    w, h = _size(w, h, call)
    if not (0 <= x0 and 0 <= y0 and x0 + w <= W and y0 + h <= H):
        raise ValueError("%s: %dx%d from (%d, %d) is outside the %dx%d image" % (call, w, h, x0, y0, W, H))
    out = a[y0:y0 + h, x0:x0 + w]
    if size is not None and tuple(size) != (w, h):
        out = resized(out, *_size(size[0], size[1], call))
    return out


def fixed_crop(src, x0, y0, w, h, size=None, interp=1):
    """src's w x h pixels from (x0, y0), resized to `size` (w, h) when given."""
    _interp(interp, "fixed_crop")
    a, device = _host(src, "fixed_crop")
    return _back(cropped(a, x0, y0, w, h, size), device)


def _fitted(W, H, w, h):
    """The largest part of a W x H image with w:h's aspect ratio, at most w x h."""
    scale = min(W / w, H / h, 1.0)
    return max(1, int(w * scale)), max(1, int(h * scale))


def center_crop(src, size, interp=1):
    """The centre of src of `size` (w, h), and its rectangle (x0, y0, w, h); an image smaller than that is
    cropped to the size's aspect ratio and resized up, as MXNet's."""
    _interp(interp, "center_crop")
    a, device = _host(src, "center_crop")
    H, W = a.shape[:2]
    w, h = _size(size[0], size[1], "center_crop")
    cw, ch = _fitted(W, H, w, h)
    x0, y0 = (W - cw) // 2, (H - ch) // 2
    return _back(cropped(a, x0, y0, cw, ch, (w, h), "center_crop"), device), (x0, y0, cw, ch)


def random_crop(src, size, interp=1):
    """A random `size` (w, h) part of src, and its rectangle (x0, y0, w, h); an image smaller than that is
    cropped to the size's aspect ratio and resized up, as MXNet's. The place comes from NumPy's global
    generator (numpy.random.seed repeats it)."""
    _interp(interp, "random_crop")
    a, device = _host(src, "random_crop")
    H, W = a.shape[:2]
    w, h = _size(size[0], size[1], "random_crop")
    cw, ch = _fitted(W, H, w, h)
    x0 = int(_numpy.random.randint(0, W - cw + 1))
    y0 = int(_numpy.random.randint(0, H - ch + 1))
    return _back(cropped(a, x0, y0, cw, ch, (w, h), "random_crop"), device), (x0, y0, cw, ch)


def color_normalize(src, mean, std=None):
    """(src - mean) / std, per channel (the last axis), as float32."""
    a, device = _host(src, "color_normalize")
    out = a.astype(_numpy.float32) - _numpy.asarray(mean, dtype=_numpy.float32)
    if std is not None:
        out = out / _numpy.asarray(std, dtype=_numpy.float32)
    return _back(out, device)
