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
    with pytest.raises(RuntimeError, match="Unsupported device"):  # NumPy reads host memory only
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
