"""Tensors exchanged with NumPy and PyTorch through DLPack: every dtype both ways, strides and views,
the versioned and unversioned protocols, lifetimes, and what is refused. Today every exchange copies
(no plugin shares its buffers yet: docs/python.md), so these tests also hold that: the flags say
'copied', writes do not travel, copy=False is refused with the reason."""
import gc
import sys

import pytest

import plexus
from conftest import need

DTYPES = ["float32", "float64", "int32", "int64", "uint8"]


def sample(np, dtype):
    return np.array([[0, 1, 2], [3, 100, 255 if dtype == "uint8" else -7]], dtype=dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_numpy_to_plexus_and_back_every_dtype(dtype):
    np = need("numpy")
    a = sample(np, dtype)
    t = plexus.from_dlpack(a)
    assert t.dtype == np.dtype(dtype) and t.shape == (2, 3) and t.device == plexus.cpu(0)
    assert t.tolist() == a.tolist()
    b = np.from_dlpack(t)
    assert b.dtype == np.dtype(dtype) and (b == a).all()
    assert t.__dlpack_device__() == (1, 0)


@pytest.mark.parametrize("dtype", DTYPES)
def test_torch_to_plexus_and_back_every_dtype(dtype):
    np, torch = need("numpy"), need("torch")
    a = torch.from_numpy(sample(np, dtype))
    t = plexus.from_dlpack(a)
    assert t.dtype == np.dtype(dtype) and t.tolist() == a.tolist()
    b = torch.from_dlpack(t)
    assert b.dtype == a.dtype and torch.equal(b, a)
    # The legacy entry point takes the capsule itself.
    c = torch.utils.dlpack.from_dlpack(t.__dlpack__())
    assert torch.equal(c, a)


def test_strided_sources_are_read_with_their_strides():
    np, torch = need("numpy"), need("torch")
    base = np.arange(48, dtype=np.float64).reshape(6, 8)  # (NumPy 1.24 exports no read-only array: broadcasts below via torch)
    for view in (base.T, base[::2, 1::3], base[1:5, 2:7], base[:, ::-1]):
        assert plexus.from_dlpack(view).tolist() == view.tolist()
    tb = torch.arange(60, dtype=torch.float32).reshape(3, 4, 5)
    for view in (tb.permute(2, 0, 1), tb[:, 1:3, ::2], tb.transpose(0, 1)[1], tb.expand(2, 3, 4, 5)[1]):
        assert plexus.from_dlpack(view).tolist() == view.tolist()


def test_plexus_views_go_out_with_their_own_elements():
    np = need("numpy")
    x = plexus.arange(24, dtype="int32").reshape(4, 3, 2)
    rows = x[1:3]  # a view at an offset in x's memory
    assert np.from_dlpack(rows).tolist() == np.arange(6, 18).reshape(2, 3, 2).tolist()
    assert np.from_dlpack(x[3]).tolist() == [[18, 19], [20, 21], [22, 23]]
    scalar = plexus.full((), 2.5, dtype="float64")
    assert np.from_dlpack(scalar).shape == () and float(np.from_dlpack(scalar)) == 2.5


def test_versioned_and_unversioned_capsules_by_max_version():
    np = need("numpy")
    t = plexus.arange(4)
    ctypes = pytest.importorskip("ctypes")
    name = ctypes.pythonapi.PyCapsule_GetName
    name.restype, name.argtypes = ctypes.c_char_p, [ctypes.py_object]
    assert name(t.__dlpack__()) == b"dltensor"
    assert name(t.__dlpack__(max_version=(0, 8))) == b"dltensor"
    v = t.__dlpack__(max_version=(1, 1))
    assert name(v) == b"dltensor_versioned"
    back = plexus.from_dlpack(v)  # Plexus reads its own versioned capsules
    assert back.tolist() == [0.0, 1.0, 2.0, 3.0]
    assert name(v) == b"used_dltensor_versioned"
    with pytest.raises(ValueError, match="already consumed"):
        plexus.from_dlpack(v)
    assert (np.from_dlpack(t) == np.arange(4, dtype=np.float32)).all()


def test_today_every_exchange_is_a_copy_and_no_copy_is_refused_with_the_reason():
    np, torch = need("numpy"), need("torch")
    t = plexus.zeros(3)
    a = torch.from_dlpack(t)
    a[0] = 5  # a copy: the tensor keeps its values
    assert t.tolist() == [0.0, 0.0, 0.0]
    assert not np.from_dlpack(t).flags.writeable  # NumPy 1.24 marks what it imports read-only
    src = np.zeros(3, dtype=np.float32)
    u = plexus.from_dlpack(src)
    src[1] = 7
    assert u.tolist() == [0.0, 0.0, 0.0]
    with pytest.raises(BufferError, match="PX_DLPACK_COPY_NEVER: sharing the memory of a tensor on cpu.0. "
                                          "without a copy needs its plugin 'cpu' to share buffer memory"):
        t.__dlpack__(copy=False)
    with pytest.raises(BufferError, match="importing memory onto cpu.0. without a copy"):
        plexus.from_dlpack(np.ones(2), copy=False)
    assert plexus.from_dlpack(torch.ones(2), copy=True).tolist() == [1.0, 1.0]
    with pytest.raises(BufferError, match="stream must be None for host memory"):
        t.__dlpack__(stream=5)
    with pytest.raises(BufferError, match="dl_device .2, 0. is not offered"):
        t.__dlpack__(dl_device=(2, 0))


def test_what_plexus_has_no_dtype_for_is_refused():
    np, torch = need("numpy"), need("torch")
    with pytest.raises(plexus.DTypeError, match=r"DLPack dtype float16 \(code 2\) has no Plexus dtype"):
        plexus.from_dlpack(np.ones(2, dtype=np.float16))
    with pytest.raises(TypeError, match=r"DLPack dtype complex64 \(code 5\)"):
        plexus.from_dlpack(torch.ones(2, dtype=torch.complex64))
    with pytest.raises(TypeError, match="int16"):
        plexus.from_dlpack(torch.ones(2, dtype=torch.int16))
    with pytest.raises(ValueError, match="not a DLPack capsule"):
        plexus.from_dlpack(object())


def test_lifetimes_consumer_outlives_producer_and_unconsumed_capsules_are_freed():
    np, torch = need("numpy"), need("torch")
    t = plexus.arange(1000, dtype="float64")
    a = np.from_dlpack(t)
    b = torch.from_dlpack(t)
    del t
    gc.collect()
    assert a[999] == 999.0 and b[999].item() == 999.0
    # The producer's memory goes first on import: it was copied.
    src = np.arange(10, dtype=np.int64)
    u = plexus.from_dlpack(src)
    del src
    gc.collect()
    assert u.tolist() == list(range(10))
    # A capsule never consumed frees its tensor (its destructor calls the deleter; ASan checks the rest).
    for _ in range(100):
        plexus.ones(1000).__dlpack__()
        plexus.ones(10).__dlpack__(max_version=(1, 0))
    gc.collect()
    # torch keeps the capsule's memory until its tensor goes.
    keep = torch.from_dlpack(plexus.full((5,), 3.0).__dlpack__())
    gc.collect()
    assert keep.tolist() == [3.0] * 5
    assert sys.getrefcount(keep) >= 2


def test_an_export_waits_for_the_work_that_makes_the_tensor():
    np = need("numpy")
    x = plexus.full((512, 512), 0.5)
    p = x @ x  # queued; the export must wait for it
    assert (np.from_dlpack(p) == 128.0).all()
