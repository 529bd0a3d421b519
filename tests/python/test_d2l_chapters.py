"""What d2l's optimization, computational-performance, attention and NLP chapters use, checked against NumPy
and PyTorch: the math functions of plugin ABI 1.9 (np.sin, ...) with their gradients, np's other names
(square, power, var/std, linspace, eye, meshgrid, random.rand/randn), npx.convolution and npx.pooling, Gluon's
1-D layers and hybrid names, Gluon's positional arguments, datasets read sample by sample
(gluon.data.Dataset, batchify_fn, ArrayDataset of four arrays), and iteration of a tensor."""
import numpy
import pytest

import plexus
from plexus import autograd, gluon, np, npx
from plexus.gluon import nn
from conftest import need


def f64(values):
    return plexus.array(values, dtype="float64")


def grad_of(f, x0):
    x = f64(x0)
    x.attach_grad()
    with autograd.record():
        y = f(x)
    y.backward()
    return y.asnumpy(), x.grad.asnumpy()


MATH = ["sin", "cos", "tan", "sinh", "cosh", "log1p", "expm1", "sign", "floor", "ceil", "round"]


@pytest.mark.parametrize("name", MATH)
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
def test_the_math_functions_match_numpy(name, dtype):
    rng = numpy.random.default_rng(7)
    low, high = {"tan": (-1.5, 1.5), "log1p": (-0.9, 20), "sinh": (-8, 8), "cosh": (-8, 8)}.get(name, (-30, 30))
    x = rng.uniform(low, high, 1000)
    x[:4] = [0.5, 2.5, -0.5, -0.0]  # round's halves go to even, as NumPy's
    t = plexus.array(x, dtype=dtype)
    got = getattr(np, name)(t)
    assert got.dtype == t.dtype and getattr(t, name)().dtype == t.dtype
    ref = getattr(numpy, name)(t.astype("float64").asnumpy())  # of the values the tensor holds
    ref = plexus.array(ref, dtype="float64").astype(dtype).astype("float64").asnumpy()  # as the dtype holds it
    tol = {"float64": 1e-14, "float32": 2e-7, "float16": 1e-3, "bfloat16": 8e-3}[dtype]
    assert numpy.allclose(got.astype("float64").asnumpy(), ref, rtol=tol, atol=tol * 1e-3)


def test_the_math_functions_keep_numpys_edges():
    x = f64([float("nan"), -0.0, float("inf"), -1.0, -2.0])
    assert numpy.array_equal(np.sign(x).asnumpy(), numpy.sign(x.asnumpy()), equal_nan=True)
    with numpy.errstate(divide="ignore", invalid="ignore"):
        assert numpy.array_equal(np.log1p(x).asnumpy(), numpy.log1p(x.asnumpy()), equal_nan=True)
    assert np.round(f64([2.5, -2.5, 3.5])).tolist() == [2.0, -2.0, 4.0]
    with pytest.raises(plexus.DTypeError, match="int32"):
        np.sin(plexus.array([1, 2], dtype="int32"))
    # round is not in `from plexus import *`: Python's round stays Python's.
    assert "round" not in plexus.__all__ and "abs" not in plexus.__all__ and "sin" in plexus.__all__


@pytest.mark.parametrize("name", ["sin", "cos", "tan", "sinh", "cosh", "log1p", "expm1"])
def test_the_math_functions_gradients_match_torch(name):
    torch = need("torch")
    x0 = numpy.random.default_rng(3).uniform(-0.9, 1.4, 12)
    y, g = grad_of(lambda x: (getattr(np, name)(x) * f64(numpy.arange(12.0))).sum(), x0)
    xt = torch.tensor(x0, requires_grad=True)
    yt = (getattr(torch, name)(xt) * torch.arange(12.0, dtype=torch.float64)).sum()
    yt.backward()
    assert numpy.allclose(y, yt.item(), rtol=1e-13)
    assert numpy.allclose(g, xt.grad.numpy(), rtol=1e-13)


def test_the_piecewise_constant_functions_have_a_zero_gradient_as_mxnets():
    _, g = grad_of(lambda x: (np.floor(x) + np.ceil(x) + np.round(x) + np.sign(x) + 3 * x).sum(), [0.3, -1.7, 2.5])
    assert g.tolist() == [3.0, 3.0, 3.0]


def test_numpys_other_names():
    torch = need("torch")
    a = numpy.random.default_rng(1).normal(size=(3, 4))
    t = f64(a)
    assert np.pi == numpy.pi and np.e == numpy.e and np.inf == numpy.inf and np.newaxis is None
    assert numpy.allclose(np.square(t).asnumpy(), a ** 2)
    assert numpy.allclose(np.power(10000, f64([0.0, 0.5, 1.0])).asnumpy(), [1, 100, 10000])
    assert numpy.allclose(np.power(t, 2).asnumpy(), a ** 2)
    with pytest.raises(TypeError, match="one of x1 and x2 is a tensor"):
        np.power(2, 3)
    for axis in (None, 0, 1, (0, 1)):
        for ddof in (0, 1):
            assert numpy.allclose(np.var(t, axis=axis, ddof=ddof).asnumpy(), numpy.var(a, axis=axis, ddof=ddof))
            assert numpy.allclose(t.std(axis=axis, ddof=ddof).asnumpy(), numpy.std(a, axis=axis, ddof=ddof))
    assert np.std(t, axis=1, keepdims=True).shape == (3, 1)
    assert np.var(plexus.array([1, 2, 3, 4], dtype="int32")).item() == 1.25  # integers in float64, as NumPy's
    with pytest.raises(ValueError, match="leave no degree of freedom"):
        np.var(f64([1.0]), ddof=1)
    # d2l's get_data_ch11 standardizes with them, gradients included.
    _, g = grad_of(lambda x: x.std(), a.reshape(-1))
    xt = torch.tensor(a.reshape(-1), requires_grad=True)
    xt.std(unbiased=False).backward()
    assert numpy.allclose(g, xt.grad.numpy(), rtol=1e-12)
    assert numpy.allclose(np.linspace(0, 1, 5).asnumpy(), numpy.linspace(0, 1, 5)) and np.linspace(0, 1, 5).dtype == "float32"
    assert np.linspace(0, 1, 4, endpoint=False).tolist() == [0.0, 0.25, 0.5, 0.75]
    assert numpy.array_equal(np.eye(3, 4, k=1).asnumpy(), numpy.eye(3, 4, k=1)) and np.identity(2).tolist() == [[1, 0], [0, 1]]
    gx, gy = np.meshgrid(np.arange(3), np.arange(2))
    nx, ny = numpy.meshgrid(numpy.arange(3), numpy.arange(2))
    assert numpy.array_equal(gx.asnumpy(), nx) and numpy.array_equal(gy.asnumpy(), ny)
    ix, iy = np.meshgrid(np.arange(3), np.arange(2), indexing="ij")
    assert numpy.array_equal(ix.asnumpy(), numpy.meshgrid(numpy.arange(3), numpy.arange(2), indexing="ij")[0])
    assert np.transpose(t).shape == (4, 3) and np.transpose(t, (1, 0)).shape == (4, 3) and np.size(t) == 12
    assert np.size(t, 1) == 4
    assert numpy.allclose(t.dot(f64(numpy.ones(4))).asnumpy(), a.sum(axis=1))
    np.random.seed(5)
    r = np.random.rand(2, 3)
    assert r.shape == (2, 3) and 0 <= r.min().item() and r.max().item() < 1 and np.random.randn(4).shape == (4,)


def test_a_tensor_iterates_over_its_rows_and_a_0d_one_refuses():
    t = plexus.array([[1.0, 2.0], [3.0, 4.0]])
    assert [r.tolist() for r in t] == [[1.0, 2.0], [3.0, 4.0]]
    with pytest.raises(TypeError, match="iteration over a 0-d tensor"):
        list(plexus.array(3.0))  # it had been [] (Python's fallback through __getitem__)


def test_npx_convolution_and_pooling_match_torch():
    torch = need("torch")
    F = torch.nn.functional
    rng = numpy.random.default_rng(2)
    x, w, b = rng.normal(size=(2, 3, 7, 6)), rng.normal(size=(4, 3, 3, 2)), rng.normal(size=4)
    y = npx.convolution(data=f64(x), weight=f64(w), bias=f64(b), kernel=(3, 2), num_filter=4, stride=(2, 1), pad=(1, 0))
    ref = F.conv2d(torch.tensor(x), torch.tensor(w), torch.tensor(b), stride=(2, 1), padding=(1, 0))
    assert numpy.allclose(y.asnumpy(), ref.numpy(), rtol=1e-12)
    for kind, torch_pool in (("max", F.max_pool2d), ("avg", F.avg_pool2d)):
        p = npx.pooling(data=f64(x), pool_type=kind, kernel=(2, 2), stride=(2, 2))
        assert numpy.allclose(p.asnumpy(), torch_pool(torch.tensor(x), 2, 2).numpy())
    assert npx.pooling(f64(x), pool_type="max", global_pool=True).shape == (2, 3, 1, 1)
    # One spatial axis: (N, C, W) with a (filters, C, k) weight, as torch's conv1d; differentiable.
    x1, w1 = rng.normal(size=(2, 3, 9)), rng.normal(size=(5, 3, 4))
    xp, wp = f64(x1), f64(w1)
    xp.attach_grad()
    wp.attach_grad()
    with autograd.record():
        y1 = npx.convolution(xp, wp, None, kernel=(4,), num_filter=5, no_bias=True, stride=(2,))
        loss = (y1 * y1).sum()
    loss.backward()
    xt, wt = torch.tensor(x1, requires_grad=True), torch.tensor(w1, requires_grad=True)
    yt = F.conv1d(xt, wt, stride=2)
    (yt * yt).sum().backward()
    assert numpy.allclose(y1.asnumpy(), yt.detach().numpy(), rtol=1e-12)
    assert numpy.allclose(xp.grad.asnumpy(), xt.grad.numpy(), rtol=1e-11)
    assert numpy.allclose(wp.grad.asnumpy(), wt.grad.numpy(), rtol=1e-11)
    with pytest.raises(plexus.ShapeError, match="does not have the kernel"):
        npx.convolution(f64(x), f64(w), None, kernel=(3, 3), no_bias=True)
    with pytest.raises(ValueError, match="dilate, num_group"):
        npx.convolution(f64(x), f64(w), None, kernel=(3, 2), dilate=(2, 2), no_bias=True)
    with pytest.raises(ValueError, match="pool_type is 'max' or 'avg'"):
        npx.pooling(f64(x), kernel=(2, 2), pool_type="lp")


def test_gluons_1d_layers_match_torch():
    torch = need("torch")
    F = torch.nn.functional
    x = numpy.random.default_rng(4).normal(size=(2, 6, 11)).astype(numpy.float32)
    conv = nn.Conv1D(8, 3, padding=1, activation="relu")
    conv.initialize()
    y = conv(plexus.array(x))
    assert conv.weight.shape == (8, 6, 3) and y.shape == (2, 8, 11)
    ref = F.relu(F.conv1d(torch.tensor(x), torch.tensor(conv.weight.data().asnumpy()),
                          torch.tensor(conv.bias.data().asnumpy()), padding=1))
    assert numpy.allclose(y.asnumpy(), ref.numpy(), atol=1e-5)
    assert repr(conv) == "Conv1D(6 -> 8, kernel_size=(3,), stride=(1,), padding=(1,))"
    assert numpy.allclose(nn.MaxPool1D(2)(plexus.array(x)).asnumpy(), F.max_pool1d(torch.tensor(x), 2).numpy())
    assert numpy.allclose(nn.AvgPool1D(3, 2)(plexus.array(x)).asnumpy(), F.avg_pool1d(torch.tensor(x), 3, 2).numpy())
    assert numpy.allclose(nn.GlobalMaxPool1D()(plexus.array(x)).asnumpy(), x.max(axis=2, keepdims=True))
    assert numpy.allclose(nn.GlobalAvgPool1D()(plexus.array(x)).asnumpy(), x.mean(axis=2, keepdims=True), atol=1e-6)
    x4 = plexus.array(x.reshape(2, 6, 1, 11))
    assert nn.GlobalMaxPool2D()(x4).shape == (2, 6, 1, 1)
    # d2l's TextCNN: a Conv1D per kernel size, each max-pooled over time, trains (its gradient reaches the weight).
    net = nn.Sequential()
    net.add(nn.Conv1D(4, 2), nn.GlobalMaxPool1D(), nn.Flatten(), nn.Dense(2))
    net.initialize()
    trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1})
    with autograd.record():
        loss = gluon.loss.SoftmaxCrossEntropyLoss()(net(plexus.array(x)), plexus.array([0, 1]))
    loss.backward()
    trainer.step(2)
    assert net[0].weight.grad().abs().sum().item() > 0
    with pytest.raises(plexus.ShapeError, match="takes \\(batch, channels, width\\) inputs"):
        conv(x4)
    with pytest.raises(ValueError, match="dilation, groups and layouts"):
        nn.Conv1D(4, 3, dilation=2)


def test_hybrid_names_run_as_blocks():
    net = nn.HybridSequential()
    net.add(nn.Dense(4, activation="relu"), nn.Dense(2))
    net.initialize()
    x = plexus.ones((3, 5))
    before = net(x).asnumpy()
    assert net.hybridize() is None and net.hybridize(static_alloc=True, static_shape=True) is None
    assert numpy.array_equal(net(x).asnumpy(), before)
    with pytest.raises(NotImplementedError, match="no compiled graph to export"):
        net.export("model")

    class Gluon1(nn.HybridBlock):  # Gluon 1's form: hybrid_forward(F, x, **its parameters)
        def __init__(self):
            super().__init__()
            self.weight = gluon.Parameter("weight", shape=(5, 2))

        def hybrid_forward(self, F, x, weight):
            return F.dot(x, weight)

    g = Gluon1()
    g.initialize()
    assert numpy.allclose(g(x).asnumpy(), x.asnumpy() @ g.weight.data().asnumpy())

    class Gluon2(nn.HybridBlock):
        def forward(self, x):
            return x * 2

    assert Gluon2()(x).tolist() == (x * 2).tolist()


def test_gluons_positional_arguments_mean_what_they_do_there():
    x = plexus.array([[[1.0, 2.0, 3.0]]])
    with pytest.raises(ValueError, match="LayerNorm: axis 2: Plexus normalises over the last axis only"):
        nn.LayerNorm(2)  # Gluon's first argument is the axis; it had been taken as epsilon, silently
    ln = nn.LayerNorm(-1)
    ln.initialize()
    assert numpy.allclose(ln(x).asnumpy(), [[[-1.2247357, 0, 1.2247357]]], atol=1e-5)
    d = nn.Dense(4, None, False)  # (units, activation, use_bias): in_units had been third
    d.initialize()
    d(plexus.ones((2, 3)))
    assert list(d.collect_params()) == ["weight"]
    with pytest.raises(ValueError, match="Conv2D: dilation other than 1 is not offered"):
        nn.Conv2D(4, 3, 1, 0, 2)  # the fifth is dilation, as Gluon's (it had been the activation)
    with pytest.raises(ValueError, match="Dense: weight_initializer is not offered by Plexus; initialize"):
        nn.Dense(4, weight_initializer=plexus.init.Normal(0.01))
    with pytest.raises(ValueError, match="use_global_stats=True is not offered.*predict_mode"):
        nn.BatchNorm(use_global_stats=True)
    assert nn.Conv2D(4, 3, in_channels=2, use_bias=False, activation="relu") is not None


class PTB(gluon.data.Dataset):  # d2l's word2vec: a dataset of its own and a batchify_fn
    def __init__(self, n):
        self.rows = [(i, [i, i + 1][: 1 + i % 2], [1] * (1 + i % 2)) for i in range(n)]

    def __getitem__(self, i):
        return self.rows[i]

    def __len__(self):
        return len(self.rows)


def batchify(data):
    width = max(len(c) for _, c, _ in data)
    centers = [c for c, _, _ in data]
    contexts = [c + [0] * (width - len(c)) for _, c, _ in data]
    masks = [m + [0] * (width - len(m)) for _, _, m in data]
    return np.array(centers).reshape(-1, 1), np.array(contexts), np.array(masks)


def test_a_dataset_of_its_own_and_a_batchify_fn_as_gluons():
    loader = gluon.data.DataLoader(PTB(7), 3, shuffle=True, batchify_fn=batchify)
    assert isinstance(loader, plexus.data.SampleLoader) and len(loader) == 3
    seen = []
    for centers, contexts, masks in loader:
        assert centers.shape[1] == 1 and contexts.shape == masks.shape
        seen += centers.reshape(-1).tolist()
    assert sorted(seen) == list(range(7))
    again = [c.reshape(-1).tolist() for c, _, _ in loader]
    assert sum(again, []) != seen or True  # the next epoch has an order of its own
    assert len(gluon.data.DataLoader(PTB(7), 3, batchify_fn=batchify, last_batch="discard")) == 2
    # Without a batchify_fn, samples batch field by field (default_batchify).
    simple = gluon.data.SimpleDataset([(numpy.float32(i), i) for i in range(5)])
    xs, ys = next(iter(gluon.data.DataLoader(simple, 5)))
    assert xs.dtype == "float32" and ys.tolist() == [0, 1, 2, 3, 4]
    with pytest.raises(ValueError, match="takes 'keep' or 'discard'"):
        gluon.data.DataLoader(PTB(7), 3, last_batch="rollover")
    with pytest.raises(TypeError, match="do not make one array: give a batchify_fn"):
        next(iter(gluon.data.DataLoader(PTB(7), 3)))
    with pytest.raises(TypeError, match="SampleLoader"):
        plexus.data.DataLoader(PTB(7), 3)


def test_an_array_dataset_of_four_arrays_as_d2ls_load_array():
    X, X_len = numpy.arange(40).reshape(10, 4), numpy.arange(10) % 4 + 1
    Y, Y_len = numpy.arange(50).reshape(10, 5), numpy.arange(10) % 5 + 1
    ds = gluon.data.ArrayDataset(X, X_len, Y, Y_len)
    assert isinstance(ds, plexus.data.ArraysDataset) and len(ds) == 10
    assert [v.tolist() for v in ds[2]] == [X[2].tolist(), 3, Y[2].tolist(), 3]
    loader = gluon.data.DataLoader(ds, 4, shuffle=True)
    rows = []
    for x, xl, y, yl in loader:
        assert x.shape[1:] == (4,) and y.shape[1:] == (5,)
        rows += (x[:, 0] // 4).tolist()
        assert ((y[:, 0] // 5) == (x[:, 0] // 4)).asnumpy().all()
    assert sorted(rows) == list(range(10))
    with pytest.raises(ValueError, match="their first axes agree"):
        gluon.data.ArrayDataset(X, Y[:3], X_len)
    with pytest.raises(TypeError, match="ArrayDataset takes \\(data, label\\), got 3 arrays"):
        plexus.data.ArrayDataset(X, X_len, Y)
    one = gluon.data.ArrayDataset(X)
    assert one[1].tolist() == X[1].tolist() and next(iter(gluon.data.DataLoader(one, 3))).shape == (3, 4)


def test_errors_name_things_as_python_does():
    x = plexus.ones((2,))
    x.attach_grad()
    with pytest.raises(plexus.Error) as caught:
        (x * 2).backward()  # nothing recorded
    assert "autograd.record()" in str(caught.value) and "::" not in str(caught.value)
    net = nn.Dense(2)
    net.initialize()
    trainer = gluon.Trainer(net.collect_params(), "sgd")
    with pytest.raises(plexus.Error, match="Trainer.step"):
        trainer.step(0)


@pytest.mark.parametrize("name,options", [("adagrad", {"learning_rate": 0.1}),
                                          ("rmsprop", {"learning_rate": 0.01, "gamma1": 0.9}),
                                          ("adadelta", {"rho": 0.9})])
def test_the_concise_adagrad_rmsprop_and_adadelta_follow_d2ls_from_scratch_versions(name, options):
    # d2l's train_concise_ch11(name, options): the Trainer's step against chapter 12's own formulas in NumPy.
    rng = numpy.random.default_rng(11)
    X, y = rng.normal(size=(20, 5)).astype(numpy.float32), rng.normal(size=(20, 1)).astype(numpy.float32)
    w0 = (rng.normal(size=(1, 5)) * 0.1).astype(numpy.float32)
    net = nn.Dense(1, in_units=5)
    net.initialize()
    net.weight.set_data(plexus.array(w0))
    net.bias.set_data(plexus.zeros((1,)))
    trainer = gluon.Trainer(net.collect_params(), name, options)
    X, y, w, b = X.astype(numpy.float64), y.astype(numpy.float64), w0.astype(numpy.float64), numpy.zeros(1)
    state = {k: [numpy.zeros_like(w), numpy.zeros_like(b)] for k in ("s", "delta")}
    for _ in range(4):
        with autograd.record():
            l = ((net(plexus.array(X, dtype="float32")) - plexus.array(y, dtype="float32")) ** 2 / 2).sum()
        l.backward()
        trainer.step(20)
        err = X @ w.T + b - y
        grads = [(err.T @ X) / 20, err.sum(axis=0) / 20]
        for k, (p, g) in enumerate(zip((w, b), grads)):
            s, d = state["s"][k], state["delta"][k]
            if name == "adagrad":  # d2l 12.7: s += g^2; p -= lr g / sqrt(s + eps)
                s += g * g
                p -= 0.1 * g / numpy.sqrt(s + 1e-7)
            elif name == "rmsprop":  # 12.8
                s[:] = 0.9 * s + 0.1 * g * g
                p -= 0.01 * g / numpy.sqrt(s + 1e-8)
            else:  # 12.9
                s[:] = 0.9 * s + 0.1 * g * g
                step = numpy.sqrt(d + 1e-5) / numpy.sqrt(s + 1e-5) * g
                d[:] = 0.9 * d + 0.1 * step * step
                p -= step
        assert numpy.allclose(net.weight.data().asnumpy(), w, rtol=1e-5, atol=1e-6)
        assert numpy.allclose(net.bias.data().asnumpy(), b, rtol=1e-5, atol=1e-6)


def test_review_findings_on_this_sessions_names():
    # Values written through an index array on another device than cpu(0) (the positions had been made on cpu(0)).
    x = np.zeros((3, 4), device=plexus.cpu(1))
    x[np.array([0, 2], dtype="int64", device=plexus.cpu(1))] = np.ones((2, 4), device=plexus.cpu(1))
    assert x.sum().item() == 8 and x.device == plexus.cpu(1)
    # Leading length-1 axes of the values are dropped, as NumPy drops them.
    a, b = plexus.zeros((3, 4)), numpy.zeros((3, 4))
    a[[0, 1]] = plexus.ones((1, 2, 4))
    b[[0, 1]] = numpy.ones((1, 2, 4))
    assert numpy.array_equal(a.asnumpy(), b)
    # Global max pooling sends a tie's gradient to its first maximum, as MaxPool1D and MXNet do.
    t = plexus.array([[[1.0, 3.0, 3.0, 2.0]]])
    t.attach_grad()
    with autograd.record():
        y = nn.GlobalMaxPool1D()(t).sum()
    y.backward()
    assert t.grad.reshape(-1).tolist() == [0.0, 1.0, 0.0, 0.0]
    # MXNet's arguments Plexus does not offer are refused by name, never dropped.
    img = plexus.arange(16).reshape(1, 1, 4, 4)
    for kwargs, message in [({"count_include_pad": False}, "count_include_pad=True"),
                            ({"pooling_convention": "full"}, "pooling_convention='valid'"),
                            ({"strides": (2, 2)}, "strides not offered")]:
        with pytest.raises((TypeError, ValueError), match=message):
            npx.pooling(img, kernel=(2, 2), pool_type="avg", **kwargs)
    assert npx.pooling(img, kernel=(2, 2), stride=(2, 2), cudnn_off=True).shape == (1, 1, 2, 2)
    with pytest.raises(ValueError, match="count_include_pad=False are not offered"):
        nn.AvgPool1D(2, count_include_pad=False)
    # NumPy's argument order for var and std (the third is dtype); round's decimals; clear refusals.
    v = f64([[1.0, 2.0], [3.0, 5.0]])
    assert numpy.allclose(np.var(v, 0, "float32").asnumpy(), numpy.var(v.asnumpy(), 0))
    assert np.var(v, 0, "float32").dtype == "float32" and np.std(v, ddof=1.0).item() > 0
    with pytest.raises(ValueError, match="decimals other than 0"):
        np.round(v, 1)
    assert np.round(v, 0).tolist() == v.tolist()
    with pytest.raises(TypeError, match="sin: x is a builtins.float, not a plexus Tensor"):
        np.sin(1.0)
    with pytest.raises(TypeError, match="each axis is an int >= 0, given as its own argument"):
        np.random.rand((2, 3))
    with pytest.raises(TypeError, match="a window's size, stride, padding or dilation is an int or a pair of ints, not 'relu'"):
        nn.Conv2D(6, 5, 1, 0, "relu")  # Plexus's old positional form: the fifth is now the dilation
    with pytest.raises(ValueError, match="nn.autocast"):
        nn.Dense(4, dtype="float64")
    with pytest.raises(ValueError, match="BatchNorm: gamma_initializer is not offered"):
        nn.BatchNorm(gamma_initializer="zeros")
    assert nn.BatchNorm(beta_initializer="zeros", running_variance_initializer="ones") is not None
    assert nn.HybridSequential().hybridize(1) is None


@pytest.mark.parametrize("stride,pad,adj,k", [((1, 1), (0, 0), (0, 0), (3, 3)), ((2, 2), (1, 1), (0, 0), (4, 4)),
                                               ((2, 3), (1, 0), (1, 2), (3, 4)), ((4, 4), (2, 2), (0, 0), (8, 8))])
def test_the_transposed_convolution_matches_torch(stride, pad, adj, k):
    torch = need("torch")
    rng = numpy.random.default_rng(8)
    x0, w0, b0 = rng.normal(size=(2, 3, 5, 4)), rng.normal(size=(3, 6) + k), rng.normal(size=6)
    x, w = f64(x0), f64(w0)
    x.attach_grad()
    w.attach_grad()
    with autograd.record():
        y = npx.deconvolution(x, w, f64(b0), kernel=k, stride=stride, pad=pad, adj=adj, num_filter=6, no_bias=False)
        loss = (y * y).sum()
    loss.backward()
    xt, wt = torch.tensor(x0, requires_grad=True), torch.tensor(w0, requires_grad=True)
    yt = torch.nn.functional.conv_transpose2d(xt, wt, torch.tensor(b0), stride=stride, padding=pad, output_padding=adj)
    (yt * yt).sum().backward()
    assert y.shape == tuple(yt.shape)
    assert numpy.allclose(y.asnumpy(), yt.detach().numpy(), rtol=1e-12, atol=1e-12)
    assert numpy.allclose(x.grad.asnumpy(), xt.grad.numpy(), rtol=1e-11)
    assert numpy.allclose(w.grad.asnumpy(), wt.grad.numpy(), rtol=1e-11)


def test_gluons_conv2d_transpose_as_d2ls_dcgan_and_fcn_use_it():
    torch = need("torch")
    # d2l's DCGAN generator block: Conv2DTranspose(channels, 4, strides=2, padding=1), BatchNorm, relu.
    g = nn.Sequential()
    g.add(nn.Conv2DTranspose(8, 4, 2, 1), nn.BatchNorm(), nn.Activation("relu"), nn.Conv2DTranspose(3, 4, 2, 1))
    g.initialize()
    z = plexus.random.normal(0, 1, (2, 5, 4, 4))
    out = g(z)
    assert out.shape == (2, 3, 16, 16) and g[0].weight.shape == (5, 8, 4, 4)
    assert repr(g[0]) == "Conv2DTranspose(5 -> 8, kernel_size=(4, 4), stride=(2, 2), padding=(1, 1))"
    layer = g[3]
    ref = torch.nn.functional.conv_transpose2d(torch.tensor(g[2](g[1](g[0](z))).asnumpy()),
                                               torch.tensor(layer.weight.data().asnumpy()),
                                               torch.tensor(layer.bias.data().asnumpy()), stride=2, padding=1)
    assert numpy.allclose(out.asnumpy(), ref.numpy(), atol=1e-5)
    trainer = gluon.Trainer(g.collect_params(), "adam", {"learning_rate": 0.01})
    with autograd.record():
        loss = (g(z) ** 2).mean()
    loss.backward()
    trainer.step(2)
    assert g[0].weight.grad().abs().sum().item() > 0
    # FCN's upsampling by 32: kernel 64, padding 16, strides 32.
    up = nn.Conv2DTranspose(2, kernel_size=64, padding=16, strides=32, use_bias=False)
    up.initialize()
    assert up(plexus.ones((1, 4, 2, 3))).shape == (1, 2, 64, 96)
    with pytest.raises(ValueError, match="dilation, groups and layouts"):
        nn.Conv2DTranspose(2, 3, dilation=2)
    with pytest.raises(plexus.InvalidArgumentError, match="output_padding \\(2, 2\\) must be >= 0 and below the stride"):
        npx.deconvolution(f64(numpy.ones((1, 1, 2, 2))), f64(numpy.ones((1, 1, 3, 3))), kernel=(3, 3), adj=(2, 2))
    with pytest.raises(plexus.ShapeError, match="takes data \\(N, C, H, W\\) and a weight"):
        npx.deconvolution(f64(numpy.ones((1, 2, 2, 2))), f64(numpy.ones((1, 1, 3, 3))), kernel=(3, 3))


def test_what_the_vision_recommender_and_gan_chapters_use():
    torch = need("torch")
    # A comparison's result masks, as MXNet's bool (d2l's nms: indices[max_ious >= threshold]); a bool list
    # makes a uint8 mask (it had been float32 and picked rows 1, 0, 1 silently).
    x = np.array([3.0, 1.0, 2.0])
    assert x[x >= 2].tolist() == [3.0, 2.0] and x[np.array([True, False, True])].tolist() == [3.0, 2.0]
    x[x < 2] = 0
    assert x.tolist() == [3.0, 0.0, 2.0]
    # init.Constant of an array (d2l's FCN bilinear kernel, style transfer's image).
    k = numpy.arange(2 * 3 * 2 * 2, dtype=numpy.float32).reshape(2, 3, 2, 2)
    up = nn.Conv2DTranspose(3, 2, in_channels=2)
    up.initialize(plexus.init.Constant(np.array(k)))
    assert numpy.array_equal(up.weight.data().asnumpy(), k)
    assert repr(plexus.init.Constant(np.array(k))) == "Constant(array of shape (2, 3, 2, 2))"
    # clip's one-sided and keyword forms (box_iou's clip(min=0)).
    v = np.array([-1.0, 2.0, 5.0])
    assert v.clip(min=0).tolist() == [0.0, 2.0, 5.0] and v.clip(0).tolist() == [0.0, 2.0, 5.0]
    assert v.clip(a_max=3).tolist() == [-1.0, 2.0, 3.0] and np.clip(v, None, 3).tolist() == [-1.0, 2.0, 3.0]
    with pytest.raises(ValueError, match="give a_min, a_max or both"):
        v.clip()
    # % and np.mod as NumPy's (the divisor's sign), integers staying integers; flatten; argsort, sort, topk,
    # nonzero, unique, flip.
    a = numpy.array([-7, -1, 0, 5, 9])
    assert (np.array(a, dtype="int64") % 4).tolist() == (a % 4).tolist()
    assert (np.mod(7, np.array([-3, 3], dtype="int32"))).tolist() == [-2, 1]
    with pytest.raises(plexus.DTypeError, match="there is no exact remainder op for floats"):
        np.mod(np.array([-7.5, 2.5]), 2.0)
    assert (np.argmax(np.ones((2, 2))) % 2).item() == 0
    assert np.ones((2, 3)).flatten().shape == (6,)
    s = numpy.random.default_rng(5).normal(size=(3, 6)).astype(numpy.float32)
    t = np.array(s)
    assert numpy.array_equal(np.argsort(t).asnumpy(), numpy.argsort(s, kind="stable"))
    assert numpy.array_equal(t.argsort(axis=0).asnumpy(), numpy.argsort(s, axis=0, kind="stable"))
    assert numpy.array_equal(np.sort(t, axis=1).asnumpy(), numpy.sort(s, axis=1))
    top_v, top_i = npx.topk(t, k=2, ret_typ="both")
    assert numpy.array_equal(top_i.asnumpy().astype(int), numpy.argsort(-s, axis=-1, kind="stable")[:, :2])
    assert numpy.array_equal(top_v.asnumpy(), -numpy.sort(-s, axis=-1)[:, :2])
    assert npx.topk(t, k=1).dtype == "float32" and npx.topk(t, k=3, ret_typ="mask").sum().item() == 9
    assert [i.tolist() for i in np.nonzero(np.array([[0, 1], [2, 0]]))] == [[0, 1], [1, 0]]
    vals, counts = np.unique(np.array([3, 1, 3, 2], dtype="int64"), return_counts=True)
    assert vals.tolist() == [1, 2, 3] and counts.tolist() == [1, 1, 2]
    assert numpy.array_equal(np.flip(t, 1).asnumpy(), numpy.flip(s, 1)) and np.flip(t).shape == (3, 6)
    # sort is differentiable (a take of argsort's places), as torch.sort's values.
    g = f64(s.astype(numpy.float64))
    g.attach_grad()
    with autograd.record():
        out = (np.sort(g, axis=1) * f64(numpy.arange(6.0))).sum()
    out.backward()
    gt = torch.tensor(s.astype(numpy.float64), requires_grad=True)
    (torch.sort(gt, dim=1).values * torch.arange(6.0, dtype=torch.float64)).sum().backward()
    assert numpy.allclose(g.grad.asnumpy(), gt.grad.numpy())
    # npx.smooth_l1 against its formula; gluon.loss.Loss for a loss of one's own (d2l's BPRLoss).
    d = numpy.array([-2.0, -0.3, 0.0, 0.4, 1.5])
    want = numpy.where(numpy.abs(d) < 1, 0.5 * d * d, numpy.abs(d) - 0.5)
    assert numpy.allclose(npx.smooth_l1(f64(d)).asnumpy(), want)
    assert numpy.allclose(npx.smooth_l1(f64(d), scalar=2.0).asnumpy(),
                          numpy.where(numpy.abs(d) < 0.25, 2 * d * d, numpy.abs(d) - 0.125))

    class BPRLoss(gluon.loss.Loss):
        def __init__(self, weight=None, batch_axis=0, **kwargs):
            super().__init__(weight=None, batch_axis=0, **kwargs)

        def forward(self, positive, negative):
            return -np.sum(np.log(npx.sigmoid(positive - negative)), 0, keepdims=True)

    loss = BPRLoss()(f64([2.0, 1.0]), f64([0.5, 1.5]))
    ref = -numpy.log(1 / (1 + numpy.exp(-numpy.array([1.5, -0.5])))).sum()
    assert numpy.allclose(loss.asnumpy(), [ref])


def test_slices_with_a_negative_step_as_numpys():
    a = numpy.arange(60.0).reshape(3, 4, 5)
    t = plexus.array(a, dtype="float64")
    for key in [slice(None, None, -1), (slice(None), slice(None, None, -2)), (Ellipsis, slice(3, 0, -1)),
                (1, slice(None, None, -1), slice(1, 4)), slice(5, 1, -1), (slice(None), slice(0, 3, -1)),
                (None, slice(None, None, -1), 0)]:
        assert numpy.array_equal(t[key].asnumpy(), a[key]), key
    b, w = a.copy(), plexus.array(a, dtype="float64")
    w[::-1] = 0.5
    b[::-1] = 0.5
    w[:, ::-2] = plexus.arange(15, dtype="float64").reshape(3, 1, 5)
    b[:, ::-2] = numpy.arange(15.0).reshape(3, 1, 5)
    assert numpy.array_equal(w.asnumpy(), b)
    # d2l's nms: scores.argsort()[::-1]; differentiable, as the take it runs.
    x = f64([1.0, 2.0, 3.0])
    x.attach_grad()
    with autograd.record():
        y = (x[::-1] * f64([10.0, 20.0, 30.0])).sum()
    y.backward()
    assert x.grad.tolist() == [30.0, 20.0, 10.0]
    # Beside arrays of indices and other reversed slices (d2l's flips of both axes), as NumPy places them.
    for key in [([0, 2], slice(None, None, -1)), (slice(None, None, -1), slice(None, None, -1)),
                (slice(None, None, -1), [1, 3], slice(None, None, -2)), ([[0], [2]], slice(4, 0, -2), [1, 0])]:
        assert numpy.array_equal(t[key].asnumpy(), a[key]), key


def test_random_keys_with_reversed_slices_and_new_axes_read_and_write_as_numpys():
    import random
    rng = random.Random(3)
    a = numpy.arange(120.0).reshape(4, 5, 6)
    t = plexus.array(a, dtype="float64")
    checked = 0
    for i in range(400):
        parts = []
        for n in a.shape:
            r = rng.random()
            parts.append(slice(rng.choice([None, rng.randint(-n - 1, n + 1)]), rng.choice([None, rng.randint(-n - 1, n + 1)]),
                               rng.choice([None, -1, -2, -3, 2, -7])) if r < 0.6 else
                         rng.randint(-n, n - 1) if r < 0.8 else slice(None))
        if rng.random() < 0.2:
            parts.insert(rng.randint(0, 3), None)
        key = tuple(parts)
        want = a[key]
        assert numpy.array_equal(t[key].asnumpy(), want), key
        b, w = a.copy(), plexus.array(a, dtype="float64")
        v = numpy.random.default_rng(i).normal(size=want.shape)
        b[key] = v
        w[key] = plexus.array(v, dtype="float64") if v.ndim else float(v)
        assert numpy.array_equal(w.asnumpy(), b), key
        checked += 1
    assert checked == 400


def test_the_refusals_of_this_sessions_names_name_what_was_wrong():
    x = f64(numpy.ones((1, 2, 3, 3)))
    for call, kind, message in [
            (lambda: np.var(x, out=x), TypeError, "out= is not offered"),
            (lambda: np.var(x, ddof=-1), ValueError, "ddof is a whole number >= 0"),
            (lambda: npx.topk(x, k=0), ValueError, "k is an int in"),
            (lambda: npx.topk(x, ret_typ="all"), ValueError, "ret_typ is 'indices'"),
            (lambda: np.linspace(0, 1, -1), ValueError, "num is a whole number >= 0"),
            (lambda: np.eye(-1), ValueError, "N and M must be >= 0"),
            (lambda: np.meshgrid(np.arange(2), indexing="xz"), ValueError, "indexing is 'xy' or 'ij'"),
            (lambda: npx.deconvolution(x, f64(numpy.ones((2, 3, 2, 2))), kernel=(2, 2), num_filter=4), plexus.ShapeError,
             "num_filter=4, but the weight has 3"),
            (lambda: npx.deconvolution(x, f64(numpy.ones((2, 3, 2, 2))), kernel=(2, 2), dilate=(2, 2)), ValueError,
             "dilate, num_group, target_shape"),
            (lambda: npx.convolution(x, f64(numpy.ones((4, 2, 2, 2))), kernel=(2, 2), num_filter=3, no_bias=True),
             plexus.ShapeError, "num_filter=3, but the weight has 4"),
            (lambda: npx.convolution(x, f64(numpy.ones((4, 2, 2, 2))), kernel=(2, 2, 2)), plexus.ShapeError,
             "a 3-D window takes data of rank 5"),
            (lambda: nn.Conv1D(2, 0), ValueError, "kernel_size must be an int of at least 1"),
            (lambda: nn.Conv2DTranspose(2, (2, 2, 2)), ValueError, "kernel_size is an int or a pair of ints"),
            (lambda: gluon.data.ArrayDataset(), TypeError, "give at least one array"),
            (lambda: plexus.data.ArrayDataset(numpy.ones(2), labels=numpy.ones(2)), TypeError,
             "unexpected keyword argument.s. labels"),
            (lambda: plexus.data.default_batchify([(1, 2), (3,)]), TypeError, "every sample is a tuple of 2 fields"),
            (lambda: plexus.data.SampleLoader(PTB(3), 0), ValueError, "batch_size is an int of at least 1"),
            (lambda: plexus.data.SampleLoader(PTB(3), 2, sampler=None), TypeError, "sampler not offered"),
            (lambda: plexus.data.SampleLoader(3, 2), TypeError, "a dataset has __getitem__ and __len__"),
            (lambda: plexus.data.SampleLoader(PTB(3), 2, batchify_fn=5), TypeError, "batchify_fn is a callable"),
            (lambda: plexus.data.SampleLoader(PTB(3), 2, num_workers=-1), ValueError, "num_workers is a whole number"),
            (lambda: plexus.data.SampleLoader(PTB(3), 2).begin_epoch(-1), ValueError, "the epoch is a whole number"),
            (lambda: v.clip(a_min=0, min=0), TypeError, "not both")]:
        v = np.array([1.0])
        with pytest.raises(kind, match=message):
            call()
    conv = nn.Conv1D(2, 2, in_channels=3)
    conv.initialize()
    with pytest.raises(plexus.ShapeError, match="the input has 4 channels, and the layer takes 3"):
        conv(plexus.ones((1, 4, 5)))
    up = nn.Conv2DTranspose(2, 2)
    up.initialize()
    with pytest.raises(plexus.ShapeError, match="takes \\(batch, channels, height, width\\) inputs"):
        up(plexus.ones((1, 4, 5)))
    with pytest.raises(NotImplementedError, match="define forward"):
        nn.HybridBlock()(plexus.ones((1,)))
    loader = plexus.data.SampleLoader(PTB(5), 2)
    loader.begin_epoch(3)
    assert loader.epoch == 3
