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


def test_seed_002_gluon_cells_run_with_their_import_line_changed():
    # Seed 002's own lines, but `from mxnet import ...` (and device names: two CPUs where it has two GPUs).
    import os
    if not os.path.isdir(plexus.data.default_fashion_mnist_folder()):
        pytest.skip("Fashion-MNIST is not installed (apt-get install dataset-fashion-mnist)")
    import time
    from plexus import np, npx, gluon, autograd
    from plexus.gluon import nn
    npx.set_np()
    gpu = npx.gpu() if npx.num_gpus() > 0 else npx.cpu()
    x = np.ones((3, 4), ctx=gpu)
    gpu_1 = npx.gpu(1) if npx.num_gpus() > 1 else npx.cpu(1)  # npx.cpu() in the seed: one device twice
    assert (x.copyto(gpu_1) + np.random.uniform(size=(3, 4), ctx=gpu_1)).shape == (3, 4)
    net = nn.Sequential()
    net.add(nn.Conv2D(channels=6, kernel_size=5, activation='relu'),
            nn.MaxPool2D(pool_size=2, strides=2),
            nn.Conv2D(channels=16, kernel_size=3, activation='relu'),
            nn.MaxPool2D(pool_size=2, strides=2),
            nn.Dense(120, activation="relu"),
            nn.Dense(84, activation="relu"),
            nn.Dense(10))
    batch_size = 256
    transformer = gluon.data.vision.transforms.Compose([
        gluon.data.vision.transforms.ToTensor(),
        gluon.data.vision.transforms.Normalize(0.13, 0.31)])
    train_data = gluon.data.DataLoader(
        gluon.data.vision.datasets.FashionMNIST(train=True).transform_first(
            transformer), batch_size, shuffle=True, num_workers=4)
    valid_data = gluon.data.DataLoader(
        gluon.data.vision.datasets.FashionMNIST(train=False).transform_first(
            transformer), batch_size, shuffle=False, num_workers=4)
    assert len(train_data) == 235 and len(valid_data) == 40
    with pytest.raises(TypeError, match="give them once"):  # transform_first's and transforms= both
        gluon.data.DataLoader(gluon.data.vision.datasets.FashionMNIST(train=False).transform_first(transformer),
                              batch_size, transforms=[gluon.data.vision.transforms.ToTensor()])
    devices = [gpu, gpu_1]
    net.collect_params().initialize(force_reinit=True, ctx=devices)
    softmax_cross_entropy = gluon.loss.SoftmaxCrossEntropyLoss()
    trainer = gluon.Trainer(net.collect_params(), 'sgd', {'learning_rate': 0.1})
    losses_seen = []
    tic = time.time()
    for data, label in train_data:
        data_list = gluon.utils.split_and_load(data, devices)
        label_list = gluon.utils.split_and_load(label, devices)
        with autograd.record():
            losses = [softmax_cross_entropy(net(X), y)
                      for X, y in zip(data_list, label_list)]
        for l in losses:
            l.backward()
        trainer.step(batch_size)
        losses_seen.append(sum([float(l.sum()) for l in losses]) / batch_size)
        if len(losses_seen) == 30:  # the seed trains 10 epochs; 30 steps show it learns
            break
    assert time.time() - tic < 300
    assert all(math.isfinite(v) for v in losses_seen)
    assert sum(losses_seen[-5:]) / 5 < 0.8 * sum(losses_seen[:5]) / 5, losses_seen
    data, label = next(iter(valid_data))
    assert data.shape == (256, 1, 28, 28)  # ToTensor (to [0, 1]), then Normalize(0.13, 0.31)
    assert float(data.min()) == pytest.approx(-0.13 / 0.31) and float(data.max()) == pytest.approx(0.87 / 0.31)
