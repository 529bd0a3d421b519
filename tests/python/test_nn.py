"""Autograd, layers, the trainer, parameter files and the data loader from Python."""
import math
import os
import subprocess
import sys

import pytest

import plexus
from plexus import autograd, nn
from conftest import need


def test_gradients_of_recorded_ops():
    np = need("numpy")
    x = plexus.array([1.0, -2.0, 3.0])
    x.attach_grad()
    with autograd.record():
        assert autograd.is_recording() and autograd.is_training()
        y = (x * x * 2 + x.exp()).sum()
    assert not autograd.is_recording()
    y.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), 4 * np.array([1, -2, 3]) + np.exp([1, -2, 3]), rtol=1e-6)
    # Outside a scope nothing is recorded; pause() stops recording inside one.
    with autograd.record():
        with autograd.pause():
            assert not autograd.is_recording()
            z = (x * 3).sum()
        w = (x * 5).sum()
    w.backward()
    assert x.grad.tolist() == [5.0, 5.0, 5.0]
    with pytest.raises(plexus.Error):
        z.backward()  # z was not recorded


def test_layers_shapes_and_printing():
    net = nn.Sequential()
    net.add(nn.Conv2D(channels=6, kernel_size=5, padding=2, activation="relu"), nn.MaxPool2D(pool_size=2, strides=2),
            nn.Conv2D(16, kernel_size=(3, 3)), nn.AvgPool2D(2), nn.Flatten(), nn.Dropout(0.5), nn.Dense(10))
    net.initialize(ctx=plexus.cpu())
    x = plexus.random.uniform(shape=(4, 1, 28, 28))
    assert net(x).shape == (4, 10)
    assert len(net) == 7 and net[0].weight.shape == (6, 1, 5, 5) and net[6].weight.shape == (10, 576)
    assert repr(net).startswith("Sequential(\n  (0): Conv2D(1 -> 6, kernel 5x5")
    keys = net.collect_params().keys()
    assert keys == ["0.weight", "0.bias", "2.weight", "2.bias", "6.weight", "6.bias"]
    # Dropout drops only in training.
    d = nn.Dropout(0.5)
    ones = plexus.ones((1000,))
    assert d(ones).tolist() == [1.0] * 1000
    with autograd.record():
        kept = d(ones).asnumpy()
    assert set(kept.tolist()) <= {0.0, 2.0} and 300 < (kept == 0).sum() < 700


def test_a_small_network_learns_and_its_parameters_round_trip_through_a_file(tmp_path):
    np = need("numpy")
    rng = np.random.default_rng(0)
    features = rng.normal(size=(512, 2)).astype(np.float32)
    labels = (features[:, 0] + features[:, 1] > 0).astype(np.int32)
    X, y = plexus.array(features), plexus.array(labels)
    net = nn.Sequential()
    net.add(nn.Dense(16, activation="relu"), nn.Dense(2))
    net.initialize()
    loss_fn = plexus.loss.SoftmaxCrossEntropyLoss()
    trainer = nn.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.5})
    first = None
    for _ in range(60):
        with autograd.record():
            loss = loss_fn(net(X), y)
        loss.backward()
        trainer.step(512)
        first = first if first is not None else loss.mean().item()
    last = loss.mean().item()
    accuracy = (net(X).argmax(axis=1).astype("int32") == y).astype("float32").mean().item()
    assert last < first / 3 and accuracy > 0.95
    path = str(tmp_path / "net.params")
    net.save_parameters(path)
    other = nn.Sequential()
    other.add(nn.Dense(16, activation="relu"), nn.Dense(2))
    other.load_parameters(path, device=plexus.cpu(1))
    assert other[0].weight.data().device == plexus.cpu(1)
    assert other[0].weight.data().tolist() == net[0].weight.data().tolist()
    assert (other(X.copyto(plexus.cpu(1))).asnumpy() == net(X).asnumpy()).all()
    # Without a device each parameter stays where it is, as Gluon's ctx=None (it had moved to cpu(0)).
    other.load_parameters(path)
    assert other[0].weight.data().device == plexus.cpu(1)
    # Gluon's ctx= (d2l's MyDense: self.weight.data(ctx=x.ctx)).
    assert other[0].weight.data(ctx=plexus.cpu(1)).device == plexus.cpu(1)
    assert other[0].weight.grad(ctx=plexus.cpu(1)).shape == other[0].weight.data().shape
    with pytest.raises(ValueError, match=r"device=cpu\(0\) and ctx=cpu\(1\) disagree"):
        other[0].weight.data(device=plexus.cpu(0), ctx=plexus.cpu(1))
    fresh = nn.Sequential()
    fresh.add(nn.Dense(16, activation="relu"), nn.Dense(2))
    fresh.load_parameters(path)  # not initialized: onto cpu(0)
    assert fresh[1].bias.data().device == plexus.cpu(0)
    other.reset_ctx(plexus.cpu(0))
    assert other[1].bias.data().device == plexus.cpu(0)
    with pytest.raises(FileNotFoundError, match="nowhere"):
        other.load_parameters(str(tmp_path / "nowhere.params"))
    (tmp_path / "garbage.params").write_bytes(b"not a parameter file")
    with pytest.raises(plexus.Error, match="garbage"):  # a file that is there but wrong: Plexus's error
        other.load_parameters(str(tmp_path / "garbage.params"))


def test_tied_layers_as_d2ls_params_of_a_shared_dense():
    net = nn.Sequential()
    shared = nn.Dense(8, activation="relu")
    net.add(nn.Dense(8, activation="relu"), shared, nn.Dense(8, activation="relu", params=shared.params), nn.Dense(10))
    net.initialize()
    net(plexus.random.uniform(shape=(2, 20)))
    assert (net[1].weight.data()[0] == net[2].weight.data()[0]).asnumpy().all()
    net[1].weight.data()[0, 0] = 100  # the same parameter, not a copy
    assert net[2].weight.data()[0, 0].item() == 100 and net[2].weight is net[1].weight
    assert list(net.collect_params().keys()) == ["0.weight", "0.bias", "1.weight", "1.bias", "3.weight", "3.bias"]
    conv = nn.Conv2D(4, 3)
    tied = nn.Conv2D(4, 3, params=conv.collect_params())
    assert tied.bias is conv.bias
    with pytest.raises(plexus.ShapeError, match=r"share_parameters: the shared weight is \(8, 8\) and this layer's is \(4, 0\)"):
        nn.Dense(4, params=shared.params)
    with pytest.raises(TypeError, match="share_parameters is offered by Dense and Conv2D"):
        nn.MaxPool2D().share_parameters(shared.params)
    with pytest.raises(plexus.InvalidArgumentError, match="have no bias"):
        nn.Dense(8).share_parameters(nn.Dense(8, use_bias=False).params)


def test_split_and_load_takes_gluons_batch_axis_and_even_split():
    devices = [plexus.cpu(0), plexus.cpu(1)]
    with pytest.raises(plexus.ShapeError, match="a batch of 5 rows along axis 0 does not split evenly over 2 devices"):
        nn.split_and_load(plexus.ones((5, 2)), devices)  # Gluon's default: even_split=True
    parts = nn.split_and_load(plexus.arange(10).reshape(5, 2), devices, even_split=False)
    assert [p.shape for p in parts] == [(3, 2), (2, 2)] and parts[1].tolist() == [[6, 7], [8, 9]]
    steps = nn.split_and_load(plexus.arange(12).reshape(2, 6), devices, batch_axis=1)  # (features, time)
    assert steps[0].tolist() == [[0, 1, 2], [6, 7, 8]] and steps[1].device == plexus.cpu(1)
    with pytest.raises(plexus.ShapeError, match="batch_axis 2 is not an axis"):
        nn.split_and_load(plexus.ones((4, 2)), devices, batch_axis=2)
    with pytest.raises(plexus.ShapeError, match=r"or even_split \(false; False in Python\)"):
        nn.split_and_load(plexus.ones((3, 2)), devices)
    # As Gluon's: NumPy arrays and lists (made on the first device), ctx_list=, one device takes the whole
    # batch, and fewer rows than devices give fewer parts.
    np = need("numpy")
    from_numpy = nn.split_and_load(np.arange(4.0).reshape(2, 2), ctx_list=devices)
    assert [p.tolist() for p in from_numpy] == [[[0, 1]], [[2, 3]]] and from_numpy[1].device == plexus.cpu(1)
    assert nn.split_and_load([[1, 2], [3, 4]], devices)[0].tolist() == [[1, 2]]
    whole = nn.split_and_load(plexus.ones((0, 2)), [plexus.cpu(1)])
    assert len(whole) == 1 and whole[0].shape == (0, 2) and whole[0].device == plexus.cpu(1)
    assert len(nn.split_and_load(plexus.ones((1, 2)), devices, even_split=False)) == 1
    with pytest.raises(TypeError, match="give the devices"):
        nn.split_and_load(plexus.ones((2, 2)))
    with pytest.raises(plexus.InvalidArgumentError, match="split_and_load: no devices given"):
        nn.split_and_load([[1, 2]], [])
    # A step after such a batch names the likely cause for the device that got no part.
    net = nn.Dense(1, in_units=2)
    net.initialize(device=devices)
    trainer = nn.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1})
    with autograd.record():
        losses = [net(part).sum() for part in nn.split_and_load(plexus.ones((1, 2)), devices, even_split=False)]
    for l in losses:
        l.backward()
    with pytest.raises(plexus.InvalidArgumentError, match=r"on cpu\(1\) was not written .*fewer parts than devices"):
        trainer.step(1)


def test_data_parallel_step_over_two_devices():
    devices = [plexus.cpu(0), plexus.cpu(1)]
    net = nn.Sequential()
    net.add(nn.Dense(3))
    net.collect_params().initialize(force_reinit=True, ctx=devices)
    data = plexus.random.uniform(shape=(8, 4))
    parts = nn.split_and_load(data, devices)
    assert [p.device for p in parts] == devices and [p.shape for p in parts] == [(4, 4), (4, 4)]
    label = plexus.array([0, 1, 2, 0, 1, 2, 0, 1], dtype="int32")
    labels = nn.split_and_load(label, devices)
    trainer = nn.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1, "momentum": 0.9})
    with autograd.record():
        losses = [plexus.loss.SoftmaxCrossEntropyLoss()(net(X), y) for X, y in zip(parts, labels)]
    for l in losses:
        l.backward()
    trainer.step(8)
    w0, w1 = net[0].weight.list_data()
    assert w0.device == plexus.cpu(0) and w1.device == plexus.cpu(1)
    assert w0.tolist() == w1.tolist()  # the replicas took the same summed step
    assert trainer.learning_rate == 0.1


def test_fashion_mnist_loader():
    folder = os.environ.get("PLEXUS_FASHION_MNIST", "/usr/share/datasets/fashion-mnist")
    if not os.path.exists(os.path.join(folder, "train-images-idx3-ubyte.gz")):
        pytest.skip("Fashion-MNIST is not installed in %s (apt-get install dataset-fashion-mnist)" % folder)
    test_set = plexus.data.fashion_mnist(train=False)
    assert len(test_set) == 10000 and test_set.rows == 28
    loader = plexus.data.DataLoader(test_set, 256, shuffle=True)
    assert len(loader) == 40
    batches = list(loader)
    assert len(batches) == 40
    data, label = batches[0]
    assert data.shape == (256, 1, 28, 28) and data.dtype == "float32"
    assert label.shape == (256,) and label.dtype == "int32"
    assert sum(b[1].shape[0] for b in batches) == 10000
    assert 0 <= label.asnumpy().min() and label.asnumpy().max() <= 9
    with pytest.raises(FileNotFoundError, match="neither train-images-idx3-ubyte.gz nor train-images-idx3-ubyte"):
        plexus.data.fashion_mnist(train=True, folder="/nonexistent")  # as the other readers' (it had been a plexus.Error)


def test_autocast_computes_the_layers_in_bfloat16_and_keeps_float32_parameters():
    net = nn.Sequential()
    net.add(nn.Dense(3))
    net.initialize()
    x = plexus.random.uniform(shape=(4, 5))
    label = plexus.array([0, 1, 2, 0], dtype="int32")
    with autograd.record():
        with nn.autocast("bfloat16"):
            assert nn.autocast_dtype() == "bfloat16"
            out = net(x)
            loss = plexus.loss.SoftmaxCrossEntropyLoss()(out, label)
    assert nn.autocast_dtype() == "float32"
    assert out.dtype == "bfloat16" and loss.dtype == "float32"
    loss.backward()
    assert net[0].weight.data().dtype == "float32" and net[0].weight.grad().dtype == "float32"
    with pytest.raises(plexus.DTypeError, match="Autocast: layers compute in float32, float16 or bfloat16, not int32"):
        nn.autocast("int32")
    # One scope object is entered once at a time; the refusal leaves the outer one in force.
    scope = nn.autocast("float16")
    with scope:
        with pytest.raises(plexus.InvalidArgumentError, match="this scope is already entered"):
            with scope:
                pass
        assert nn.autocast_dtype() == "float16"
    assert nn.autocast_dtype() == "float32"
    with scope:  # and again after it was left
        assert nn.autocast_dtype() == "float16"


def test_loss_scaler_skips_a_step_whose_float16_gradients_overflowed():
    net = nn.Sequential()
    net.add(nn.Dense(3, in_units=5))
    net.initialize()
    trainer = nn.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1})
    scaler = nn.LossScaler(init_scale=2.0 ** 40, backoff_factor=2.0 ** -30)
    x = plexus.random.uniform(shape=(4, 5))
    label = plexus.array([0, 1, 2, 0], dtype="int32")
    before = net[0].weight.data().tolist()
    stepped = []
    for _ in range(2):
        with autograd.record():
            with nn.autocast("float16"):
                loss = plexus.loss.SoftmaxCrossEntropyLoss()(net(x), label)
        scaler.scale(loss).backward()
        stepped.append(scaler.step(trainer, 4))
        if not stepped[-1]:
            assert net[0].weight.data().tolist() == before  # nothing changed
    assert stepped == [False, True]
    assert scaler.skipped_steps == 1 and scaler.loss_scale == 2.0 ** 10
    assert net[0].weight.data().tolist() != before
    with pytest.raises(plexus.InvalidArgumentError, match="growth_interval must be >= 1"):
        nn.LossScaler(growth_interval=0)


def test_the_default_loss_scale_and_the_losses_under_autocast_compute_in_float32():
    np = need("numpy")
    net = nn.Dense(1, in_units=4)
    net.initialize()
    trainer = nn.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1})
    scaler = nn.LossScaler()  # 65536: beyond float16, where a float16 loss had scaled to inf
    x = plexus.array(np.full((8, 4), 0.01), dtype="float32")
    for make in (plexus.loss.L2Loss, plexus.loss.L1Loss, plexus.loss.SigmoidBinaryCrossEntropyLoss):
        with autograd.record():
            with nn.autocast("float16"):
                loss = make()(net(x), plexus.zeros((8,)))
        assert loss.dtype == np.float32, make.__name__  # float16 before
        scaled = scaler.scale(loss)
        assert np.isfinite(scaled.asnumpy()).all()
        scaled.backward()
        if make is plexus.loss.L2Loss:  # (the others' bias gradients, 8 times 65536 times 1 or 0.5, overflow)
            assert scaler.step(trainer, 8)  # the step had been skipped
    assert scaler.skipped_steps == 0 and scaler.loss_scale == 65536.0
    for _ in range(2):  # gradients of a float16 net that overflow still skip the step and back off
        with autograd.record():
            with nn.autocast("float16"):
                loss = plexus.loss.L1Loss()(net(x), plexus.zeros((8,)))
        scaler.scale(loss).backward()
        assert not scaler.step(trainer, 8)
    assert scaler.skipped_steps == 2 and scaler.loss_scale == 16384.0
    with nn.autocast("float16"):  # 300 squared is beyond float16: the loss had been inf
        big = plexus.loss.L2Loss()(plexus.full((1, 1), 300, dtype="float16"), plexus.zeros((1,)))
    assert big.tolist() == [45000.0]
    half = plexus.full((3,), 0.25, dtype="float16")
    assert scaler.scale(half).dtype == np.float32 and scaler.scale(half).tolist() == [0.25 * 16384.0] * 3


def test_norm_and_softmax_of_16_bit_floats_round_once():
    np, torch = need("numpy"), need("torch")
    for values, want in ((np.ones(100000), 316.25), (np.full(10, 300.0), 948.5), (np.full(10, 1e-4), 3.1638e-4)):
        got = plexus.array(values, dtype="float16").norm()  # the squares and their sum had been rounded to float16
        exact = np.sqrt((values.astype(np.float16).astype(np.float64) ** 2).sum())  # of the float16 inputs
        assert got.dtype == np.float16 and got.item() == float(np.float16(exact))
        assert got.item() == pytest.approx(want, rel=1e-3)
    logits = np.random.default_rng(1).normal(0.0, 5.0, (16, 1000))
    for dtype, torch_dtype in (("float16", torch.float16), ("bfloat16", torch.bfloat16)):
        x = plexus.array(logits, dtype=dtype)
        given = torch.tensor(logits).to(torch_dtype).double()  # the logits as the tensor holds them
        exact = torch.softmax(given, -1).to(torch_dtype).float().numpy()  # in float64, rounded once
        got = plexus.softmax(x).astype("float32").asnumpy()
        # Within one unit in the last place of the exact value rounded (it had been up to 8 in float16).
        ulp = np.spacing(exact.astype(np.float16)).astype(np.float32) if dtype == "float16" else np.abs(exact) * 2 ** -7
        assert (np.abs(got - exact) <= ulp).all()
    assert plexus.softmax(plexus.array([[3, 3, 3, -15]], dtype="bfloat16")).astype("float32").tolist() == \
        [[0.333984375] * 3 + [float(torch.tensor(np.exp(-18) / (3 + np.exp(-18))).to(torch.bfloat16))]]


def test_batch_norm_matches_pytorch_forward_backward_and_running_statistics():
    np, torch = need("numpy"), need("torch")
    rng = np.random.default_rng(3)
    x0 = rng.normal(2.0, 3.0, size=(6, 4, 5, 5))
    dy0 = rng.normal(size=x0.shape)
    bn = nn.BatchNorm(momentum=0.9, epsilon=1e-5)
    bn.initialize()
    x = plexus.array(x0, dtype="float64")
    x.attach_grad()
    with autograd.record():
        y = bn(x.astype("float32"))
    y.backward(plexus.array(dy0, dtype="float32"))
    # PyTorch's momentum is Gluon's 1 - momentum.
    ref = torch.nn.BatchNorm2d(4, eps=1e-5, momentum=0.1).double().train()
    tx = torch.tensor(x0, requires_grad=True)
    ty = ref(tx)
    ty.backward(torch.tensor(dy0))
    np.testing.assert_allclose(y.asnumpy(), ty.detach().numpy(), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(x.grad.asnumpy(), tx.grad.numpy(), rtol=1e-3, atol=1e-5)
    params = bn.collect_params()
    np.testing.assert_allclose(params["gamma"].grad().asnumpy(), ref.weight.grad.numpy(), rtol=1e-4)
    np.testing.assert_allclose(params["beta"].grad().asnumpy(), ref.bias.grad.numpy(), rtol=1e-4)
    np.testing.assert_allclose(params["running_mean"].data().asnumpy(), ref.running_mean.numpy(), rtol=1e-5)
    np.testing.assert_allclose(params["running_var"].data().asnumpy(), ref.running_var.numpy(), rtol=1e-5)
    assert params["running_var"].grad_req == "null"
    # Predicting: by the running statistics, as PyTorch's eval().
    ref.eval()
    np.testing.assert_allclose(bn(plexus.array(x0, dtype="float32")).asnumpy(),
                               ref(torch.tensor(x0)).detach().numpy(), rtol=1e-4, atol=1e-5)


def test_resnet18_from_python():
    net = nn.resnet18(10)
    net.initialize()
    assert net(plexus.zeros((2, 1, 28, 28))).shape == (2, 10)
    assert isinstance(net[3][0], nn.Residual) and isinstance(net[7], nn.GlobalAvgPool2D)
    assert "Parameters: 11183626" in _captured_summary(net)


def _captured_summary(net):
    import contextlib
    import io
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        net.summary(plexus.zeros((1, 1, 28, 28)))
    return out.getvalue()


@pytest.mark.parametrize("optimizer", ["adam", "adamw", "nag"])
def test_trainer_steps_as_pytorch_does(optimizer, tmp_path):
    np, torch = need("numpy"), need("torch")
    rng = np.random.default_rng(5)
    w0 = rng.normal(size=(3, 4)).astype(np.float32)
    net = nn.Sequential()
    net.add(nn.Dense(3, in_units=4, use_bias=False))
    net.initialize()
    net[0].weight.set_data(plexus.array(w0))
    options = {"learning_rate": 0.01, "wd": 0.1}
    if optimizer == "nag":
        options["momentum"] = 0.9
    trainer = nn.Trainer(net.collect_params(), optimizer, options)
    tw = torch.tensor(w0, requires_grad=True)
    if optimizer == "nag":
        ref = torch.optim.SGD([tw], lr=0.01, momentum=0.9, weight_decay=0.1, nesterov=True)
    else:
        ref = (torch.optim.Adam if optimizer == "adam" else torch.optim.AdamW)([tw], lr=0.01, weight_decay=0.1)
    for step in range(4):
        x0 = rng.normal(size=(5, 4)).astype(np.float32)
        x = plexus.array(x0)
        with autograd.record():
            loss = (net(x) * net(x)).sum()
        loss.backward()
        trainer.step(5)
        ref.zero_grad()
        ((torch.tensor(x0) @ tw.T) ** 2).sum().div(5).backward()
        ref.step()
        np.testing.assert_allclose(net[0].weight.data().asnumpy(), tw.detach().numpy(), rtol=1e-5, atol=1e-6)
    assert trainer.optimizer == optimizer and trainer.num_update == 4
    trainer.save_states(str(tmp_path / "t.states"))
    again = nn.Trainer(net.collect_params(), optimizer, options)
    again.load_states(str(tmp_path / "t.states"))
    assert again.num_update == 4


def test_schedules_losses_and_clipping_from_python():
    from plexus import lr_scheduler, loss
    cos = lr_scheduler.CosineScheduler(max_update=10, base_lr=1.0, final_lr=0.0)
    assert cos(0) == 1.0 and abs(cos(5) - 0.5) < 1e-12 and cos(10) == 0.0
    assert lr_scheduler.FactorScheduler(step=2, factor=0.5, base_lr=1.0)(4) == 0.5  # MXNet's: halved after update 2
    assert lr_scheduler.FactorScheduler(step=2, factor=0.5, base_lr=1.0)(5) == 0.25
    # Gluon's positional order: (step, factor, stop_factor_lr, base_lr, ...); the third had been base_lr.
    positional = lr_scheduler.FactorScheduler(10, 0.5, 1e-3)
    assert positional.base_lr == 0.01 and positional(1) == 0.01
    assert lr_scheduler.FactorScheduler(1, 0.5, 0.3, 1.0)(3) == 0.3  # stopped at stop_factor_lr
    assert abs(lr_scheduler.MultiFactorScheduler([1], 0.1, 0.5, 2, 0.1, "linear")(1) - 0.3) < 1e-12
    assert lr_scheduler.CosineScheduler(10, 1.0, 0.0, 0, 0.0, warmup_mode="linear")(10) == 0.0
    for make in (lambda: lr_scheduler.FactorScheduler(2, warmup_mode="constant"),
                 lambda: lr_scheduler.MultiFactorScheduler([2], warmup_mode="constant"),
                 lambda: lr_scheduler.CosineScheduler(2, warmup_mode="constant")):
        with pytest.raises(ValueError, match="warmup_mode 'constant': only 'linear' is offered"):
            make()
    net = nn.Sequential()
    net.add(nn.Dense(2, in_units=2))
    net.initialize()
    trainer = nn.Trainer(net.collect_params(), "sgd", {"learning_rate": 1.0})
    trainer.set_lr_scheduler(lr_scheduler.MultiFactorScheduler(step=[1], factor=0.1, base_lr=0.5))
    for _ in range(2):
        with autograd.record():
            l = loss.L2Loss()(net(plexus.ones((3, 2))), plexus.zeros((3, 2))).sum()
        l.backward()
        trainer.step(3)
    assert abs(trainer.learning_rate - 0.05) < 1e-12
    assert loss.L1Loss()(plexus.array([[1.0, -3.0]]), plexus.zeros((1, 2))).tolist() == [2.0]
    grads = [plexus.array([3.0, 4.0])]
    norm = nn.clip_global_norm(grads, 2.5)  # in place, as Gluon's
    assert norm == 5.0 and grads[0].tolist() == [1.5, 2.0]


def test_losses_and_their_gradients_match_pytorch_also_at_a_logit_of_zero():
    np, torch = need("numpy"), need("torch")
    from plexus import loss
    F = torch.nn.functional
    rng = np.random.default_rng(7)
    x0 = rng.normal(size=(3, 4)) * 3
    x0[0, :] = 0.0  # all-zero logits: a zero-initialized output layer
    x0[1, 1] = 0.0
    y0 = rng.uniform(size=(3, 4))
    y0[2, :] = (y0[2, :] > 0.5)
    cases = [(loss.SigmoidBinaryCrossEntropyLoss(), lambda x, y: F.binary_cross_entropy_with_logits(x, y, reduction="none")),
             (loss.L2Loss(), lambda x, y: (x - y) ** 2 / 2),
             (loss.L1Loss(), lambda x, y: (x - y).abs())]
    for ours, theirs in cases:
        x, y = plexus.array(x0), plexus.array(y0)
        x.attach_grad()
        y.attach_grad()
        with autograd.record():
            l = ours(x, y)
        l.backward()
        tx, ty = torch.tensor(x0, requires_grad=True), torch.tensor(y0, requires_grad=True)
        tl = theirs(tx, ty).mean(1)
        tl.sum().backward()
        np.testing.assert_allclose(l.asnumpy(), tl.detach().numpy(), rtol=1e-12)
        np.testing.assert_allclose(x.grad.asnumpy(), tx.grad.numpy(), rtol=1e-12, atol=1e-15)
        np.testing.assert_allclose(y.grad.asnumpy(), ty.grad.numpy(), rtol=1e-12, atol=1e-15)


def test_gradients_through_slices_concat_max_pick_and_accumulation():
    np = need("numpy")
    x = plexus.array([[1.0, 5.0, 3.0], [4.0, 2.0, 6.0]])
    x.attach_grad(grad_req="add")
    for _ in range(2):
        with autograd.record():
            y = (x[0:1].sum() + plexus.concat([x, x], axis=0).sum() + x.max(axis=1).sum()
                 + plexus.pick(x, plexus.array([2, 0], dtype="int32")).sum())
        y.backward()
    # per pass: 1 on row 0 (slice), 2 everywhere (concat), 1 at each row's max, 1 at the picked ones
    once = np.array([[3, 4, 4], [3, 2, 3]], dtype=float)
    np.testing.assert_array_equal(x.grad.asnumpy(), 2 * once)


def _with_grad(x0, dtype="float64"):
    x = plexus.array(x0, dtype=dtype)
    x.attach_grad()
    return x


def test_gelu_silu_softplus_leaky_relu_match_pytorch():
    np, torch = need("numpy"), need("torch")
    F = torch.nn.functional
    x0 = np.random.default_rng(4).normal(0, 3, size=(5, 7))
    dy0 = np.random.default_rng(5).normal(size=x0.shape)
    for name, ref in (("gelu", F.gelu), ("silu", F.silu), ("softplus", F.softplus),
                      ("leaky_relu", lambda t: F.leaky_relu(t, 0.2))):
        x = _with_grad(x0)
        with autograd.record():
            y = plexus.leaky_relu(x, 0.2) if name == "leaky_relu" else getattr(plexus, name)(x)
        y.backward(plexus.array(dy0, dtype="float64"))
        tx = torch.tensor(x0, requires_grad=True)
        ty = ref(tx)
        ty.backward(torch.tensor(dy0))
        np.testing.assert_allclose(y.asnumpy(), ty.detach().numpy(), rtol=1e-12, atol=1e-15, err_msg=name)
        np.testing.assert_allclose(x.grad.asnumpy(), tx.grad.numpy(), rtol=1e-12, atol=1e-15, err_msg=name)
    assert nn.LeakyReLU(0.3)(plexus.array([-1.0, 2.0])).tolist() == pytest.approx([-0.3, 2.0])
    assert nn.Activation("gelu")(plexus.array([0.0])).tolist() == [0.0]
    assert nn.Activation("softrelu")(plexus.array([0.0])).tolist() == [pytest.approx(0.6931471805599453)]
    with pytest.raises(plexus.InvalidArgumentError, match="alpha must be finite"):
        nn.LeakyReLU(float("nan"))


def test_layer_norm_matches_pytorch():
    np, torch = need("numpy"), need("torch")
    rng = np.random.default_rng(6)
    x0, dy0 = rng.normal(3, 2, size=(4, 3, 8)), rng.normal(size=(4, 3, 8))
    ln = nn.LayerNorm(in_channels=8)
    ln.initialize()
    params = ln.collect_params()
    params["gamma"].set_data(plexus.array(rng.uniform(0.5, 2, size=8), dtype="float32"))
    params["beta"].set_data(plexus.array(rng.uniform(-1, 1, size=8), dtype="float32"))
    x = _with_grad(x0, "float32")
    with autograd.record():
        y = ln(x)
    y.backward(plexus.array(dy0, dtype="float32"))
    ref = torch.nn.LayerNorm(8, eps=1e-5).double()
    with torch.no_grad():
        ref.weight.copy_(torch.tensor(params["gamma"].data().asnumpy()))
        ref.bias.copy_(torch.tensor(params["beta"].data().asnumpy()))
    tx = torch.tensor(x0, requires_grad=True)
    ty = ref(tx)
    ty.backward(torch.tensor(dy0))
    np.testing.assert_allclose(y.asnumpy(), ty.detach().numpy(), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(x.grad.asnumpy(), tx.grad.numpy(), rtol=1e-3, atol=1e-4)
    np.testing.assert_allclose(params["gamma"].grad().asnumpy(), ref.weight.grad.numpy(), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(params["beta"].grad().asnumpy(), ref.bias.grad.numpy(), rtol=1e-4, atol=1e-4)


def test_embedding_matches_pytorch_and_sums_repeated_rows():
    np, torch = need("numpy"), need("torch")
    emb = nn.Embedding(6, 4)
    emb.initialize()
    w0 = emb.weight.data().asnumpy()
    idx0 = np.array([[5, 0, 5], [2, 5, 1]])
    dy0 = np.random.default_rng(7).normal(size=(2, 3, 4))
    with autograd.record():
        y = emb(plexus.array(idx0, dtype="int64"))
    y.backward(plexus.array(dy0, dtype="float32"))
    ref = torch.nn.Embedding(6, 4)
    with torch.no_grad():
        ref.weight.copy_(torch.tensor(w0))
    ty = ref(torch.tensor(idx0))
    ty.backward(torch.tensor(dy0, dtype=torch.float32))
    assert y.shape == (2, 3, 4)
    np.testing.assert_array_equal(y.asnumpy(), ty.detach().numpy())
    np.testing.assert_allclose(emb.weight.grad().asnumpy(), ref.weight.grad.numpy(), rtol=1e-6)
    # Whole float indices are rows, as MXNet's (d2l's float32 token ids); others are refused; an index
    # outside the table fails at the next wait.
    np.testing.assert_array_equal(emb(plexus.array([1.0, 3.0])).asnumpy(), emb.weight.data().asnumpy()[[1, 3]])
    with pytest.raises(plexus.InvalidArgumentError, match="an index is not a row number"):
        emb(plexus.array([1.0, float("nan")]))
    with pytest.raises(plexus.Error, match="index 6 at position 1 is outside"):
        emb(plexus.array([0, 6], dtype="int32")).asnumpy()


def test_adaptive_avg_pool_matches_pytorch():
    np, torch = need("numpy"), need("torch")
    x0 = np.random.default_rng(8).normal(size=(2, 3, 7, 10))
    for size in ((3, 4), (1, 1), (7, 5), (9, 12)):
        x = _with_grad(x0)
        with autograd.record():
            y = nn.AdaptiveAvgPool2D(size)(x)
        y.backward(plexus.ones(y.shape, dtype="float64"))
        tx = torch.tensor(x0, requires_grad=True)
        ty = torch.nn.functional.adaptive_avg_pool2d(tx, size)
        ty.sum().backward()
        np.testing.assert_allclose(y.asnumpy(), ty.detach().numpy(), rtol=1e-12, err_msg=str(size))
        np.testing.assert_allclose(x.grad.asnumpy(), tx.grad.numpy(), rtol=1e-12, err_msg=str(size))


def test_collect_params_reads_as_a_dict_and_a_shared_block_has_its_parameters_once():
    torch = need("torch")
    net = nn.Sequential()
    net.add(nn.Dense(3, in_units=2), nn.Dense(1, in_units=3))
    net.initialize()
    params = net.collect_params()
    assert list(params) == params.keys() == ["0.weight", "0.bias", "1.weight", "1.bias"]
    assert "1.bias" in params and "2.bias" not in params
    assert [p.data().shape for p in params.values()] == [(3, 2), (3,), (1, 3), (1,)]
    assert [(k, p.data().shape) for k, p in params.items()] == list(zip(params.keys(), [(3, 2), (3,), (1, 3), (1,)]))
    with pytest.raises(KeyError, match="no parameter named '2.bias'"):
        params["2.bias"]
    # A parameter from items() keeps its network alive.
    weight = nn.Sequential()
    weight.add(nn.Dense(2, in_units=2))
    weight.initialize()
    kept = weight.collect_params().items()[0][1]
    del weight
    assert kept.data().shape == (2, 2)

    # d2l's tied layers: one Dense at two places, its parameters listed, updated and counted once.
    shared = nn.Dense(2, in_units=2)
    tied = nn.Sequential()
    tied.add(shared, shared)
    tied.initialize()
    assert tied.collect_params().keys() == ["0.weight", "0.bias"]
    w0, b0 = shared.weight.data().asnumpy(), shared.bias.data().asnumpy()
    x = plexus.array([[1.0, -2.0], [0.5, 3.0]])
    trainer = nn.Trainer(tied.collect_params(), "sgd", {"learning_rate": 0.1})
    with autograd.record():
        loss = tied(x).sum()
    loss.backward()
    trainer.step(2)
    lin = torch.nn.Linear(2, 2)
    with torch.no_grad():
        lin.weight.copy_(torch.from_numpy(w0))
        lin.bias.copy_(torch.from_numpy(b0))
    opt = torch.optim.SGD(lin.parameters(), lr=0.1)
    (lin(lin(torch.tensor(x.asnumpy()))).sum() / 2).backward()
    opt.step()
    assert abs(shared.weight.data().asnumpy() - lin.weight.detach().numpy()).max() < 1e-6
    assert abs(shared.bias.data().asnumpy() - lin.bias.detach().numpy()).max() < 1e-6


def test_softmax_over_the_last_axis_of_any_rank_and_norm_at_zero_match_pytorch():
    np, torch = need("numpy"), need("torch")
    rng = np.random.RandomState(0)
    for shape in [(5,), (3, 4), (2, 3, 4)]:
        xn, wn = rng.randn(*shape), rng.randn(*shape)
        x = plexus.array(xn, dtype="float64")
        x.attach_grad()
        with autograd.record():
            y = (plexus.softmax(x) * plexus.array(wn, dtype="float64")).sum()
        y.backward()
        xt = torch.tensor(xn, requires_grad=True)
        (torch.softmax(xt, -1) * torch.tensor(wn)).sum().backward()
        assert np.abs(plexus.softmax(x).asnumpy() - torch.softmax(torch.tensor(xn), -1).numpy()).max() < 1e-15
        assert np.abs(x.grad.asnumpy() - xt.grad.numpy()).max() < 1e-15
    with pytest.raises(plexus.ShapeError):
        plexus.softmax(plexus.array(1.0))
    # norm: x / norm, and 0 at x = 0 as PyTorch's (not NaN); a NaN still gives NaN.
    for v in [[0.0, 0.0, 0.0], [3.0, -4.0]]:
        x = plexus.array(v, dtype="float64")
        x.attach_grad()
        with autograd.record():
            n = plexus.norm(x)
        n.backward()
        xt = torch.tensor(v, dtype=torch.float64, requires_grad=True)
        torch.linalg.norm(xt).backward()
        assert n.item() == torch.linalg.norm(xt).item()
        assert np.abs(x.grad.asnumpy() - xt.grad.numpy()).max() < 1e-15
    assert np.isnan(plexus.norm(plexus.array([float("nan"), 1.0])).item())


def _loads_what_it_saved(net, other, x):
    """`other` (the same layers) computes what `net` does once it loads the file `net` saved."""
    np = need("numpy")
    path = "/tmp/plexus-python-block-%d.params" % os.getpid()
    try:
        net.save_parameters(path)
        other.load_parameters(path)
    finally:
        os.remove(path)
    assert np.abs(other(x).asnumpy() - net(x).asnumpy()).max() == 0


def test_a_block_written_in_python_as_d2l_writes_one():
    np = need("numpy")
    import gc

    class MLP(nn.Block):  # d2l 5.1
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.hidden = nn.Dense(8, activation="relu")
            self.output = nn.Dense(3)

        def forward(self, x):
            return self.output(self.hidden(x))

    class Scaled(nn.Block):  # a constant tensor and a child used twice, as d2l's FixedHiddenMLP
        def __init__(self):
            super().__init__()
            self.factor = plexus.array([2.0])
            self.mlp = MLP()

        def forward(self, x):
            return self.mlp(x) * self.factor

    net = nn.Sequential()
    net.add(Scaled(), nn.Dense(2))  # nothing else holds the Python blocks
    gc.collect()
    net.initialize()
    x = plexus.random.uniform(size=(4, 5))
    keys = ["0.mlp.hidden.weight", "0.mlp.hidden.bias", "0.mlp.output.weight", "0.mlp.output.bias", "1.weight", "1.bias"]
    assert net(x).shape == (4, 2) and net.collect_params().keys() == keys
    p = {k: v.data().asnumpy() for k, v in net.collect_params().items()}
    h = np.maximum(x.asnumpy() @ p[keys[0]].T + p[keys[1]], 0)
    want = ((h @ p[keys[2]].T + p[keys[3]]) * 2) @ p[keys[4]].T + p[keys[5]]
    assert np.abs(net(x).asnumpy() - want).max() < 1e-5
    # Its class name and its children, as Gluon prints a block, unless it says otherwise:
    assert repr(net[0]) == ("Scaled(\n  (mlp): MLP(\n    (hidden): Dense(5 -> 8, relu)\n    (output): Dense(8 -> 3)\n"
                            "  )\n)")
    assert repr(nn.Block()) == "Block"

    class Described(MLP):
        def describe(self):
            return "Described(8 -> 3)"

    assert repr(Described()) == "Described(8 -> 3)"
    # Trains, saves and loads like any network.
    trainer = nn.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1})
    with autograd.record():
        loss = net(x).sum()
    loss.backward()
    before = net.collect_params()[keys[0]].data().asnumpy()
    trainer.step(4)
    assert np.abs(net.collect_params()[keys[0]].data().asnumpy() - before).max() > 0
    other = nn.Sequential()
    other.add(Scaled(), nn.Dense(2))
    _loads_what_it_saved(net, other, x)
    # A child assigned again replaces the first.
    m = MLP()
    m.output = nn.Dense(4)
    m.initialize()
    assert m(x).shape == (4, 4) and len(m.collect_params().keys()) == 4

    class Halve(nn.Block):  # calls itself on parts of its input (it had been told it has no forward)
        def forward(self, x):
            return x if x.shape[0] == 1 else self(x[:x.shape[0] // 2]) + self(x[x.shape[0] // 2:])

    assert Halve()(plexus.ones((4, 2))).tolist() == [[4.0, 4.0]]

    class NoForward(nn.Block):
        pass

    class Own(nn.Block):  # a forward set on the instance, and a static one
        def __init__(self):
            super().__init__()
            self.forward = lambda x: x * 2

    class Static(nn.Block):
        @staticmethod
        def forward(x):
            return x + 1

    assert Own()(plexus.ones(2)).tolist() == [2.0, 2.0] and Static()(plexus.ones(2)).tolist() == [2.0, 2.0]

    class Base(nn.Block):  # Block's own forward is abstract: a clear error, not a recursion
        def forward(self, x):
            return super().forward(x) + 1

    with pytest.raises(TypeError, match=r"Base has no forward\(x\) of its own"):
        Base()(plexus.ones(2))

    class Pair(nn.Block):
        def forward(self, x):
            return x, x

    first, second = Pair()(plexus.ones(2))  # as Gluon's: what forward gives
    assert first.tolist() == second.tolist() == [1.0, 1.0]
    chain = nn.Sequential()
    chain.add(Pair())  # a Sequential passes one tensor from block to block
    with pytest.raises(TypeError, match="Pair.forward returned a tuple, not a Tensor"):
        chain(plexus.ones(2))
    with pytest.raises(TypeError, match=r"NoForward has no forward\(x\) of its own: a Block written in Python"):
        NoForward()(x)

    class NoSuperInit(nn.Block):
        def __init__(self):
            pass

    with pytest.raises(TypeError, match="__init__\\(\\) must be called"):
        NoSuperInit()
    with pytest.raises(TypeError, match="only a Block written in Python"):
        nn.Dense(2)._register_child("x", nn.Dense(2))
    with pytest.raises(plexus.Error, match="the block 'me' is this block or holds it; a block cannot hold itself"):
        m.me = m
    with pytest.raises(plexus.Error, match="the block 'x' is null"):
        m._register_child("x", None)


def test_initialize_again_warns_and_initializes_only_what_is_new_as_gluon_and_a_missing_file_is_file_not_found():
    np = need("numpy")
    net = nn.Sequential()
    net.add(nn.Dense(2, in_units=2))
    net.initialize()
    w = net[0].weight.data().asnumpy()
    net.add(nn.Dense(3))  # added after the first initialize (d2l does this)
    with pytest.warns(UserWarning, match="0.weight, 0.bias already initialized, left as they are") as caught:
        net.initialize()
    assert caught[0].filename == __file__  # the user's line, not a wrapper's inside plexus (it had been nn.py's)
    assert (net[0].weight.data().asnumpy() == w).all()
    assert net(plexus.ones((1, 2))).shape == (1, 3)  # the new layer was initialized (its shape at this first call)
    net.initialize(force_reinit=True)
    assert not (net[0].weight.data().asnumpy() == w).all()
    with pytest.raises(FileNotFoundError, match="load_parameters: no such file"):
        net.load_parameters("/nonexistent-folder/net.params")
    assert np.isfinite(net[0].weight.data().asnumpy()).all()


def test_d2ls_mxnet_custom_layer_with_gluon_1s_params_get_runs_as_written():
    np = need("numpy")

    class MyDense(nn.Block):  # d2l's MXNet 5.4, as written (np.dot as plexus.dot)
        def __init__(self, units, in_units, **kwargs):
            super().__init__(**kwargs)
            self.weight = self.params.get('weight', shape=(in_units, units))
            self.bias = self.params.get('bias', shape=(units,))

        def forward(self, x):
            linear = plexus.dot(x, self.weight.data(ctx=x.ctx)) + self.bias.data(ctx=x.ctx)
            return plexus.relu(linear)

    dense = MyDense(units=3, in_units=5)
    assert dense.params.keys() == ["weight", "bias"]
    assert dense.params.get("weight") is not None and dense.params.get("weight").shape == (5, 3)
    dense.initialize()
    x = plexus.random.uniform(size=(2, 5))
    want = np.maximum(x.asnumpy() @ dense.weight.data().asnumpy() + dense.bias.data().asnumpy(), 0)
    np.testing.assert_allclose(dense(x).asnumpy(), want, rtol=1e-6)
    with pytest.raises(TypeError, match="no parameter 'gamma' here, and a new one needs shape="):
        dense.params.get("gamma")


def test_a_block_written_in_python_with_parameters_of_its_own_as_d2l_custom_layers():
    np = need("numpy")

    class MyDense(nn.Block):  # d2l 5.4
        def __init__(self, units, in_units):
            super().__init__()
            self.weight = nn.Parameter("weight", shape=(in_units, units))
            self.bias = nn.Parameter("bias", shape=(units,), init="ones")

        def forward(self, x):
            return plexus.relu(plexus.dot(x, self.weight.data()) + self.bias.data())

    net = nn.Sequential()
    net.add(MyDense(8, 5), MyDense(1, 8))
    net.initialize()
    assert net.collect_params().keys() == ["0.weight", "0.bias", "1.weight", "1.bias"]
    assert net[0].bias.data().asnumpy().tolist() == [1.0] * 8
    net[1].weight.data()[:] = plexus.abs(net[1].weight.data())  # an output above 0: the step below changes w0
    x = plexus.random.uniform(size=(2, 5))
    w0, b0, w1, b1 = (p.data().asnumpy() for p in net.collect_params().values())
    want = np.maximum(np.maximum(x.asnumpy() @ w0 + b0, 0) @ w1 + b1, 0)
    assert np.abs(net(x).asnumpy() - want).max() < 1e-5
    trainer = nn.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1})
    with autograd.record():
        loss = net(x).sum()
    loss.backward()
    trainer.step(2)
    assert np.abs(net[0].weight.data().asnumpy() - w0).max() > 0
    other = nn.Sequential()
    other.add(MyDense(8, 5), MyDense(1, 8))
    _loads_what_it_saved(net, other, x)

    for kwargs, message in [(dict(shape=(0, 3)), "every dimension of the shape must be above 0"),
                            (dict(shape=(2,), init="gamma"), "initializer 'gamma' is not an Initializer"),
                            (dict(shape=(2,), grad_req="sum"), "grad_req 'sum' is not 'write', 'add' or 'null'")]:
        with pytest.raises(ValueError, match=message):
            nn.Parameter("w", **kwargs)

    class Twice(nn.Block):
        def __init__(self):
            super().__init__()
            self.a = nn.Parameter("w", shape=(2,))
            self.b = nn.Parameter("w", shape=(2,))

    with pytest.raises(ValueError, match="already has a parameter named 'w'"):
        Twice()
    with pytest.raises(TypeError, match="only a Block written in Python registers"):
        nn.Dense(2)._register_param(nn.Parameter("w", shape=(2,)))
    with pytest.raises(AttributeError, match="has no weight"):
        nn.Sequential().weight


def test_a_step_refuses_a_layer_the_forward_pass_skipped_as_gluon_does():
    np = need("numpy")

    class Skips(nn.Block):  # a layer defined and never used: a bug Gluon's trainer reports
        def __init__(self):
            super().__init__()
            self.used = nn.Dense(3)
            self.forgotten = nn.Dense(3)

        def forward(self, x):
            return self.used(x)

    net = Skips()
    net.initialize()
    x = plexus.random.uniform(size=(4, 5))
    net.forgotten(x)  # shapes known: every parameter is initialized
    trainer = nn.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1})
    with autograd.record():
        loss = net(x).sum()
    loss.backward()
    params = net.collect_params()
    before = {k: v.data().asnumpy() for k, v in params.items()}
    with pytest.raises(plexus.InvalidArgumentError, match="parameter forgotten.weight on cpu.0. was not written by backward"):
        trainer.step(4)
    assert all((params[k].data().asnumpy() == v).all() for k, v in before.items())  # nothing changed
    trainer.step(4, ignore_stale_grad=True)
    assert np.abs(params["used.weight"].data().asnumpy() - before["used.weight"]).max() > 0
    assert (params["forgotten.weight"].data().asnumpy() == before["forgotten.weight"]).all()
    with pytest.raises(RuntimeError, match="used.weight"):  # a second step needs a second backward pass
        trainer.step(4)


def test_writing_in_place_as_d2l_from_scratch_code_does():
    np, torch = need("numpy"), need("torch")
    from plexus import autograd
    # d2l's from-scratch sgd, PyTorch style (`param -= ...`) and MXNet style
    # (`param[:] = ...`): the list's tensors themselves change.
    w = plexus.array([1.0, 2.0])
    w.attach_grad()
    params = [w]
    for step in range(2):
        with autograd.record():
            l = (w * w).sum()
        l.backward()
        for p in params:
            if step == 0:
                p -= 0.1 * p.grad / 1
            else:
                p[:] = p - 0.1 * p.grad
    np.testing.assert_allclose(w.asnumpy(), [0.64, 1.28], rtol=1e-6)  # w * 0.8 * 0.8
    # Rows, the whole tensor and memory shared through DLPack.
    x = plexus.array([[1.0, 2.0], [3.0, 4.0]])
    t = torch.from_dlpack(x)
    x[1] = plexus.array([7.0, 8.0])
    x[0] = 5
    assert x.tolist() == [[5.0, 5.0], [7.0, 8.0]] and t.tolist() == [[5.0, 5.0], [7.0, 8.0]]
    x[...] = np.array([1.0, 2.0])  # broadcast, as NumPy's
    x *= 3
    assert x.tolist() == [[3.0, 6.0], [3.0, 6.0]] and t.tolist() == x.tolist()
    x[0:1] = [[0.5, 0.25]]
    assert x.tolist() == [[0.5, 0.25], [3.0, 6.0]]
    # Refusals: a dtype the result cannot keep, a shape that does not broadcast, while recording.
    i = plexus.array([1, 2], dtype="int32")
    with pytest.raises(TypeError, match="the result is float64 and x is int32; in place it would lose fractions or values int32 cannot hold"):
        i /= 2
    with pytest.raises(ValueError, match="do not broadcast"):
        x[...] = plexus.ones((3,))
    row = plexus.ones((1, 2))
    with pytest.raises(ValueError, match=r"values of shape \(3, 1\) do not broadcast to the tensor's shape \(1, 2\)"):
        row[...] = plexus.ones((3, 1))  # broadcasts to (3, 2), larger than the tensor
    strided = plexus.arange(4)
    strided[0:4:2] = 0  # a number into every other row, as NumPy's
    assert strided.tolist() == [0.0, 1.0, 0.0, 3.0]
    strided[0:4:2] = plexus.array([5.0, 6.0])  # values into every other row, as NumPy's (it had been refused)
    assert strided.tolist() == [5.0, 1.0, 6.0, 3.0]
    with pytest.raises(ValueError, match="a scalar tensor cannot be sliced"):
        plexus.array(1.0)[:] = 2
    with autograd.record():
        doubled = w * 2
    with pytest.raises(RuntimeError, match=r"a recorded result whose graph backward\(\) has not used"):
        doubled[...] = 0
    with autograd.record():
        with pytest.raises(RuntimeError, match="while autograd records"):
            w -= 1
    assert i.tolist() == [1, 2] and x.tolist() == [[0.5, 0.25], [3.0, 6.0]]


def test_clip_global_norm_scales_the_gradients_in_place_as_gluon_and_torch():
    np, torch = need("numpy"), need("torch")
    from plexus import autograd
    net = nn.Dense(2, in_units=3)
    net.initialize()
    x = np.random.RandomState(0).rand(4, 3).astype(np.float32)
    with autograd.record():
        l = (net(plexus.array(x)) ** 2).sum()
    l.backward()
    params = list(net.collect_params().values())
    lin = torch.nn.Linear(3, 2)
    with torch.no_grad():
        lin.weight.copy_(torch.from_numpy(params[0].data().asnumpy()))
        lin.bias.copy_(torch.from_numpy(params[1].data().asnumpy()))
    (lin(torch.from_numpy(x)) ** 2).sum().backward()
    want = torch.nn.utils.clip_grad_norm_(lin.parameters(), 0.1)
    norm = nn.clip_global_norm([p.grad() for p in params], 0.1)
    assert abs(norm - float(want)) < 1e-4 * float(want)
    np.testing.assert_allclose(params[0].grad().asnumpy(), lin.weight.grad.numpy(), rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(params[1].grad().asnumpy(), lin.bias.grad.numpy(), rtol=1e-5, atol=1e-7)


def test_floor_division_by_a_scalar_its_dtype_cannot_hold_as_numpy():
    np = need("numpy")
    u = plexus.array(np.array([100, 7], np.uint8))
    assert (u // -1).tolist() == [-100, -7] and (u // -2).tolist() == [-50, -4]
    assert (300 // u).tolist() == [3, 42]


def test_a_block_without_a_weight_raises_attribute_error_so_hasattr_works():
    assert not hasattr(nn.BatchNorm(), "weight") and getattr(nn.LayerNorm(), "bias", None) is None
    assert hasattr(nn.Dense(2), "weight")
    with pytest.raises(AttributeError, match="has no weight"):
        nn.BatchNorm().weight


def test_dense_with_flatten_false_maps_the_last_axis_as_gluon_and_torch_linear():
    np, torch = need("numpy"), need("torch")
    from plexus import autograd
    x = np.random.RandomState(5).rand(2, 3, 4).astype(np.float32)
    dense = nn.Dense(5, flatten=False)  # d2l's attention projections and position-wise FFN
    dense.initialize()
    px = plexus.array(x)
    px.attach_grad()
    with autograd.record():
        y = dense(px)
        l = (y * y).sum()
    l.backward()
    assert y.shape == (2, 3, 5) and dense.weight.data().shape == (5, 4)
    lin = torch.nn.Linear(4, 5)
    with torch.no_grad():
        lin.weight.copy_(torch.from_numpy(dense.weight.data().asnumpy()))
        lin.bias.copy_(torch.from_numpy(dense.bias.data().asnumpy()))
    tx = torch.tensor(x, requires_grad=True)
    ty = lin(tx)
    (ty * ty).sum().backward()
    np.testing.assert_allclose(y.asnumpy(), ty.detach().numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(px.grad.asnumpy(), tx.grad.numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(dense.weight.grad().asnumpy(), lin.weight.grad.numpy(), rtol=1e-5, atol=1e-6)
    with pytest.raises(plexus.ShapeError, match=r"Dense\(4 -> 5\): the input \(2, 0\) has no features"):
        dense(plexus.ones((2, 0)))  # it had named px_tensor_reshape
    flat = nn.Dense(5)
    flat.initialize()
    assert flat(plexus.ones((2, 3, 4))).shape == (2, 5)  # the default still flattens, as Gluon's
    with pytest.raises(ValueError, match="features axis"):
        dense(plexus.array(1.0))


def test_initializers_as_mxnet_init_set_the_weights_and_leave_biases_and_batch_norm_alone():
    np = need("numpy")
    from plexus import init
    net = nn.Sequential()
    net.add(nn.Conv2D(64, kernel_size=3), nn.BatchNorm(), nn.Dense(10))
    net.initialize(init.Normal(sigma=0.05))  # d2l's net.initialize(init.Normal(sigma=0.01))
    net(plexus.ones((2, 16, 8, 8)))
    w = net[0].weight.data().asnumpy()
    assert abs(w.std() - 0.05) < 0.003 and abs(w.mean()) < 0.003
    assert (net[0].bias.data().asnumpy() == 0).all() and (net[1].gamma.data().asnumpy() == 1).all()
    assert net[1].running_var.grad_req == "null" and net[1].beta.shape == (64,)
    with pytest.raises(AttributeError, match="has no parameter beta"):
        nn.LayerNorm(center=False).beta
    # Xavier's uniform limit is torch.nn.init.xavier_uniform_'s: sqrt(6 / (fan_in + fan_out)).
    net.initialize(init=init.Xavier(), force_reinit=True)
    limit = math.sqrt(6.0 / (16 * 9 + 64 * 9))
    w = net[0].weight.data().asnumpy()
    assert np.abs(w).max() <= limit and np.abs(w).max() > 0.98 * limit
    net.initialize(init="msraprelu", force_reinit=True)  # MXNet's registered names, any case
    net.collect_params().initialize(init=init.Constant(0.5), force_reinit=True)
    assert (net[2].weight.data().asnumpy() == 0.5).all() and (net[2].bias.data().asnumpy() == 0).all()
    net[2].bias.initialize(init=init.One(), force_reinit=True)  # overrides the parameter's own, as Gluon's
    assert (net[2].bias.data().asnumpy() == 1).all()
    assert repr(init.Xavier(rnd_type="gaussian", factor_type="in", magnitude=2)) == "Xavier(gaussian, in, 2)"
    assert isinstance(init.Uniform(), init.Initializer)
    with pytest.raises(ValueError, match="initializer 'orthogonal' is not an Initializer"):
        net.initialize(init="orthogonal", force_reinit=True)
    with pytest.raises(plexus.InvalidArgumentError, match="sigma must be finite and >= 0"):
        init.Normal(-0.1)


def test_an_initializer_written_in_python_as_d2ls_my_init():
    np = need("numpy")
    from plexus import init
    seen = []

    class MyInit(init.Initializer):  # d2l's "Parameter Management", with NumPy as its np
        def _init_weight(self, name, data):
            seen.append((name, data.shape, str(data.device)))
            data[:] = np.random.uniform(-10, 10, data.shape)
            data *= np.abs(data.asnumpy()) >= 5

    net = nn.Sequential()
    net.add(nn.Dense(8, activation="relu"), nn.Dense(1))  # shapes inferred at the first call
    net.initialize(MyInit(), device=[plexus.cpu(0), plexus.cpu(1)])
    assert seen == []  # deferred: nothing is known yet
    net(plexus.ones((2, 4)))
    assert [(shape, dev) for _, shape, dev in seen] == [((8, 4), "cpu(0)"), ((1, 8), "cpu(0)")]  # weights only, once
    w = net[0].weight.data().asnumpy()
    assert ((np.abs(w) >= 5) | (w == 0)).all() and (np.abs(w) <= 10).all() and (w != 0).any()
    assert (net[0].weight.data(plexus.cpu(1)).asnumpy() == w).all()  # the other device gets a copy
    assert (net[0].bias.data().asnumpy() == 0).all()  # biases start at zero, as Gluon's
    assert repr(MyInit()) == "MyInit()" and repr(init.create(MyInit())) == "MyInit()"

    class Diagonal(init.Initializer):  # a parameter's own initializer, and force_reinit
        def _init_weight(self, name, data):
            data[...] = plexus.array(np.eye(*data.shape))

    p = nn.Parameter("scale", (2, 3), init=Diagonal())
    p.initialize()
    assert p.data().asnumpy().tolist() == [[1, 0, 0], [0, 1, 0]]
    net.initialize(Diagonal(), force_reinit=True)
    assert net[1].weight.data().asnumpy().tolist() == [[1, 0, 0, 0, 0, 0, 0, 0]]

    class Failing(init.Initializer):
        def _init_weight(self, name, data):
            raise KeyError(name)

    with pytest.raises(KeyError):  # the initializer's own exception, and the parameter keeps its values
        net.initialize(Failing(), force_reinit=True)
    assert net[1].weight.data().asnumpy().tolist() == [[1, 0, 0, 0, 0, 0, 0, 0]]

    # Deferred, the initializer runs inside the first forward call, under record() here; one that
    # fails leaves the layer waiting, and the next call tries again.
    class Sevens(init.Initializer):
        fail = True

        def _init_weight(self, name, data):
            if Sevens.fail:
                raise RuntimeError("not yet")
            data[:] = 7

    layer = nn.Dense(2)
    layer.initialize(Sevens())
    with autograd.record():
        with pytest.raises(RuntimeError, match="not yet"):
            layer(plexus.ones((1, 3)))
    Sevens.fail = False
    with autograd.record():
        y = layer(plexus.ones((1, 3)))
    y.backward()
    assert y.tolist() == [[21, 21]] and layer.weight.grad().tolist() == [[1, 1, 1], [1, 1, 1]]
    # An initializer that lets the GIL go (asnumpy, sleep) while two threads make the first call, and one
    # that initializes its layer again from inside: every call computes with whole values.
    import threading
    import time

    class Slow(init.Initializer):
        def _init_weight(self, name, data):
            data[:] = 1
            data.asnumpy()
            time.sleep(0.1)
            data[:] = 2

    shared_layer, results = nn.Dense(2), {}
    shared_layer.initialize(Slow())

    def first_call(k):
        try:
            results[k] = shared_layer(plexus.ones((1, 3))).tolist()
        except Exception as e:  # noqa: BLE001 (reported by the assert below)
            results[k] = repr(e)

    threads = [threading.Thread(target=first_call, args=(k,)) for k in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == {0: [[6.0, 6.0]], 1: [[6.0, 6.0]]}

    class Again(init.Initializer):
        def _init_weight(self, name, data):
            data[:] = 1
            if not getattr(self, "done", False):
                self.done = True
                reentered.initialize(init.One(), force_reinit=True)

    reentered = nn.Dense(2)
    reentered.initialize(Again())
    assert reentered(plexus.ones((1, 3))).tolist() == [[3.0, 3.0]]
    assert reentered(plexus.ones((1, 3))).tolist() == [[3.0, 3.0]]
    # Initializers of your own are equal only to themselves; Plexus's by their settings.
    a, b = Sevens(), Sevens()
    assert a == a and a != b and a != init.Xavier() and init.Xavier() != a and len({a, b, init.Xavier()}) == 3
    assert init.Normal(0.5) == init.Normal(0.5) and init.Normal(0.5) != init.Normal(0.1) and init.Zero() != 0

    class Scaled(init.Initializer):  # settings passed up to the base, as MXNet's initializers do
        def __init__(self, scale):
            super().__init__(scale=scale)
            self.scale = scale

        def _init_weight(self, name, data):
            data[:] = self.scale

    assert Scaled(3.0)._kwargs == {"scale": 3.0}
    p = nn.Parameter("w", (2,), init=Scaled(3.0))
    p.initialize()
    assert p.data().tolist() == [3.0, 3.0]

    class NoMethod(init.Initializer):
        pass

    with pytest.raises(TypeError, match="NoMethod subclasses plexus.init.Initializer without an _init_weight"):
        net.initialize(NoMethod(), force_reinit=True)


def test_freezing_parameters_as_gluon_fine_tuning_does_and_accumulating_gradients():
    np = need("numpy")
    net = nn.Sequential()
    net.add(nn.Dense(8, activation="relu", in_units=4), nn.BatchNorm(in_channels=8), nn.Dense(3, in_units=8))
    net.initialize()
    trainer = nn.Trainer(net.collect_params(), "adam", {"learning_rate": 0.01})
    loss = plexus.loss.SoftmaxCrossEntropyLoss()
    x, y = plexus.random.normal(shape=(6, 4)), plexus.array([0, 1, 2, 0, 1, 2])

    def step():
        with autograd.record():
            l = loss(net(x), y)
        l.backward()
        trainer.step(6)

    step()
    net[0].collect_params().setattr("grad_req", "null")  # d2l's finetune: the features frozen
    assert [p.grad_req for p in net.collect_params().values()] == ["null", "null", "write", "write", "null", "null",
                                                                  "write", "write"]
    frozen, head = net[0].weight.data().asnumpy(), net[2].weight.data().asnumpy()
    step()
    assert (net[0].weight.data().asnumpy() == frozen).all() and (net[2].weight.data().asnumpy() != head).any()
    net.collect_params().setattr("grad_req", "write")  # running statistics stay null: they are not differentiable
    assert net.collect_params()["1.running_mean"].grad_req == "null"
    with pytest.raises(plexus.InvalidArgumentError, match="not differentiable"):
        net.collect_params()["1.running_var"].grad_req = "write"
    step()
    assert (net[0].weight.data().asnumpy() != frozen).any()
    # Biases without weight decay, as d2l's net.collect_params('.*bias').setattr('wd_mult', 0).
    assert net.collect_params(".*bias").keys() == ["0.bias", "2.bias"]
    net.collect_params(".*bias").setattr("wd_mult", 0)
    assert net[0].bias.wd_mult == 0 and net[0].weight.wd_mult == 1
    with pytest.raises(AttributeError, match="'lr' is not grad_req, lr_mult or wd_mult"):
        net.collect_params().setattr("lr", 1)
    # grad_req 'add': two backward passes sum, zero_grad clears.
    net.collect_params().setattr("grad_req", "add")
    net.collect_params().zero_grad()
    for _ in range(2):
        with autograd.record():
            l = loss(net(x), y)
        l.backward()
    twice = net[2].weight.grad().asnumpy()
    net.collect_params().zero_grad()
    assert (net[2].weight.grad().asnumpy() == 0).all()
    with autograd.record():
        l = loss(net(x), y)
    l.backward()
    assert np.allclose(twice, 2 * net[2].weight.grad().asnumpy(), rtol=1e-5, atol=1e-7)


def test_loss_options_as_gluon_and_d2l_masked_sequence_loss_match_pytorch():
    np, torch = need("numpy"), need("torch")
    from plexus import loss
    rng = np.random.default_rng(0)
    pred, lab = rng.normal(size=(4, 5, 7)).astype(np.float32), rng.integers(0, 7, size=(4, 5))

    class MaskedSoftmaxCELoss(loss.SoftmaxCELoss):  # d2l 10.7, its forward called by loss(...)
        def forward(self, pred, label, valid_len):
            w = np.ones(label.shape + (1,), np.float32)
            for i, v in enumerate(valid_len):
                w[i, v:] = 0
            return super().forward(pred, label, plexus.array(w))

    p = plexus.array(pred)
    p.attach_grad()
    with autograd.record():
        got = MaskedSoftmaxCELoss()(p, plexus.array(lab, dtype="int32"), [5, 3, 1, 0])
    got.backward()
    tp = torch.tensor(pred, requires_grad=True)
    mask = torch.tensor([[1.0] * v + [0.0] * (5 - v) for v in [5, 3, 1, 0]])
    want = (torch.nn.functional.cross_entropy(tp.permute(0, 2, 1), torch.tensor(lab), reduction="none") * mask).mean(1)
    want.sum().backward()
    assert np.abs(got.asnumpy() - want.detach().numpy()).max() < 1e-6
    assert np.abs(p.grad.asnumpy() - tp.grad.numpy()).max() < 1e-6
    # Dense labels over axis 1; from_logits with a weight; probabilities for BCE; sample weights.
    q = rng.normal(size=(3, 4, 2)).astype(np.float32)
    dist = rng.random(size=(3, 4, 2)).astype(np.float32)
    dist /= dist.sum(1, keepdims=True)
    dense = loss.SoftmaxCrossEntropyLoss(axis=1, sparse_label=False)(plexus.array(q), plexus.array(dist))
    assert np.abs(dense.asnumpy() - -(dist * torch.log_softmax(torch.tensor(q), 1).numpy()).sum(1).mean(1)).max() < 1e-6
    logp = torch.log_softmax(torch.tensor(pred[:, 0]), 1).numpy()
    picked = loss.SoftmaxCrossEntropyLoss(from_logits=True, weight=2)(plexus.array(logp), plexus.array(lab[:, 0]))
    assert np.abs(picked.asnumpy() - 2 * -logp[np.arange(4), lab[:, 0]]).max() < 1e-6
    prob, y = rng.random(size=(4, 3)).astype(np.float32), (rng.random(size=(4, 3)) > 0.5).astype(np.float32)
    bce = loss.SigmoidBCELoss(from_sigmoid=True)(plexus.array(prob), plexus.array(y))
    torch_bce = torch.nn.functional.binary_cross_entropy(torch.tensor(prob), torch.tensor(y), reduction="none")
    assert np.abs(bce.asnumpy() - torch_bce.mean(1).numpy()).max() < 1e-6
    sw = np.array([[1.0], [0.0], [2.0], [1.0]], np.float32)
    l2 = loss.L2Loss()(plexus.array(prob), plexus.array(y), sample_weight=plexus.array(sw))
    assert np.abs(l2.asnumpy() - ((prob - y) ** 2 / 2).mean(1) * sw.ravel()).max() < 1e-6
    with pytest.raises(plexus.ShapeError, match=r"sample_weight of shape \(4, 3, 2\) does not broadcast"):
        loss.L1Loss()(plexus.array(prob), plexus.array(y), plexus.ones((4, 3, 2)))
    with pytest.raises(plexus.ShapeError, match=r"class indices for a prediction \(4, 5, 7\)"):
        loss.SoftmaxCELoss()(plexus.array(pred), plexus.array(lab[:, :2]))
    with pytest.raises(ValueError, match="batch_axis must be 0"):
        loss.L2Loss(batch_axis=1)


def test_trainer_takes_a_list_or_dict_of_parameters_and_a_schedule_in_its_options_as_gluon():
    np = need("numpy")
    from plexus import lr_scheduler
    net = nn.Sequential()
    net.add(nn.Dense(4, in_units=3), nn.BatchNorm(axis=1, in_channels=4), nn.Dense(2, in_units=4))
    net.initialize()
    schedule = lr_scheduler.FactorScheduler(step=1, factor=0.5, base_lr=0.2)
    trainer = nn.Trainer(net.collect_params().values(), "sgd", {"learning_rate": 0.2, "lr_scheduler": schedule})
    x, y = plexus.random.normal(shape=(5, 3)), plexus.array([0, 1, 0, 1, 1])
    rates = []
    for _ in range(3):
        with autograd.record():
            l = plexus.loss.SoftmaxCELoss()(net(x), y)
        l.backward()
        w = net[2].weight.data().asnumpy()
        g = net[2].weight.grad().asnumpy()
        trainer.step(5)
        rates.append(trainer.learning_rate)
        assert np.allclose(net[2].weight.data().asnumpy(), w - rates[-1] * g / 5, atol=1e-6)
    assert rates == [0.2, 0.1, 0.05]
    by_name = nn.Trainer(dict(net.collect_params().items()), "adam")
    assert by_name.optimizer == "adam"
    with pytest.raises(TypeError, match="a ParameterDict, a dict or a list of Parameters; got a int"):
        nn.Trainer([1, 2], "sgd")
    with pytest.raises(ValueError, match="BatchNorm: axis 3: Plexus normalises the channels of axis 1 only"):
        nn.BatchNorm(axis=3)
    net.zero_grad()
    assert (net[0].weight.grad().asnumpy() == 0).all()


def test_initialization_and_freezing_details_as_gluon():
    np = need("numpy")
    from plexus import init

    class MyDense(nn.Block):  # d2l 5.4: its bias starts at zero, as Gluon's initializers set biases by name
        def __init__(self):
            super().__init__()
            self.weight = nn.Parameter("weight", shape=(3, 2))
            self.bias = nn.Parameter("bias", shape=(2,))
            self.count = nn.Parameter("count", shape=(1,), init="zeros", differentiable=False)

        def forward(self, x):
            return plexus.dot(x, self.weight.data()) + self.bias.data()

    net = MyDense()
    net.initialize(init.Normal(0.5))
    assert (net.bias.data().asnumpy() == 0).all() and net.weight.data().asnumpy().std() > 0.1
    net.collect_params().setattr("grad_req", "write")
    assert net.count.grad_req == "null" and not net.count.differentiable
    # An explicit initializer on a layer still waiting for its shape is kept by a later initialize().
    lazy = nn.Sequential()
    lazy.add(nn.Dense(2))
    lazy[0].weight.initialize(init=init.Constant(2))
    with pytest.warns(UserWarning, match="0.weight already initialized"):
        lazy.initialize(init.Normal(0.01))
    lazy(plexus.ones((1, 3)))
    assert (lazy[0].weight.data().asnumpy() == 2).all()
    with pytest.warns(UserWarning, match="weight already initialized, left as it is"):
        lazy[0].weight.initialize()
    # Setting grad_req to what it is keeps the gradient; zero_grad is allowed while recording and
    # does nothing to a frozen parameter.
    net.collect_params().setattr("grad_req", "add")
    with autograd.record():
        l = net(plexus.ones((1, 3))).sum()
    l.backward()
    net.weight.grad_req = "add"
    assert (net.weight.grad().asnumpy() == 1).all()
    with autograd.record():
        net.collect_params().zero_grad()
    assert (net.weight.grad().asnumpy() == 0).all()
    net.weight.grad_req = "null"
    net.weight.zero_grad()
    with pytest.raises(TypeError, match="grad_req is 'write', 'add' or 'null', not a int"):
        net.collect_params().setattr("grad_req", 1)
    assert len({init.Normal(0.1), init.Normal(0.1), init.Xavier()}) == 2


def test_review_fixes_losses_schedules_and_gradients_through_copies():
    np, torch = need("numpy"), need("torch")
    from plexus import loss, lr_scheduler
    # A saturated sigmoid (exactly 0 or 1) keeps the probability loss finite, as Gluon's 1e-12 does.
    got = loss.SigmoidBCELoss(from_sigmoid=True)(plexus.array([[1.0, 0.0, 1.0, 0.0]]), plexus.array([[1.0, 0.0, 0.0, 1.0]]))
    assert abs(got.item() - (-2 * math.log(np.float32(1e-12))) / 4) < 1e-4
    # Labels of as many values are reshaped to the prediction's shape (d2l's (N,) labels, (N, 1) outputs).
    assert loss.L2Loss()(plexus.zeros((4, 1)), plexus.ones((4,))).tolist() == [0.5] * 4
    with pytest.raises(plexus.ShapeError, match="they must have as many values"):
        loss.L1Loss()(plexus.zeros((4, 1)), plexus.ones((3,)))
    # The class axis first on a rank-2 prediction: one value per sample whatever the weight.
    p = np.random.default_rng(1).random((3, 5)).astype(np.float32)
    labels = np.array([0, 1, 2, 0, 1])
    for weight in (1, 2):
        ce = loss.SoftmaxCELoss(axis=0, weight=weight)(plexus.array(p), plexus.array(labels))
        assert ce.shape == (1,)
        want = torch.nn.functional.cross_entropy(torch.tensor(p).T, torch.tensor(labels)).item() * weight
        assert abs(ce.item() - want) < 1e-5
    # sample_weight is differentiable, as PyTorch's weights are.
    pred, w = plexus.array(p), plexus.array(np.array([[1.0], [2.0], [0.5]], np.float32))
    pred.attach_grad(), w.attach_grad()
    with autograd.record():
        l = loss.SoftmaxCELoss()(pred, plexus.array([0, 1, 2]), w)
    l.backward()
    ce = torch.nn.functional.cross_entropy(torch.tensor(p), torch.tensor([0, 1, 2]), reduction="none")
    assert np.allclose(w.grad.asnumpy().ravel(), ce.numpy(), atol=1e-6)
    if plexus.num_gpus() == 0:
        with pytest.raises(plexus.DeviceMismatchError, match="sample_weight is on cpu\\(1\\)"):
            loss.L2Loss()(plexus.zeros((2, 1)), plexus.ones((2, 1)), plexus.ones((2, 1), device=plexus.cpu(1)))
    # copy() and copyto() pass the gradient back, as MXNet's copy and PyTorch's clone and to().
    x = plexus.array([1.0, 2.0])
    x.attach_grad()
    with autograd.record():
        z = (x * 3 + x.copy() * 2 + x.copyto(plexus.cpu(1)).copyto(plexus.cpu(0))).sum()
    z.backward()
    assert x.grad.tolist() == [6.0, 6.0]
    assert plexus.sum(plexus.ones((2, 3, 4)), keepdims=True).shape == (1, 1, 1)
    assert plexus.ones((2, 3)).argmin(keepdims=True).shape == (1, 1)
    # Schedules: a learning_rate beside a schedule becomes its base rate (MXNet warns the same), and
    # schedules written in Python (d2l's SquareRootScheduler; a subclass of LRScheduler) drive a trainer.
    net = nn.Sequential()
    net.add(nn.Dense(2, in_units=3))
    net.initialize()
    factor = lr_scheduler.FactorScheduler(step=1, factor=0.5, base_lr=0.01)
    with pytest.warns(UserWarning, match="overwritten by learning_rate"):
        trainer = nn.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.5, "lr_scheduler": factor})
    assert factor.base_lr == 0.5 and trainer.learning_rate == 0.5

    class SquareRootScheduler:
        def __init__(self, lr=0.1):
            self.lr = lr

        def __call__(self, num_update):
            return self.lr * pow(num_update + 1.0, -0.5)

    class Halving(lr_scheduler.LRScheduler):
        def __call__(self, num_update):
            return self.base_lr / num_update

    assert isinstance(factor, lr_scheduler.LRScheduler)
    for schedule, rates in ((SquareRootScheduler(), [0.1 / math.sqrt(n + 1) for n in (1, 2)]),
                            (Halving(0.3), [0.3, 0.15])):
        trainer = nn.Trainer(net.collect_params(), "sgd", {"lr_scheduler": schedule})
        for want in rates:
            with autograd.record():
                l = net(plexus.ones((1, 3))).sum()
            l.backward()
            trainer.step(1)
            assert abs(trainer.learning_rate - want) < 1e-12
    trainer.set_lr_scheduler(lambda n: float("nan"))
    with autograd.record():
        l = net(plexus.ones((1, 3))).sum()
    l.backward()
    with pytest.raises(plexus.InvalidArgumentError, match="the learning-rate schedule gave nan for update 3"):
        trainer.step(1)
    with pytest.raises(TypeError, match="callable of the update's number, not a int"):
        trainer.set_lr_scheduler(3)
    assert repr(net.collect_params()) == "ParameterDict (\n  0.weight (shape=(2, 3), grad_req=write)\n" \
                                         "  0.bias (shape=(2,), grad_req=write)\n)"


def test_a_schedule_that_raises_leaves_the_gradients_for_a_retry_and_a_bad_rate_is_named():
    np = need("numpy")
    devices = [plexus.cpu(0), plexus.cpu(1)]
    net = nn.Sequential()
    net.add(nn.Dense(1, in_units=2))
    net.initialize(ctx=devices)
    calls = []

    def schedule(n):
        calls.append(n)
        if len(calls) == 1:
            raise RuntimeError("once")
        return 1.0

    trainer = nn.Trainer(net.collect_params(), "sgd", {"lr_scheduler": schedule})
    before = net[0].weight.data().asnumpy()
    parts = nn.split_and_load(plexus.ones((2, 2)), devices)
    with autograd.record():
        losses = [net(p).sum() for p in parts]
    for l in losses:
        l.backward()
    with pytest.raises(RuntimeError, match="once"):
        trainer.step(1)
    trainer.step(1)  # the gradients summed over the two devices once: 2 per weight
    assert np.allclose(net[0].weight.data().asnumpy() - before, -2, atol=1e-6)
    trainer.set_lr_scheduler(lambda n: "fast")
    with autograd.record():
        losses = [net(p).sum() for p in parts]
    for l in losses:
        l.backward()
    with pytest.raises(plexus.InvalidArgumentError, match="the learning-rate schedule gave a str for update 2"):
        trainer.step(1)
    with pytest.warns(UserWarning, match="learning_rate in optimizer_params is not used"):
        nn.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.7, "lr_scheduler": lambda n: 0.1})


def test_a_state_made_for_a_skipped_step_saves_and_loads(tmp_path):
    w = nn.Parameter("w", shape=(2,), init="ones")
    w.initialize()
    trainer = nn.Trainer([w], "adam")
    with autograd.record():
        l = (w.data() * float("inf")).sum()
    l.backward()
    assert not trainer.step_if_finite(1)  # skipped: its state was made, no update counted
    trainer.save_states(tmp_path / "s")
    again = nn.Trainer([w], "adam")
    again.load_states(tmp_path / "s")
    assert again.num_update == 0


def test_the_remaining_refusals_of_schedules_losses_and_joining():
    from plexus import lr_scheduler, loss
    warm = lr_scheduler.FactorScheduler(step=1, base_lr=0.1, warmup_steps=2, warmup_begin_lr=0.05)
    with pytest.raises(plexus.InvalidArgumentError, match="base_lr must be finite and >= warmup_begin_lr"):
        warm.base_lr = 0.01
    assert warm.base_lr == 0.1

    class Linear(lr_scheduler.LRScheduler):  # MXNet's base: a warm-up, then the subclass's own rule
        def __call__(self, n):
            return self.get_warmup_lr(n) if n < self.warmup_steps else self.base_lr

    s = Linear(base_lr=0.4, warmup_steps=4, warmup_begin_lr=0.0)
    assert [s(n) for n in (0, 2, 4)] == [0.0, 0.2, 0.4]
    with pytest.raises(ValueError, match="warmup_mode 'constant': only 'linear' is offered"):
        Linear(warmup_mode="constant")
    with pytest.raises(ValueError, match="warmup_begin_lr in \\[0, base_lr\\]"):
        Linear(base_lr=0.1, warmup_begin_lr=0.2)
    with pytest.raises(plexus.ShapeError, match=r"dense labels \(sparse_label false\) have the prediction's shape"):
        loss.SoftmaxCELoss(sparse_label=False)(plexus.ones((2, 3)), plexus.ones((2,)))
    a = plexus.ones((2, 2))
    with pytest.raises(TypeError, match="give the tensors as arguments or as tensors=, not both"):
        plexus.concat(a, tensors=[a])
    with pytest.raises(ValueError, match="squeeze: an axis is repeated"):
        plexus.ones((1, 2)).squeeze((0, -2))
    with pytest.raises(TypeError, match="a dict's keys are names"):
        plexus.save("unused", {1: a})


def test_a_daemon_thread_training_at_interpreter_exit_ends_quietly():
    # Python ends a daemon thread that takes the GIL back during finalization with a forced unwind;
    # the GIL, released in trainer.step and backward(), had been taken back in a noexcept destructor
    # (pybind11's gil_scoped_release): "terminate called without an active exception", SIGABRT.
    script = """
import threading, time
import plexus
from plexus import autograd, nn
net = nn.Sequential()
net.add(nn.Dense(256, activation="relu"), nn.Dense(10))
net.initialize()
trainer = nn.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1})
loss = plexus.loss.SoftmaxCrossEntropyLoss()
x, y = plexus.random.normal(shape=(256, 784)), plexus.array([i % 10 for i in range(256)])
def train():
    while True:
        with autograd.record():
            l = loss(net(x), y)
        l.backward()
        trainer.step(256)
threading.Thread(target=train, daemon=True).start()
time.sleep(0.3)
print("exiting")
"""
    for run in range(4):  # the thread is inside a released section at most exits; every run must be clean
        done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
        assert done.returncode == 0 and done.stdout == "exiting\n", (run, done.returncode, done.stderr[-2000:])
        assert "terminate" not in done.stderr


def test_daemon_threads_in_python_code_plexus_calls_at_exit_end_quietly():
    # Plexus calls Python (a Block's forward, an initializer's _init_weight, a schedule) with the GIL taken;
    # a daemon thread that Python ends there had released the GIL it no longer held on the way out
    # ("PyGILState_Release: thread state must be current", SIGABRT, or SIGSEGV).
    script = """
import sys, threading, time
import numpy as np
import plexus
from plexus import autograd, nn
class Ones(plexus.init.Initializer):
    def _init_weight(self, name, data):
        data[:] = np.ones(data.shape)
class MLP(nn.Block):
    def __init__(self):
        super().__init__()
        self.hidden = nn.Dense(256, activation="relu")
    def forward(self, x):
        return self.hidden(x) * sum(range(200))
def initializing():
    while True:
        d = nn.Dense(64)
        d.initialize(Ones())
        d(plexus.ones((4, 300)))
def forwarding():
    net = nn.Sequential()
    net.add(MLP(), nn.Dense(10))
    net.initialize()
    trainer = nn.Trainer(net.collect_params(), "sgd", {"lr_scheduler": lambda n: 0.01 * sum(range(100)) / 4950})
    x = plexus.random.uniform(shape=(64, 100))
    while True:
        with autograd.record():
            l = net(x).sum()
        l.backward()
        trainer.step(64)
for work in (initializing, initializing, forwarding, forwarding):
    threading.Thread(target=work, daemon=True).start()
time.sleep(0.7)
print("exiting")
"""
    for run in range(5):
        done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
        assert done.returncode == 0 and done.stdout == "exiting\n", (run, done.returncode, done.stderr[-2000:])
        assert done.stderr == "", (run, done.stderr[-2000:])


def test_daemon_threads_failing_or_holding_arrays_in_released_sections_at_exit_end_quietly(tmp_path):
    # A Plexus error on its way out of a released section when the GIL is taken back at exit (the thread
    # must not be unwound a second time: terminate), and a NumPy array held across one (the unwind freed
    # it without the GIL: PYTHONMALLOC=debug's fatal error). Finalization made long so threads are caught.
    bad = tmp_path / "bad.csv"
    bad.write_text("1,2\n" * 20000 + "1,x\n")
    failing = '''
import threading, plexus.data as pd
started = threading.Event()
def work():
    while True:
        try:
            pd.read_csv(%r)
        except Exception:
            pass
        started.set()
threading.Thread(target=work, daemon=True).start()
started.wait()
junk = [{"i": i} for i in range(2_000_000)]
''' % str(bad)
    holding = '''
import threading, plexus
x = plexus.ones((20_000_000,))
started = threading.Event()
def work():
    while True:
        x.asnumpy()
        started.set()
threading.Thread(target=work, daemon=True).start()
started.wait()
junk = [{"i": i} for i in range(2_000_000)]
'''
    env = dict(os.environ, PYTHONMALLOC="debug")
    for script in (failing, holding, failing, holding):
        done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, env=env)
        assert done.returncode == 0 and done.stderr == "", (done.returncode, done.stderr[-2000:])


def test_backward_through_a_result_two_losses_share_needs_retain_graph():
    x = plexus.array([1.0, 2.0, 3.0])
    x.attach_grad()

    def losses():
        with autograd.record():
            h = x * 2
            return h.sum(), (h * 3).sum()

    l1, l2 = losses()
    l1.backward()
    with pytest.raises(plexus.InvalidArgumentError, match="pass retain_graph"):
        l2.backward()  # it had crashed the interpreter
    m1, m2 = losses()
    m1.backward(retain_graph=True)
    m2.backward()
    assert x.grad.tolist() == [6.0, 6.0, 6.0]


def test_a_row_written_after_a_recorded_op_read_it_is_caught_as_any_write_in_place():
    x = plexus.array([[1.0, 2.0], [3.0, 4.0]])
    x.attach_grad()
    for write in (lambda: x.__setitem__(0, 0.0), lambda: x.__setitem__(slice(0, 1), 0.0)):
        with autograd.record():
            y = (x * x).sum()
        write()  # a view of x: it had escaped the check, and the gradient read the zeros
        with pytest.raises(plexus.InvalidArgumentError, match="written in place since"):
            y.backward()
    with autograd.record():
        z = x.exp()
    with pytest.raises(plexus.InvalidArgumentError, match="a recorded result whose graph backward"):
        z[0] = 100.0  # a row of a recorded result, as assigning the whole of it
    with autograd.record():
        y = (x * x).sum()
    y.backward()
    assert x.grad.tolist() == [[0.0, 0.0], [6.0, 8.0]]


def test_a_write_through_a_detached_view_or_a_slice_of_a_constant_is_caught():
    x = plexus.array([1.0, 2.0, 3.0])
    c = plexus.array([4.0, 5.0, 6.0])
    x.attach_grad()
    writes = (lambda: x.detach().__setitem__(0, 9.0),  # shares x's memory, carries no record
              lambda: c[1:3].__setitem__(slice(None), 0.0),  # a view of a constant mul's rule reads
              lambda: c.__setitem__(0, -1.0))
    for write in writes:
        with autograd.record():
            y = (x * c).sum()
        write()
        with pytest.raises(plexus.InvalidArgumentError, match="mul read while recording has been written"):
            y.backward()
    with autograd.record():
        y = (x + c).sum()  # add's rule reads no values: c may change
    c[:] = 0.0
    y.backward()
    assert x.grad.tolist() == [1.0, 1.0, 1.0]


def test_a_block_assigning_children_before_super_init_is_a_type_error_not_a_crash():
    class NoSuper(nn.Block):
        def __init__(self, child):
            self.child = child  # super().__init__() forgotten
            super().__init__()

    for child in (nn.Dense(2), nn.Parameter("w", shape=(2,))):
        with pytest.raises(TypeError, match="call super\\(\\).__init__\\(\\) first"):
            NoSuper(child)  # it had crashed the interpreter (SIGSEGV)

    class GetsParams(nn.Block):  # d2l's custom layer, its super().__init__() one line too late
        def __init__(self):
            self.weight = self.params.get("weight", shape=(2, 2))
            super().__init__()

    class AddsFirst(nn.Sequential):
        def __init__(self):
            self.add(nn.Dense(2))
            super().__init__()

    for made in (GetsParams, AddsFirst):
        with pytest.raises(TypeError, match="the block is not made yet: call super\\(\\).__init__\\(\\) first"):
            made()  # each had crashed the interpreter too, as len(), repr() and collect_params() did


def test_softmax_cross_entropy_refuses_float_labels_that_name_no_class():
    from plexus import loss
    pred = plexus.array([[1.0, 2.0, 0.5], [0.1, 0.2, 3.0]])
    sce = loss.SoftmaxCrossEntropyLoss()
    for bad, shown in (([1.5, 2.0], "found 1.5"), ([float("nan"), 2.0], "found nan")):
        with pytest.raises(plexus.InvalidArgumentError, match="not a class index .a whole number below 2.63.: " + shown):
            sce(pred, plexus.array(bad)).tolist()  # 1.5 had been class 1, NaN class 0, with a finite loss
    with pytest.raises(plexus.DeviceError, match="label 10000000000 in row 0 is outside"):
        sce(pred, plexus.array([1e10, 2.0])).tolist()  # a class out of range, named as given (not 2147483647)
    whole = sce(pred, plexus.array([1.0, 2.0])).tolist()
    assert whole == pytest.approx(sce(pred, plexus.array([1, 2], dtype="int32")).tolist(), abs=0)


def test_grad_req_switched_between_write_and_add_after_recording_keeps_the_gradient():
    d = nn.Dense(1, in_units=2, use_bias=False)
    d.initialize()
    d.weight.set_data(plexus.array([[1.0, 2.0]]))
    x = plexus.array([[3.0, 4.0]])
    with autograd.record():
        y = d(x).sum()
    d.collect_params().setattr("grad_req", "add")
    y.backward()  # it had written into gradients the switch had replaced: grad() read zeros
    assert d.weight.grad().tolist() == [[3.0, 4.0]]
    with autograd.record():
        y = d(x).sum()
    y.backward()
    assert d.weight.grad().tolist() == [[6.0, 8.0]]  # added
    d.collect_params().setattr("grad_req", "write")
    assert d.weight.grad().tolist() == [[6.0, 8.0]]  # the gradients stay, as Gluon's


def test_sequential_takes_gluons_indices_and_refuses_a_non_block_whole():
    net = nn.Sequential()
    a, b, c = nn.Dense(4), nn.Dense(3), nn.Dense(2)
    net.add(a, b, c)
    assert net[-1] is c and net[0] is a
    part = net[0:2]
    assert isinstance(part, nn.Sequential) and len(part) == 2 and part[1] is b
    backwards = net[::-1]
    assert len(backwards) == 3 and backwards[0] is c and backwards[2] is a
    np = need("numpy")
    assert net[np.int64(1)] is b  # any integer, as a list takes
    with pytest.raises(IndexError, match="layer 3 of 3"):
        net[3]
    with pytest.raises(IndexError, match="layer 1180591620717411303424 of 3"):
        net[2 ** 70]
    with pytest.raises(IndexError, match="layer -4 of 3"):
        net[-4]
    with pytest.raises(TypeError, match="integers or slices"):
        net["0"]
    with pytest.raises(TypeError, match="argument 2 is of type int, not a Block"):
        net.add(nn.Dense(5), 7)
    assert len(net) == 3  # nothing added: the first had been added before the second was refused
    net.initialize()
    out = net[0:2](plexus.ones((1, 5)))
    assert out.shape == (1, 3)
    assert net(plexus.ones((1, 5))).shape == (1, 2)


def test_a_layer_names_an_input_of_another_dtype_and_the_cast_it_needs():
    np = need("numpy")
    d = nn.Dense(2)
    d.initialize()
    with pytest.raises(plexus.DTypeError, match="the input is float64 and the layer's parameters float32; cast the input: x.astype\\('float32'\\)"):
        d(plexus.array(np.ones((1, 3))))
    c = nn.Conv2D(2, 3)
    c.initialize()
    with pytest.raises(plexus.DTypeError, match="the input is float64 and the layer's parameters float32"):
        c(plexus.array(np.ones((1, 1, 5, 5))))


def test_a_schedule_refuses_a_negative_update_number():
    from plexus import lr_scheduler
    with pytest.raises(plexus.InvalidArgumentError, match="the update number -1 is negative"):
        lr_scheduler.FactorScheduler(step=2)(-1)  # it had been -inf


def test_a_write_through_plexus_own_dlpack_alias_is_caught_as_any_write_in_place():
    w = plexus.array([1.0, 2.0, 3.0])
    w.attach_grad()
    with autograd.record():
        y = (w * w).sum()
    alias = plexus.from_dlpack(w)  # the same buffer again (it had been wrapped anew, with a count of its own)
    assert w._version == alias._version == 0
    alias[:] = 10.0
    assert w.tolist() == [10.0, 10.0, 10.0]
    assert w._version == alias._version == 1  # one memory, one count
    with pytest.raises(plexus.InvalidArgumentError, match="written in place since"):
        y.backward()  # it had given 2 * 10 for each


def test_a_block_cannot_hold_itself_through_its_children():
    net, inner = nn.Sequential(), nn.Sequential()
    net.add(inner)
    for cycle in (lambda: net.add(net), lambda: inner.add(net)):
        with pytest.raises(plexus.InvalidArgumentError, match="a block cannot hold itself"):
            cycle()  # each had overflowed the stack in collect_params (SIGSEGV)
    assert len(net) == 1 and len(inner) == 0

    class Holder(nn.Block):
        def __init__(self):
            super().__init__()
            self.body = nn.Sequential()

        def forward(self, x):
            return self.body(x)

    h = Holder()
    with pytest.raises(plexus.InvalidArgumentError, match="a block cannot hold itself"):
        h.body.add(h)
    h.body.add(nn.Dense(2))
    h.initialize()
    assert h(plexus.ones((1, 3))).shape == (1, 2)


def test_a_numpy_array_given_where_a_tensor_belongs_is_named_with_the_fix():
    np = need("numpy")
    from plexus import loss
    net = nn.Dense(2)
    net.initialize()
    with pytest.raises(TypeError, match="Dense\\(x\\): x is a numpy.ndarray, not a plexus Tensor; make one with plexus.array"):
        net(np.ones((1, 3), np.float32))  # it had been pybind11's list of signatures
    with pytest.raises(TypeError, match="label is a numpy.ndarray, not a plexus Tensor"):
        loss.SoftmaxCELoss()(plexus.ones((2, 3)), np.array([0, 1]))
    with pytest.raises(TypeError, match="Parameter.set_data\\(data\\): data is a numpy.ndarray"):
        net.weight.set_data(np.ones((2, 3), np.float32))
    with pytest.raises(TypeError, match="Accuracy.update\\(labels, preds\\): preds is a numpy.ndarray"):
        plexus.metric.Accuracy().update([plexus.array([0])], [np.ones((1, 2))])
    assert net(plexus.ones((1, 3))).shape == (1, 2)


def test_cycles_through_trainers_parameters_schedules_and_initializers_are_collected():
    # pybind11's keep_alive (a ParameterDict keeping its block, a Trainer its
    # parameters) and Python objects held from C++ (a schedule, an
    # initializer) are invisible to the cycle collector: every model below
    # stayed alive after gc.collect(), 200 of 200 in a reviewer's run (d2l's
    # Trainer.prepare_model sets model.trainer, whose optimizer holds
    # model.collect_params()). The references now live where gc sees them.
    import gc
    import weakref
    x = plexus.ones((2, 8))

    class Model(nn.Block):
        def __init__(self):
            super().__init__()
            self.dense = nn.Dense(4)

        def forward(self, x):
            return self.dense(x)

    def made():
        m = Model()
        m.initialize()
        m(x)
        return m

    class D2LTrainer:
        def prepare(self, m):
            m.trainer = self
            self.optim = nn.Trainer(m.collect_params(), "sgd", {"learning_rate": 0.1})

    class Runner:
        def __init__(self):
            self.net = made()
            self.trainer = nn.Trainer(self.net.collect_params(), "sgd", {"learning_rate": 0.1})
            self.trainer.set_lr_scheduler(self.schedule)

        def schedule(self, num_update):
            return 0.1

    class RefersBack(plexus.init.Initializer):
        def _init_weight(self, name, data):
            data[:] = 0.01

    def d2l_trainer():
        m = made()
        D2LTrainer().prepare(m)
        return m

    def keeps_its_params():
        m = made()
        m.params_cache = m.collect_params()
        m.weight_cache = m.params_cache["dense.weight"]
        m.values_cache = m.params_cache.values()
        return m

    def schedule_is_a_method():
        r = Runner()
        with autograd.record():
            loss = r.net(x).sum()
        loss.backward()
        r.trainer.step(2)  # the schedule runs (held weakly, kept by the trainer)
        assert r.trainer.learning_rate == 0.1
        return r.net

    def initializer_refers_back():
        m = Model()
        init = RefersBack()
        init.net = m
        m.initialize(init=init)
        m(x)
        return m

    for case in (d2l_trainer, keeps_its_params, schedule_is_a_method, initializer_refers_back):
        refs = [weakref.ref(case()) for _ in range(5)]
        gc.collect()
        assert sum(r() is not None for r in refs) == 0, case.__name__

    # What holds a reference still keeps its owner: the block, through its parameter dict and a parameter.
    m = made()
    params, weight = m.collect_params(), m.dense.weight
    trainer = nn.Trainer(params, "sgd", {"learning_rate": 0.1})
    del m
    gc.collect()
    assert weight.data().shape == (4, 8) and params["dense.weight"].data().shape == (4, 8)
    with plexus.autograd.record():
        loss = (weight.data() * weight.data()).sum()
    loss.backward()
    trainer.step(1, ignore_stale_grad=True)  # the trainer's parameters are alive (the bias is not used)


def test_a_trainer_steps_after_its_network_and_its_attributes_are_gone():
    np = need("numpy")
    # The C++ trainer holds its parameters: it had relied on a Python attribute, and with that removed
    # (trainer.__dict__.clear()) and the network collected, the next step read freed memory.
    import gc
    net = nn.Sequential()
    net.add(nn.Dense(2, use_bias=False))
    net.initialize()
    x = plexus.array([[1.0, 2.0, 3.0]])
    with plexus.autograd.record():
        loss = net(x).sum()
    loss.backward()
    weight = net[0].weight
    data, before = weight.data(), weight.data().asnumpy()
    trainer = nn.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.5})
    trainer.__dict__.clear()
    del net, weight
    gc.collect()
    trainer.step(1)
    assert np.allclose(data.asnumpy(), before - 0.5 * np.array([[1.0, 2.0, 3.0]] * 2), rtol=0, atol=1e-6)


def test_gluon_block_names_and_a_sequential_of_ones_own_through_children():
    # d2l's shape loop (print(layer.name, 'output shape:', X.shape)) and its MySequential
    # (self._children[block.name] = block): both were AttributeErrors.
    net = nn.Sequential()
    net.add(nn.Conv2D(6, kernel_size=5, padding=2), nn.MaxPool2D(2), nn.Conv2D(16, kernel_size=5), nn.AvgPool2D(2),
            nn.Dense(10), nn.BatchNorm(), nn.Dense(10))
    names = [layer.name for layer in net]
    kinds = [n.rstrip("0123456789") for n in names]
    assert kinds == ["conv", "pool", "conv", "pool", "dense", "batchnorm", "dense"]
    numbers = [int(n[len(k):]) for n, k in zip(names, kinds)]
    assert numbers[2] == numbers[0] + 1 and numbers[3] == numbers[1] + 1 and numbers[6] == numbers[4] + 1
    assert [layer.name for layer in net] == names  # given once: the same at every call

    class MySequential(nn.Block):
        def add(self, block):
            self._children[block.name] = block

        def forward(self, X):
            for block in self._children.values():
                X = block(X)
            return X

    class AttentionPooling(nn.Block):  # a block of one's own is its class's name, even with Pool in it
        def forward(self, x):
            return x

    assert AttentionPooling().name.startswith("attentionpooling")
    assert nn.GlobalAvgPool2D().name.startswith("pool") and nn.AdaptiveAvgPool2D(1).name.startswith("pool")
    mine = MySequential()
    first, second = nn.Dense(256, activation="relu"), nn.Dense(10)
    mine.add(first)
    mine.add(second)
    mine.initialize()
    x = plexus.random.uniform(size=(2, 20))
    assert mine(x).shape == (2, 10) and mine.name.startswith("mysequential")
    assert mine.collect_params().keys() == [first.name + ".weight", first.name + ".bias", second.name + ".weight",
                                            second.name + ".bias"]
    with pytest.raises(KeyError, match="already a child"):
        mine._children[first.name] = nn.Dense(3)
    with pytest.raises(TypeError, match="a int is not a Block"):
        mine._children["x"] = 3
    # A parameter prints as Gluon's (a shape of one had lost its tuple's comma: "(shape=(8))").
    assert repr(first.bias) == "Parameter bias (shape=(256,), dtype=float32)"
    assert repr(nn.Dense(3).weight) == "Parameter weight (shape=(3, 0))"  # not made yet: no dtype


def test_what_a_dict_or_a_trainer_points_to_outlives_a_replaced_child_or_attribute():
    # An attack's use-after-free: a ParameterDict (and so a Trainer) points to the parameters of the
    # blocks under its block when it is made; replacing a child (net.fc = nn.Dense(4)), deleting a
    # Parameter attribute or popping a _children entry had freed what it pointed to (garbage shapes,
    # then a segfault in trainer.step).
    import gc
    x = plexus.ones((2, 8))

    class Net(nn.Block):
        def __init__(self):
            super().__init__()
            self.fc = nn.Dense(4)
            self.scale = nn.Parameter("scale", shape=(4,))

        def forward(self, x):
            return self.fc(x) * self.scale.data()

    net = Net()
    net.initialize()
    net(x)
    params = net.collect_params()
    trainer = nn.Trainer(params, "sgd", {"learning_rate": 0.1})
    with autograd.record():
        loss = net(x).sum()
    loss.backward()
    net.fc = nn.Dense(4)  # the old one is still the dict's and the trainer's
    del net.scale
    gc.collect()
    assert {k: p.data().shape for k, p in params.items()} == {"scale": (4,), "fc.weight": (4, 8), "fc.bias": (4,)}
    trainer.step(2)  # updates the parameters it was given
    assert params["fc.weight"].data().shape == (4, 8)
    # _children keeps what was added: removing is refused, update and setdefault register.

    class Mine(nn.Block):
        def forward(self, x):
            for b in self._children.values():
                x = b(x)
            return x

    mine = Mine()
    mine._children.update({"a": nn.Dense(3)})
    mine._children.setdefault("b", nn.Dense(2))
    mine.initialize()
    assert mine(x).shape == (2, 2) and len(mine.collect_params().keys()) == 4
    for remove in (lambda: mine._children.pop("a"), lambda: mine._children.clear(),
                   lambda: mine._children.__delitem__("a"), lambda: mine._children.popitem()):
        with pytest.raises(TypeError, match="a child stays the block's once added"):
            remove()
    assert mine(x).shape == (2, 2)
    # A parameter read through many dicts is its own shared_ptr's object, with no owners kept (a first
    # version had collected one per dict read).
    held = nn.Dense(3, in_units=8)
    held.initialize()
    for _ in range(200):
        for p in held.collect_params().values():
            pass
    assert not hasattr(held.weight, "_plexus_owners") and held.weight is held.collect_params()["weight"]


def test_a_sequential_and_a_python_block_that_refers_back_to_it_are_collected():
    # Sequential.add kept its Python children through pybind11's keep_alive, which the cycle collector does
    # not see: a child holding its Sequential (20 of 20 stayed alive after gc.collect()).
    import gc
    import weakref

    class Back(nn.Block):
        def __init__(self, owner):
            super().__init__()
            self.w = nn.Parameter("w", shape=(2,))
            self._owner = owner

        def forward(self, x):
            return x * self.w.data()

    refs = []
    for _ in range(5):
        s = nn.Sequential()
        b = Back(s)
        s.add(b)
        s.initialize()
        assert s(plexus.ones((3, 2))).shape == (3, 2) and s[0] is b and s[-1:][0] is b
        refs.append(weakref.ref(s))
        del s, b
    gc.collect()
    assert sum(r() is not None for r in refs) == 0
    # A Python block added to a Sequential lives while the Sequential does, with nothing else holding it.
    net = nn.Sequential()
    net.add(Back(None))
    gc.collect()
    net.initialize()
    assert net(plexus.ones((1, 2))).shape == (1, 2)


def test_an_rnn_state_carries_from_one_batchs_graph_into_the_next_as_in_mxnet():
    # d2l's train_ch8 with sequential partitioning: `for s in state: s.detach()` keeps nothing (it returns
    # a new tensor), and MXNet reads the old state as a constant; the second backward had been refused.
    from plexus import np
    W = np.ones((2, 2))
    W.attach_grad()
    H = np.ones((1, 2))
    for step in range(3):
        with autograd.record():
            H = np.tanh(np.dot(H, W))
            loss = H.sum()
        loss.backward()
    import math
    h1 = math.tanh(2.0)  # each element of H after the first step
    h2 = math.tanh(2.0 * h1)
    # The third step's gradient alone: dL/dW[i, j] = H2[i] * (1 - tanh(2 * h2)^2).
    assert W.grad.asnumpy().reshape(-1).tolist() == pytest.approx([h2 * (1 - math.tanh(2 * h2) ** 2)] * 4, rel=1e-6)


def test_a_python_block_takes_and_gives_what_its_forward_does():
    # d2l's attention(queries, keys, values, valid_lens) and an encoder's (outputs, state): Block.__call__
    # had taken exactly one tensor.
    class Attention(nn.Block):
        def __init__(self):
            super().__init__()
            self.score = nn.Dense(1, flatten=False)

        def forward(self, queries, keys, values, valid_lens=None, *, scale=1.0):
            weights = plexus.softmax(self.score(queries + keys).squeeze(-1) * scale)
            if valid_lens is not None:
                weights = weights * 0 + 1
            return (weights.expand_dims(1) @ values).squeeze(1), weights

    attention = Attention()
    attention.initialize()
    q = plexus.ones((2, 3, 4))
    out, weights = attention(q, q, plexus.ones((2, 3, 5)), None, scale=2.0)
    assert out.shape == (2, 5) and weights.shape == (2, 3)
    assert attention(q, q, plexus.ones((2, 3, 5)), valid_lens=plexus.array([1, 2]))[1].tolist() == [[1.0] * 3] * 2
    dense = nn.Dense(2)
    with pytest.raises(TypeError, match=r"Dense\(x\) takes one tensor, got 2 positional and 0 keyword"):
        dense(q, q)
    with pytest.raises(TypeError, match=r"Dense\(x\): x is a builtins.list, not a plexus Tensor"):
        dense([1.0])



def test_get_and_get_constant_as_gluon_1s_parameter_dict():
    # d2l's FixedHiddenMLP (self.params.get_constant) and a ParameterDict's get, which Gluon's dict keeps.
    np = need("numpy")

    class FixedHiddenMLP(nn.Block):
        def __init__(self):
            super().__init__()
            self.rand_weight = self.params.get_constant("rand_weight", np.arange(12.0).reshape(3, 4) / 10)
            self.dense = nn.Dense(4)

        def forward(self, x):
            x = self.dense(x)
            return plexus.relu(plexus.dot(x, self.rand_weight.data().T) + 1)

    net = FixedHiddenMLP()
    net.initialize(init=plexus.init.Constant(0.5))
    x = plexus.ones((2, 4))
    with autograd.record():
        y = net(x).sum()
    y.backward()
    h = np.full((2, 4), 0.5 * 4)  # the dense layer: weights 0.5, bias 0
    assert np.allclose(y.asnumpy(), np.maximum(h @ (np.arange(12.0).reshape(3, 4) / 10).T + 1, 0).sum(), rtol=1e-6)
    assert net.rand_weight.grad_req == "null"
    assert np.allclose(net.rand_weight.data().asnumpy(), np.arange(12.0).reshape(3, 4) / 10, rtol=1e-7)
    trainer = nn.Trainer(net.collect_params(), "sgd", {"learning_rate": 1.0})
    trainer.step(1)
    assert np.allclose(net.rand_weight.data().asnumpy(), np.arange(12.0).reshape(3, 4) / 10, rtol=1e-7)
    params = nn.ParameterDict()
    made = params.get("param2", shape=(2, 3))
    assert list(params.keys()) == ["param2"] and params["param2"].shape == (2, 3) == made.shape
    with pytest.raises(TypeError, match="a new one needs its value"):
        params.get_constant("c")


def test_what_a_review_of_python_blocks_and_constants_found():
    # A subclass of a Plexus layer or Sequential with its own forward ran it when called directly and the
    # layer's own inside a Sequential or summary(): refused where the class is made.
    with pytest.raises(TypeError, match="a subclass of Plexus's Dense cannot replace its forward"):
        class Scaled(nn.Dense):
            def forward(self, x):
                return super().forward(x) * 100

    with pytest.raises(TypeError, match="a subclass of Plexus's Sequential cannot replace its forward"):
        class Summed(nn.Sequential):
            def forward(self, x):
                return super().forward(x).sum(axis=1)

    class Plain(nn.Sequential):  # without a forward of its own: as before
        pass

    assert isinstance(Plain(), nn.Sequential)
    dense = nn.Dense(3, in_units=2)
    dense.initialize()
    assert dense(x=plexus.ones((1, 2))).shape == (1, 3)  # Gluon's keyword

    class Enc(nn.Block):
        def forward(self, x):
            return x, x

    net = nn.Sequential()
    net.add(Enc())
    with pytest.raises(TypeError, match="returned a tuple, not a Tensor: summary.. lists blocks that give one tensor"):
        net.summary(plexus.ones((1, 2)))
    with pytest.raises(TypeError, match=r"summary\(x\): runs the network on one input tensor, got 2 argument"):
        dense.summary(plexus.ones((1, 2)), plexus.ones((1, 2)))
    # get_constant of a number; get and get_constant refuse a parameter other than the one asked for.
    params = nn.ParameterDict()
    scale = params.get_constant("scale", 3.0)
    params.initialize()
    assert scale.data().shape == () and scale.data().item() == 3.0
    params.get("w", shape=(2, 3))
    with pytest.raises(ValueError, match=r"parameter 'w' exists with shape \(2, 3\), not the \(4, 5\) asked for"):
        params.get("w", shape=(4, 5))
    with pytest.raises(ValueError, match="parameter 'w' exists and is trained"):
        params.get_constant("w", plexus.ones((2, 3)))
    with pytest.raises(ValueError, match=r"exists with shape \(\), not the \(2,\) asked for"):
        params.get_constant("scale", [1.0, 2.0])


def test_tensors_outside_every_graph_may_be_written_while_recording_as_in_mxnet():
    # d2l's SSD calls multibox_target inside record(); it writes into tensors it makes (anchors_bbox_map[i] = j,
    # jaccard[:, j] = -1). Every write had been refused while recording.
    from plexus import autograd
    w = plexus.array([1.0, 2.0, 3.0])
    w.attach_grad()
    with autograd.record():
        m = plexus.full((3,), -1.0)
        m[0] = 2
        m[1:] = plexus.array([4.0, 5.0])
        m += 1
        j = plexus.zeros((2, 3))
        j[:, 1] = -1
        j[plexus.array([1])] = 7  # through an array of indices
        loss = (w * m).sum()
        with pytest.raises(plexus.InvalidArgumentError, match="the values need a gradient"):
            m[0] = w[0] * 2
        with pytest.raises(plexus.InvalidArgumentError, match="the values need a gradient"):
            m += w
        with pytest.raises(plexus.InvalidArgumentError, match="attach_grad\\(\\) cannot be written in place while"):
            w[0] = 0
    assert m.tolist() == [3.0, 5.0, 6.0]
    assert j.tolist() == [[0.0, -1.0, 0.0], [7.0, 7.0, 7.0]]
    loss.backward()
    assert w.grad.tolist() == [3.0, 5.0, 6.0]
    with autograd.record():
        loss = (w * m).sum()
        m[2] = 0  # read by mul's rule: backward says so
    with pytest.raises(plexus.InvalidArgumentError, match="a tensor that mul read while recording has been written"):
        loss.backward()
