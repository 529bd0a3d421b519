"""Tensors on GPUs from Python: the CUDA plugin on the CUDA emulator (CTest sets PLEXUS_PLUGIN_PATH to
it and PLEXUS_TEST_GPUS=2), or real GPUs. __dlpack_device__ says (kDLCUDA, ordinal); __dlpack__ shares the
device pointer (kDLCUDA), or gives a host copy when asked with dl_device=(kDLCPU, 0); a kDLCUDA tensor
comes back onto its GPU sharing the memory; host memory goes onto a GPU as a copy."""
import os

import pytest

import plexus
from conftest import need

KDLCPU, KDLCUDA = 1, 2


@pytest.fixture(scope="module", autouse=True)
def gpus():
    wanted = int(os.environ.get("PLEXUS_TEST_GPUS", "0"))
    if wanted == 0 and plexus.num_gpus() == 0:
        pytest.skip("no GPU: run by CTest with the CUDA emulator (PLEXUS_TEST_GPUS=2)")
    assert plexus.num_gpus() >= max(wanted, 1), "PLEXUS_TEST_GPUS=%d but %d GPUs" % (wanted, plexus.num_gpus())


def test_gpu_tensors_compute_and_print():
    x = plexus.array([1, 2, 3], ctx=plexus.gpu(0))
    assert str((x + 2).exp() + x) == "[ 21.085537  56.59815  151.41316 ]\n<Tensor 3 @gpu(0)>"
    with pytest.raises(plexus.DeviceMismatchError):
        x + plexus.array([1, 2, 3])


def test_dlpack_from_a_gpu_tensor():
    np, torch = need("numpy"), need("torch")
    last = plexus.num_gpus() - 1
    t = plexus.arange(6, dtype="int64", device=plexus.gpu(last)).reshape(2, 3) * 2
    assert t.__dlpack_device__() == (KDLCUDA, last)
    with pytest.raises((RuntimeError, BufferError), match="Unsupported device"):  # NumPy reads host memory only
        np.from_dlpack(t)
    # Shared: the device pointer, back onto the same GPU with the same address; a write shows in t.
    same = plexus.from_dlpack(t)
    assert same.device == plexus.gpu(last) and same.tolist() == [[0, 2, 4], [6, 8, 10]]
    ctypes = pytest.importorskip("ctypes")
    pointer = ctypes.pythonapi.PyCapsule_GetPointer
    pointer.restype, pointer.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
    data = lambda x: ctypes.c_void_p.from_address(pointer(x.__dlpack__(), b"dltensor")).value  # DLTensor.data
    assert data(same) == data(t)
    with pytest.raises(BufferError, match="needs a copy, and copy=False was given"):
        t.__dlpack__(dl_device=(KDLCPU, 0), copy=False)
    host = plexus.from_dlpack(t.__dlpack__(dl_device=(KDLCPU, 0)))
    assert host.tolist() == [[0, 2, 4], [6, 8, 10]] and host.device == plexus.cpu(0)
    back = plexus.from_dlpack(torch.arange(4, dtype=torch.float64), device=plexus.gpu(0))
    assert back.device == plexus.gpu(0) and back.dtype == np.float64 and back.tolist() == [0, 1, 2, 3]


def cuda_torch():
    """PyTorch with a CUDA device Plexus sees too (a real GPU; the emulator's GPUs are not PyTorch's)."""
    torch = need("torch")
    if not torch.cuda.is_available() or plexus.num_gpus() == 0:
        pytest.skip("PyTorch sees no CUDA device: run on a real GPU")
    return torch


def test_torch_cuda_tensors_and_plexus_share_device_memory_both_ways():
    torch = cuda_torch()
    x = torch.arange(6, dtype=torch.float32, device="cuda:0").reshape(2, 3)
    t = plexus.from_dlpack(x)  # onto gpu(0), over x's memory
    assert t.device == plexus.gpu(0) and t.tolist() == [[0, 1, 2], [3, 4, 5]]
    y = torch.from_dlpack(t)   # back to PyTorch: the same device pointer
    assert y.data_ptr() == x.data_ptr() and y.device == x.device
    x[0, 0] = 7                # PyTorch writes: Plexus reads it (PyTorch's stream is the legacy default one)
    assert t.tolist()[0][0] == 7
    z = torch.from_dlpack(t * 2)  # Plexus's own GPU memory goes out shared, complete when PyTorch reads it
    assert z.device == x.device and z.tolist() == [[14, 2, 4], [6, 8, 10]]
    # A transposed view: Plexus cannot describe it, nor copy GPU memory through the host.
    with pytest.raises(BufferError, match=r"^from_dlpack: copy=False: importing memory onto gpu\(0\) without a copy: "
                       r"its strides are not compact row-major.*nor can it be copied"):
        plexus.from_dlpack(x.t(), copy=False)
    with pytest.raises(BufferError, match="which the host cannot read to copy"):
        plexus.from_dlpack(x.t())


def test_torch_work_on_a_side_stream_is_done_before_plexus_reads_it():
    # PyTorch writes on a stream of its own after holding that stream ~0.1 s: the import passes the
    # producer's stream to __dlpack__ (stream=1), so Plexus's read waits; a missed wait reads zeros.
    torch = cuda_torch()
    n = 1 << 24
    side = torch.cuda.Stream()
    x = torch.zeros(n, device="cuda:0")
    torch.cuda.synchronize()
    with torch.cuda.stream(side):
        torch.cuda._sleep(200_000_000)
        x.fill_(3)
        t = plexus.from_dlpack(x)
    assert t.sum().item() == 3.0 * n


def test_plexus_work_is_done_before_torch_reads_it_on_any_stream():
    torch = cuda_torch()
    a = plexus.ones((4096, 4096), plexus.gpu(0))
    product = plexus.matmul(a, a)  # queued on Plexus's stream
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):
        y = torch.from_dlpack(product)
        assert y.min().item() == 4096.0 and y.max().item() == 4096.0



def test_indexing_by_arrays_on_a_gpu():
    np = need("numpy")
    a = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    x = plexus.array(a, ctx=plexus.gpu(0))
    got = x[[1, 0, 1], :, plexus.array([3, -1, 0], dtype="int64", ctx=plexus.gpu(0))]
    assert got.device == plexus.gpu(0)
    assert np.array_equal(got.asnumpy(), a[[1, 0, 1], :, [3, -1, 0]])
    with pytest.raises(IndexError, match="index 4 is out of bounds for axis 2 with size 4"):
        x[:, :, plexus.array([4], dtype="int64", ctx=plexus.gpu(0))]
    x[:, [0, 2]] = 0.5
    a[:, [0, 2]] = 0.5
    assert np.array_equal(x.asnumpy(), a)
