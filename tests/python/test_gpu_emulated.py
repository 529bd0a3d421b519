"""Tensors on GPUs from Python: the CUDA plugin on the CUDA emulator (CTest sets PLEXUS_PLUGIN_PATH to
it and PLEXUS_TEST_GPUS=2), or real GPUs. __dlpack_device__ says (kDLCUDA, ordinal); __dlpack__ gives a
host copy only when asked with dl_device=(kDLCPU, 0), else BufferError; imports go onto a GPU."""
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
    with pytest.raises(BufferError, match="the tensor is on gpu.%d., whose memory no plugin shares yet" % last):
        t.__dlpack__()
    with pytest.raises(BufferError, match="ask for a host copy with dl_device"):
        np.from_dlpack(t)
    host = plexus.from_dlpack(t.__dlpack__(dl_device=(KDLCPU, 0)))
    assert host.tolist() == [[0, 2, 4], [6, 8, 10]] and host.device == plexus.cpu(0)
    back = plexus.from_dlpack(torch.arange(4, dtype=torch.float64), device=plexus.gpu(0))
    assert back.device == plexus.gpu(0) and back.dtype == np.float64 and back.tolist() == [0, 1, 2, 3]
