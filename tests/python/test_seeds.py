"""The seeds' Python cells (MXNet 000/001, PyTorch 003/004), with Plexus's names, asserting the printed
values the seeds show. Where a seed uses gpu(0) and gpu(1), these use the GPUs when there are two, else
cpu(0) and cpu(1) (CTest sets PLEXUS_CPU_DEVICES=2)."""
import math

import pytest

import plexus


def first():
    return plexus.gpu(0) if plexus.num_gpus() >= 1 else plexus.cpu(0)


def second():
    return plexus.gpu(1) if plexus.num_gpus() >= 2 else plexus.cpu(1)


def test_devices_print_and_compare():
    assert "%s, %s, %s" % (plexus.cpu(), plexus.gpu(), plexus.gpu(1)) == "cpu(0), gpu(0), gpu(1)"
    assert repr(plexus.cpu(1)) == "cpu(1)"
    assert plexus.gpu() == plexus.gpu(0)
    assert plexus.cpu(0) != plexus.gpu(0)
    assert len({plexus.cpu(0), plexus.cpu(0), plexus.cpu(1)}) == 2
    assert plexus.cpu().device_type == "cpu" and plexus.gpu(3).device_id == 3


def test_seed_001_tensors_are_made_on_the_cpu_and_print_values_and_device():
    x = plexus.array([1, 2, 3])
    assert x.context == plexus.cpu(0) and x.device == plexus.cpu(0) and x.ctx == plexus.cpu(0)
    assert str(x) == "[1. 2. 3.]\n<Tensor 3 @cpu(0)>"
    a = plexus.array([1, 2, 3], ctx=first())
    assert repr(a) == "[1. 2. 3.]\n<Tensor 3 @%s>" % first()
    b = plexus.random.uniform(shape=(2, 3), ctx=second())
    assert b.context == second() and b.shape == (2, 3)


def test_seed_001_copyto_as_in_context_and_the_printed_sum():
    x = plexus.array([1, 2, 3])
    y = x.copyto(first())
    z = x.as_in_context(first())
    assert str(y) == "[1. 2. 3.]\n<Tensor 3 @%s>" % first()
    assert y.as_in_context(first()).is_(y)
    assert y.as_in_ctx(first()).is_(y)
    assert not y.copyto(first()).is_(y)
    # Seed 001, In [14].
    assert str((z + 2).exp() + y) == "[ 21.085537  56.59815  151.41316 ]\n<Tensor 3 @%s>" % first()
    v = ((z + 2).exp() * y).tolist()
    assert v[2] == pytest.approx(math.exp(5.0) * 3, rel=1e-6)


def test_seed_000_inputs_on_two_devices_are_an_error_not_a_copy():
    x = plexus.array([1, 2, 3])
    y = x.copyto(second())
    with pytest.raises(plexus.DeviceMismatchError) as e:
        x + y
    assert isinstance(e.value, ValueError)
    assert "cpu(0)" in str(e.value) and str(second()) in str(e.value)
    assert (x.copyto(second()) + y).context == second()


def test_seed_003_try_gpu_try_all_gpus_num_gpus():
    n = plexus.num_gpus()
    assert plexus.try_gpu() == (plexus.gpu(0) if n >= 1 else plexus.cpu())
    assert plexus.try_gpu(10) == plexus.cpu()
    assert plexus.try_all_gpus() == ([plexus.gpu(i) for i in range(n)] if n else [plexus.cpu()])


def test_seed_003_x_on_one_device_y_on_another_z_copied_and_added():
    X = plexus.ones((2, 3), device=first())
    assert str(X) == "[[1. 1. 1.]\n [1. 1. 1.]]\n<Tensor 2x3 @%s>" % first()
    Y = plexus.random.uniform(shape=(2, 3), device=second())
    Z = X.copyto(second())
    S = Y + Z
    np = pytest.importorskip("numpy", reason="numpy is not installed (apt-get install python3-numpy)")
    assert (S.asnumpy() == Y.asnumpy() + np.float32(1)).all()
    assert Z.as_in_context(second()).is_(Z)


def test_seed_003_exercise_products_logging_the_norm_on_the_device():
    dev = first()
    a = plexus.random.normal(0, 0.1, (100, 100), device=dev)
    b = plexus.random.normal(0, 0.1, (100, 100), device=dev)
    one_at_a_time, log = [], []
    for i in range(20):
        c = (a @ b) * float(i + 1)
        f = plexus.norm(c)
        one_at_a_time.append(f.item())
        log.append(f.reshape(1))
    assert plexus.concat(log).tolist() == one_at_a_time


def test_seed_004_tensors_and_a_network_on_a_device():
    # Seed 004 (PyTorch, 6.7.2-6.7.3): x.device; X on try_gpu(), Y on try_gpu(1); Z = X.cuda(1); Y + Z;
    # net = nn.Sequential(nn.LazyLinear(1)).to(try_gpu()); net(X); net[0].weight.data.device.
    x = plexus.array([1, 2, 3])
    assert x.device == plexus.cpu()
    X = plexus.ones((2, 3), device=first())
    Y = plexus.random.uniform(shape=(2, 3), device=second())
    Z = X.copyto(second())
    assert str(X) == "[[1. 1. 1.]\n [1. 1. 1.]]\n<Tensor 2x3 @%s>" % first()
    assert str(Z) == "[[1. 1. 1.]\n [1. 1. 1.]]\n<Tensor 2x3 @%s>" % second()
    assert (Y + Z).device == second()
    net = plexus.nn.Sequential()
    net.add(plexus.nn.Dense(1))  # the input size is inferred at the first call, as LazyLinear's
    net.initialize(device=first())
    out = net(X)
    assert out.shape == (2, 1) and out.device == first()
    assert net[0].weight.data().device == first() and net[0].weight.shape == (1, 3)


def test_tensor_basics_as_the_seeds_write_them():
    # x = arange(12); x.reshape(3, 4); x.sum(); exp(x); x[-1], x[1:3].
    x = plexus.arange(12)
    assert x.shape == (12,) and x.size == 12
    X = x.reshape(3, 4)
    assert str(X) == ("[[ 0.  1.  2.  3.]\n [ 4.  5.  6.  7.]\n [ 8.  9. 10. 11.]]\n<Tensor 3x4 @cpu(0)>")
    assert X.reshape(-1, 6).shape == (2, 6)
    assert str(X[-1]) == "[ 8.  9. 10. 11.]\n<Tensor 4 @cpu(0)>"
    assert X[1:3].tolist() == [[4, 5, 6, 7], [8, 9, 10, 11]]
    assert X.sum().item() == 66.0
    assert plexus.exp(plexus.array([0.0, 1.0])).tolist() == pytest.approx([1.0, math.e], rel=1e-7)
    assert plexus.zeros((2, 3, 4)).shape == (2, 3, 4)
    assert (X == X).sum().item() == 12
    assert float(X.mean()) == 5.5
