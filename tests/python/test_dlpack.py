"""Tensors exchanged with NumPy and PyTorch through DLPack: every dtype both ways, strides and views,
the versioned and unversioned protocols, lifetimes, and what is refused. The CPU plugin shares its
buffers and takes foreign memory (plugin ABI 1.5), so exchanges share memory: the same address, and
writes visible on both sides (docs/python.md); what Plexus cannot describe is copied, and copy=False
then says why."""
import ctypes
import gc
import sys
import weakref

import pytest

import plexus
from conftest import need

DTYPES = ["float32", "float64", "int32", "int64", "uint8", "float16"]
PX_DEVICE_CPU, PX_FLOAT64 = 1, 2  # types.h


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


def address(np, a):
    return a.__array_interface__["data"][0]


@pytest.mark.parametrize("dtype", DTYPES)
def test_numpy_plexus_torch_share_one_memory_every_dtype(dtype):
    np, torch = need("numpy"), need("torch")
    a = sample(np, dtype)
    t = plexus.from_dlpack(a)  # NumPy -> Plexus: wraps a's memory
    b = np.from_dlpack(t)      # Plexus -> NumPy: the same memory again
    w = torch.from_dlpack(t)   # Plexus -> PyTorch (the unversioned capsule)
    assert address(np, b) == address(np, a) == w.data_ptr()
    a[0, 1] = 9                # NumPy writes: Plexus, PyTorch and the other array see it
    assert t.tolist()[0][1] == 9 and w[0, 1].item() == 9 and b[0, 1] == 9
    w[1, 0] = 7                # PyTorch writes into the memory Plexus exported: NumPy sees it
    assert a[1, 0] == 7 and t.tolist()[1][0] == 7 and b[1, 0] == 7


@pytest.mark.parametrize("dtype", DTYPES)
def test_torch_to_plexus_shares_and_plexus_to_torch_shares(dtype):
    np, torch = need("numpy"), need("torch")
    x = torch.from_numpy(sample(np, dtype))
    t = plexus.from_dlpack(x)
    y = torch.from_dlpack(t)
    assert y.data_ptr() == x.data_ptr()
    x[0, 0] = 3
    assert t.tolist()[0][0] == 3 and y[0, 0].item() == 3
    y[1, 2] = 4
    assert x[1, 2].item() == 4 and t.tolist()[1][2] == 4


def test_views_go_out_at_their_offset_in_the_tensor_memory():
    np, torch = need("numpy"), need("torch")
    x = plexus.arange(24, dtype="float32").reshape(4, 6)
    whole, rows = np.from_dlpack(x), torch.from_dlpack(x[1:3])
    assert rows.data_ptr() == address(np, whole) + 6 * 4
    rows[0, 0] = -1
    assert whole[1, 0] == -1 and x.tolist()[1][0] == -1


def test_what_cannot_be_shared_is_copied_and_copy_false_says_why():
    np, torch = need("numpy"), need("torch")
    base = np.arange(12, dtype=np.float32).reshape(3, 4)
    for view, why in ((base.T, "its strides are not compact row-major"),
                      (base[:, ::-1], "its strides are not compact row-major")):
        with pytest.raises(BufferError) as e:
            plexus.from_dlpack(view, copy=False)
        assert str(e.value) == ("from_dlpack: copy=False: importing memory onto cpu(0) without a copy: " + why +
                                ", which a Plexus tensor cannot describe; leave copy=None to let Plexus copy")
        before = view.tolist()
        c = plexus.from_dlpack(view)  # copied
        base[0, 0] += 100
        assert c.tolist() == before
        base[0, 0] -= 100
    u = plexus.from_dlpack(np.ones(3), copy=True)  # asked to copy
    assert u.tolist() == [1.0, 1.0, 1.0]
    src = np.zeros(3, dtype=np.float32)
    v = plexus.from_dlpack(src, copy=True)
    src[0] = 5
    assert v.tolist() == [0.0, 0.0, 0.0]
    t = plexus.zeros(3)
    a = torch.from_dlpack(t.__dlpack__(copy=True))  # a copy
    a[0] = 5
    assert t.tolist() == [0.0, 0.0, 0.0]
    assert torch.from_dlpack(t.__dlpack__(copy=False)).data_ptr() == address(np, np.from_dlpack(t))
    with pytest.raises(BufferError, match="stream must be None for host memory"):
        t.__dlpack__(stream=5)
    with pytest.raises(BufferError, match="dl_device .2, 0. is not offered"):
        t.__dlpack__(dl_device=(2, 0))


def test_shared_memory_lives_as_long_as_its_last_user():
    np, torch = need("numpy"), need("torch")
    # Export: the consumers outlive the Plexus tensor.
    t = plexus.arange(1000, dtype="float64")
    a, b = np.from_dlpack(t), torch.from_dlpack(t)
    del t
    gc.collect()
    assert a[999] == 999.0 and b[999].item() == 999.0
    b[0] = -1
    assert a[0] == -1
    # Import: Plexus keeps the producer's array alive until its last tensor (a view too) goes.
    src = np.arange(10, dtype=np.int64)
    gone = weakref.ref(src.base if src.base is not None else src)
    u = plexus.from_dlpack(src)
    tail = u[5:]
    del src, u
    gc.collect()
    assert gone() is not None and tail.tolist() == [5, 6, 7, 8, 9]
    del tail
    gc.collect()
    assert gone() is None


def test_an_export_outlives_the_runtime_that_made_it():
    """A runtime of its own through the C API (ctypes): its tensor exported, then the tensor released
    and the runtime destroyed before NumPy and PyTorch read and write the memory."""
    np, torch = need("numpy"), need("torch")
    with open("/proc/self/maps") as maps:  # the libplexus the module uses
        path = next(line.split()[-1] for line in maps if "/libplexus.so" in line)
    lib = ctypes.CDLL(path)
    lib.px_last_error.restype = ctypes.c_char_p

    class Device(ctypes.Structure):
        _fields_ = [("kind", ctypes.c_int32), ("index", ctypes.c_int32)]

    rt, t, m = ctypes.c_void_p(), ctypes.c_void_p(), ctypes.c_void_p()
    assert lib.px_runtime_create(None, ctypes.byref(rt)) == 0, lib.px_last_error()
    shape = (ctypes.c_int64 * 1)(4)
    assert lib.px_tensor_full(rt, Device(PX_DEVICE_CPU, 0), PX_FLOAT64, 1, shape, ctypes.c_double(2.5),
                              ctypes.byref(t)) == 0, lib.px_last_error()
    assert lib.px_tensor_to_dlpack_unversioned(t, 1, ctypes.byref(m)) == 0, lib.px_last_error()
    assert lib.px_tensor_release(t) == 0 and lib.px_runtime_destroy(rt) == 0
    new_capsule = ctypes.pythonapi.PyCapsule_New
    new_capsule.restype, new_capsule.argtypes = ctypes.py_object, [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
    x = torch.utils.dlpack.from_dlpack(new_capsule(m, b"dltensor", None))  # torch calls the deleter
    assert x.tolist() == [2.5] * 4
    x[1] = 7
    assert x.tolist() == [2.5, 7.0, 2.5, 2.5]
    del x
    gc.collect()


def test_bfloat16_is_shared_with_torch_both_ways():
    torch = need("torch")
    a = torch.tensor([[1.0, -2.5], [1 / 3, 3e38]], dtype=torch.bfloat16)
    t = plexus.from_dlpack(a)
    assert t.dtype == "bfloat16" and t.shape == (2, 2)
    assert t.tolist() == a.float().tolist()  # through float32, exactly
    b = torch.from_dlpack(t)
    assert b.dtype == torch.bfloat16 and torch.equal(a, b)
    b[0, 0] = 4  # one memory
    assert t.tolist()[0][0] == 4.0 and a[0, 0].item() == 4.0
    with pytest.raises(plexus.DTypeError, match="bfloat16 has no NumPy type"):
        t.asnumpy()


def test_what_plexus_has_no_dtype_for_is_refused():
    np, torch = need("numpy"), need("torch")
    with pytest.raises(plexus.DTypeError, match=r"DLPack dtype complex64 \(code 5\) has no Plexus dtype; Plexus has "
                                                r"float32, float64, int32, int64, uint8, float16, bfloat16"):
        plexus.from_dlpack(np.ones(2, dtype=np.complex64))
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
    # The producer's array may go first on import: Plexus holds it.
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


def test_from_dlpack_and_dlpack_take_their_arguments_as_python_functions_do():
    np = need("numpy")
    import inspect
    assert str(inspect.signature(plexus.from_dlpack)) == "(x, device=None, copy=None)"
    assert str(inspect.signature(plexus.Tensor.__dlpack__)) == "(self, /, stream=None, max_version=None, " \
                                                              "dl_device=None, copy=None)"
    a = np.arange(3, dtype=np.float32)
    assert plexus.from_dlpack(a, plexus.cpu(0), False).tolist() == [0, 1, 2]
    assert plexus.from_dlpack(x=a, copy=True, device=plexus.cpu(0)).tolist() == [0, 1, 2]
    with pytest.raises(TypeError, match=r"from_dlpack\(\) missing required argument 'x'"):
        plexus.from_dlpack()
    with pytest.raises(TypeError, match=r"from_dlpack\(\) takes at most 3 arguments \(4 given\)"):
        plexus.from_dlpack(a, None, None, None)
    with pytest.raises(TypeError, match=r"from_dlpack\(\) got an unexpected keyword argument 'ctx'"):
        plexus.from_dlpack(a, ctx=plexus.cpu(0))
    with pytest.raises(TypeError, match=r"from_dlpack\(\) got multiple values for argument 'device'"):
        plexus.from_dlpack(a, plexus.cpu(0), device=plexus.cpu(0))
    with pytest.raises(TypeError, match=r"device must be a Plexus device .* not 'cpu'"):
        plexus.from_dlpack(a, device="cpu")
    t = plexus.arange(2)
    with pytest.raises(TypeError, match=r"__dlpack__\(\) got an unexpected keyword argument 'strem'"):
        t.__dlpack__(strem=None)
    with pytest.raises(TypeError, match=r"__dlpack_device__\(\) takes no arguments \(1 given\)"):
        t.__dlpack_device__(1)
    # NumPy 1.24 calls them on the type, with the tensor as the first argument.
    assert plexus.Tensor.__dlpack_device__(t) == (1, 0)


def test_from_dlpack_follows_what_a_producer_speaks_and_passes_on_its_errors():
    np = need("numpy")

    class Old:  # DLPack 0.x: no max_version, and no __dlpack_device__
        calls = 0

        def __init__(self, a):
            self.a = a

        def __dlpack__(self, stream=None):
            Old.calls += 1
            return self.a.__dlpack__()

    for i in range(3):  # the first exchange learns that Old speaks 0.x; the later ones ask once
        assert plexus.from_dlpack(Old(np.full(2, i, dtype=np.int32))).tolist() == [i, i]
    assert Old.calls == 3

    class Refusing:
        def __dlpack_device__(self):
            return (1, 0)

        def __dlpack__(self, stream=None, max_version=None):
            raise BufferError("not today")

    with pytest.raises(BufferError, match="not today"):
        plexus.from_dlpack(Refusing())

    class BrokenDevice:
        def __dlpack_device__(self):
            raise RuntimeError("no device here")

        def __dlpack__(self, stream=None, max_version=None):
            raise AssertionError("not reached")

    with pytest.raises(RuntimeError, match="no device here"):
        plexus.from_dlpack(BrokenDevice())


def test_values_from_another_import_of_the_same_memory_are_read_before_they_are_overwritten():
    # Two imports of one NumPy array are two Plexus buffers over the same bytes: x[1:] = y[:-1] had raced over
    # the overlap (31 wrong elements of 2**20, one at each of the CPU plugin's chunk edges).
    np = need("numpy")
    a = np.arange(1 << 20, dtype=np.float32)
    want = a.copy()
    want[1:] = want[:-1].copy()
    x, y = plexus.from_dlpack(a), plexus.from_dlpack(a)
    x[1:] = y[:-1]
    assert np.array_equal(x.asnumpy(), want)
    assert np.array_equal(a, want)  # the same memory
    b = np.arange(1 << 20, dtype=np.float32)
    x, y = plexus.from_dlpack(b), plexus.from_dlpack(b)
    row = x[1:]
    row[...] = y[:-1]  # through a view of one import
    plexus.waitall()  # (NumPy reads the memory without waiting)
    assert np.array_equal(b, want)
