"""MXNet's npx and np names d2l uses beyond the tensors' own: npx.softmax and log_softmax over any axis,
one_hot, batch_dot, sequence_mask; np.linalg.norm; np.random.seed and multinomial. Values and gradients
against NumPy and PyTorch in float64, each refusal, and results on the input's device."""
import pytest

import plexus
from plexus import autograd, np, npx
from conftest import need

INF = float("inf")


def f64(values, device=None):
    return plexus.array(values, dtype="float64", device=device)


def grad_of(f, values, weights):
    """x.grad of sum(f(x) * weights), x a float64 tensor of `values`, and f(x)."""
    x = f64(values)
    x.attach_grad()
    with autograd.record():
        y = f(x)
        (y * f64(weights)).sum().backward()
    return x.grad.asnumpy(), y.asnumpy()


def torch_grad_of(f, values, weights):
    torch = need("torch")
    xt = torch.tensor(values, dtype=torch.float64, requires_grad=True)
    y = f(xt)
    (y * torch.tensor(weights, dtype=torch.float64)).sum().backward()
    return xt.grad.numpy(), y.detach().numpy()


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_softmax_and_log_softmax_over_any_axis_match_pytorch_with_gradients(name):
    onp, torch = need("numpy"), need("torch")
    rng = onp.random.RandomState(0)
    ours, theirs = getattr(npx, name), getattr(torch, name)
    for shape in [(5,), (3, 4), (2, 3, 4), (2, 1, 3, 2)]:
        xn = rng.randn(*shape) * 3
        for axis in range(-len(shape), len(shape)):
            wn = rng.randn(*shape)
            g, y = grad_of(lambda x: ours(x, axis=axis), xn, wn)
            tg, ty = torch_grad_of(lambda x: theirs(x, axis), xn, wn)
            assert y.shape == shape
            assert onp.abs(y - ty).max() < 1e-12, (shape, axis)
            assert onp.abs(g - tg).max() < 1e-12, (shape, axis)
    # The package's names: plexus.softmax (over the last axis by default, as before) and plexus.log_softmax.
    x = f64(rng.randn(3, 4))
    assert getattr(plexus, name)(x).tolist() == ours(x, axis=-1).tolist() == ours(x, 1).tolist()


def test_log_softmax_is_stable_where_log_of_softmax_is_not_and_16_bit_floats_keep_their_dtype():
    onp, torch = need("numpy"), need("torch")
    xn = onp.array([[0.0, -800.0, 5.0], [1e3, 0.0, -1e3]])
    ref = torch.log_softmax(torch.tensor(xn), -1).numpy()
    assert onp.isfinite(npx.log_softmax(f64(xn)).asnumpy()).all()
    assert onp.abs(npx.log_softmax(f64(xn)).asnumpy() - ref).max() < 1e-12
    assert onp.abs(npx.log_softmax(f64(xn.T), axis=0).asnumpy() - ref.T).max() < 1e-12
    h = plexus.array([[1.0, 2.0, -3.0]], dtype="float16")
    for f, tf in [(npx.softmax, torch.softmax), (npx.log_softmax, torch.log_softmax)]:
        got = f(h, axis=-1)
        assert got.dtype == "float16"
        want = tf(torch.tensor([[1.0, 2.0, -3.0]], dtype=torch.float32), -1).numpy()
        assert onp.abs(got.asnumpy().astype(onp.float32) - want).max() < 2e-3


def test_softmax_refusals_name_what_is_wrong():
    x = f64([[1.0, 2.0], [3.0, 4.0]])
    for f in (npx.softmax, npx.log_softmax, plexus.softmax):
        with pytest.raises(plexus.ShapeError, match="rank 1 or more"):
            f(f64(1.0))
        with pytest.raises(plexus.InvalidArgumentError, match="axis 2 is out of range for a tensor of rank 2"):
            f(x, axis=2)
        with pytest.raises(plexus.InvalidArgumentError, match="axis -3 is out of range"):
            f(x, axis=-3)
        with pytest.raises(TypeError, match="axis is an int"):
            f(x, axis=1.0)
        with pytest.raises(TypeError, match="is a builtins.list, not a plexus Tensor"):
            f([1.0, 2.0])
        with pytest.raises(plexus.DTypeError, match="int32"):
            f(plexus.array([[1, 2]], dtype="int32"))


def test_one_hot_matches_numpy_with_out_of_range_rows_all_off():
    onp = need("numpy")
    idx = onp.array([[0, 3, 1], [4, -1, 2]])
    for dtype in ["int32", "int64", "uint8", "float32", "float64"]:
        given = plexus.array(idx if dtype != "uint8" else onp.abs(idx), dtype=dtype)
        got = npx.one_hot(given, 4)
        src = given.asnumpy().astype(onp.int64)
        want = ((src[..., None] == onp.arange(4)) & (src[..., None] >= 0)).astype(onp.float32)
        assert got.shape == (2, 3, 4) and got.dtype == onp.float32, dtype
        assert (got.asnumpy() == want).all(), dtype
    assert npx.one_hot(plexus.array([4, -1, 1e30, float("inf")]), 4).asnumpy().sum() == 0.0  # every row off
    got = npx.one_hot(plexus.array([2, 0], dtype="int64"), 3, on_value=5, off_value=-2, dtype="int32")
    assert got.dtype == onp.int32 and got.tolist() == [[-2, -2, 5], [5, -2, -2]]
    got = npx.one_hot(plexus.array([1.0], dtype="float64"), 2, on_value=0.25, dtype="float64")
    assert got.dtype == onp.float64 and got.tolist() == [[0.0, 0.25]]
    assert npx.one_hot([0, 2], 3).tolist() == [[1, 0, 0], [0, 0, 1]]  # d2l's np.array([0, 2]), float32
    assert npx.one_hot(plexus.zeros((0,), dtype="int32"), 3).shape == (0, 3)
    assert npx.one_hot(plexus.array(1, dtype="int32"), 3).tolist() == [0, 1, 0]  # a scalar index: one row


def test_one_hot_refusals_name_what_is_wrong():
    with pytest.raises(ValueError, match="whole numbers; found 1.5"):
        npx.one_hot(plexus.array([0.0, 1.5]), 3)
    with pytest.raises(ValueError, match="whole numbers; found nan"):
        npx.one_hot(plexus.array([float("nan")]), 3)
    with pytest.raises(ValueError, match="depth must be 0 or more, got -1"):
        npx.one_hot(plexus.array([0]), -1)
    with pytest.raises(TypeError, match="depth is an int, not a float"):
        npx.one_hot(plexus.array([0]), 3.0)
    with pytest.raises(plexus.DTypeError, match="300 is beyond what uint8 holds"):  # as plexus.full's
        npx.one_hot(plexus.array([0]), 3, on_value=300, dtype="uint8")


def test_batch_dot_matches_numpy_and_its_gradients_match_pytorch():
    onp, torch = need("numpy"), need("torch")
    rng = onp.random.RandomState(1)
    for ta in (False, True):
        for tb in (False, True):
            an, bn = rng.randn(3, 2, 4), rng.randn(3, 4, 5)
            a_in = an.transpose(0, 2, 1).copy() if ta else an
            b_in = bn.transpose(0, 2, 1).copy() if tb else bn
            a, b = f64(a_in), f64(b_in)
            a.attach_grad()
            b.attach_grad()
            wn = rng.randn(3, 2, 5)
            with autograd.record():
                y = npx.batch_dot(a, b, transpose_a=ta, transpose_b=tb)
                (y * f64(wn)).sum().backward()
            assert y.shape == (3, 2, 5)
            assert onp.abs(y.asnumpy() - an @ bn).max() < 1e-12
            at, bt = torch.tensor(a_in, requires_grad=True), torch.tensor(b_in, requires_grad=True)
            yt = torch.bmm(at.transpose(1, 2) if ta else at, bt.transpose(1, 2) if tb else bt)
            (yt * torch.tensor(wn)).sum().backward()
            assert onp.abs(a.grad.asnumpy() - at.grad.numpy()).max() < 1e-12
            assert onp.abs(b.grad.asnumpy() - bt.grad.numpy()).max() < 1e-12
    # More leading batch axes, as MXNet's: (2, 3, M, K) x (2, 3, K, N).
    an, bn = rng.randn(2, 3, 2, 4), rng.randn(2, 3, 4, 1)
    assert onp.abs(npx.batch_dot(f64(an), f64(bn)).asnumpy() - an @ bn).max() < 1e-12


def test_batch_dot_refusals_are_shape_errors_naming_the_shapes():
    a, b = plexus.ones((2, 3, 4)), plexus.ones((2, 4, 5))
    with pytest.raises(plexus.ShapeError, match=r"inner dimensions differ: 4 of a \(2, 3, 4\) and 5 of b"):
        npx.batch_dot(a, b, transpose_b=True)
    with pytest.raises(plexus.ShapeError, match=r"inner dimensions differ: 3 of a \(2, 3, 4\) \(transpose_a\)"):
        npx.batch_dot(a, b, transpose_a=True)
    with pytest.raises(plexus.ShapeError, match=r"batch axes differ: \(2,\) and \(3,\)"):
        npx.batch_dot(a, plexus.ones((3, 4, 5)))
    with pytest.raises(plexus.ShapeError, match=r"of one rank, 3 or more, got \(3, 4\) and \(4, 5\)"):
        npx.batch_dot(plexus.ones((3, 4)), plexus.ones((4, 5)))
    with pytest.raises(plexus.ShapeError, match="of one rank"):
        npx.batch_dot(a, plexus.ones((1, 2, 4, 5)))
    with pytest.raises(plexus.DTypeError):
        npx.batch_dot(a, b.astype("float64"))
    with pytest.raises(TypeError, match="b is a builtins.list, not a plexus Tensor"):
        npx.batch_dot(a, [[1.0]])


def test_sequence_mask_as_mxnet_on_both_axes_with_its_gradient():
    onp = need("numpy")
    rng = onp.random.RandomState(2)
    xn = rng.randn(3, 4, 2)  # axis=1: (batch 3, steps 4, 2); axis=0: (steps 3, batch 4, 2)
    for axis, lengths in [(1, [2, 0, 4]), (0, [1, 3, 0, 2])]:
        steps = xn.shape[axis]
        keep = onp.arange(steps)[:, None] < onp.array(lengths)[None, :]  # (steps, batch)
        keep = (keep.T if axis == 1 else keep)[..., None]
        wn = rng.randn(*xn.shape)
        g, y = grad_of(lambda x: npx.sequence_mask(x, plexus.array(lengths), True, value=-1e6, axis=axis), xn, wn)
        assert (y == onp.where(keep, xn, -1e6)).all(), axis
        assert (g == onp.where(keep, wn, 0.0)).all(), axis  # d/dx: the weights where kept, 0 where masked
    # d2l's masked_softmax: X (batch*queries, keys), one valid length per row; float lengths truncate, as MXNet's.
    x = f64(rng.randn(2, 5))
    masked = npx.sequence_mask(x, plexus.array([2.0, 3.9]), use_sequence_length=True, value=-1e6, axis=1)
    p = npx.softmax(masked).asnumpy()
    assert (p[0, 2:] == 0).all() and (p[1, 3:] == 0).all() and onp.allclose(p.sum(1), 1.0)
    # Lengths as a list, beyond the steps, an integer tensor keeping its dtype; without use_sequence_length a copy.
    ints = plexus.array([[1, 2], [3, 4]], dtype="int32")
    assert npx.sequence_mask(ints, [1, 5], True, value=-7, axis=1).tolist() == [[1, -7], [3, 4]]
    assert npx.sequence_mask(ints, [1, 5], True, value=-7, axis=1).dtype == onp.int32
    same = npx.sequence_mask(ints, plexus.array([0, 0]))
    assert same.tolist() == ints.tolist() and not same.is_(ints)


def test_sequence_mask_refusals_name_what_is_wrong():
    x = plexus.ones((2, 3))
    with pytest.raises(ValueError, match="use_sequence_length=True needs sequence_length"):
        npx.sequence_mask(x, None, True)
    with pytest.raises(plexus.InvalidArgumentError, match="axis is 0 .* or 1 .*; got 2"):
        npx.sequence_mask(x, plexus.array([1, 1]), True, axis=2)
    with pytest.raises(plexus.ShapeError, match=r"shape \(3,\) for data \(2, 3\) with axis=0; got shape \(2,\)"):
        npx.sequence_mask(x, plexus.array([1, 1]), True, axis=0)
    with pytest.raises(plexus.ShapeError, match=r"got shape \(2, 1\)"):
        npx.sequence_mask(x, plexus.ones((2, 1)), True, axis=1)
    with pytest.raises(plexus.ShapeError, match="a steps axis and a batch axis"):
        npx.sequence_mask(plexus.ones(3), plexus.array([1]), True)


def test_linalg_norm_matches_numpy_and_its_gradients_match_pytorch():
    onp, torch = need("numpy"), need("torch")
    rng = onp.random.RandomState(3)
    v, m, t = rng.randn(5), rng.randn(3, 4), rng.randn(2, 3, 4)
    cases = [(v, {}), (v, {"ord": 1}), (v, {"ord": 2}), (v, {"ord": onp.inf}), (m, {}), (m, {"ord": "fro"}),
             (m, {"axis": 0}), (m, {"axis": -1, "ord": 1}), (m, {"axis": 1, "ord": onp.inf}),
             (t, {}), (t, {"axis": (0, 2)}), (t, {"axis": (2, 1), "ord": "fro"}), (t, {"axis": 1, "ord": 2})]
    for xn, kw in cases:
        for keepdims in (True, False):
            want = onp.linalg.norm(xn, keepdims=keepdims, **kw)
            got = np.linalg.norm(f64(xn), keepdims=keepdims, **kw)
            assert got.shape == onp.shape(want), (xn.shape, kw, keepdims)
            assert onp.abs(got.asnumpy() - want).max() < 1e-12, (xn.shape, kw, keepdims)
        # Gradients against torch.linalg's norms (vector_norm along an axis, norm's Frobenius of the rest).
        ord_, axis = kw.get("ord"), kw.get("axis")
        tord = 2 if ord_ in (None, "fro") else ord_
        tdim = axis if axis is not None else (None if ord_ is None else tuple(range(xn.ndim)))
        wn = rng.randn(*onp.shape(want))  # (want: keepdims=False)
        g, _ = grad_of(lambda x: np.linalg.norm(x, **kw), xn, wn)
        tg, _ = torch_grad_of(lambda x: torch.linalg.vector_norm(x, tord, dim=tdim), xn, wn)
        assert onp.abs(g - tg).max() < 1e-12, (xn.shape, kw)
    # At zero: gradient 0, as PyTorch's (not NaN); integers give float64, 16-bit floats keep their dtype.
    g, y = grad_of(lambda x: np.linalg.norm(x, axis=1), onp.zeros((2, 3)), onp.ones(2))
    assert (g == 0).all() and (y == 0).all()
    assert np.linalg.norm(plexus.array([3, 4], dtype="int32")).dtype == onp.float64
    assert np.linalg.norm(plexus.array([[3, 4]], dtype="int64"), axis=1).tolist() == [5.0]
    h = np.linalg.norm(plexus.array([[300.0, 400.0]], dtype="float16"), axis=1)
    assert h.dtype == onp.float16 and h.tolist() == [500.0]  # 300**2 is beyond float16: computed in float32
    import importlib
    assert importlib.import_module("plexus.linalg") is np.linalg is plexus.linalg  # a module, as NumPy's
    assert np.linalg.norm.__name__ == "norm"


def test_linalg_norm_refusals_name_what_is_supported():
    v, m = plexus.ones(3), plexus.ones((2, 2))
    for ord_ in (3, 0, -1, -INF, "nuc", True):
        with pytest.raises(ValueError, match=r"is not supported: vectors take ord None, 1, 2 or inf"):
            np.linalg.norm(v, ord=ord_)
    for ord_ in (1, 2, INF):
        with pytest.raises(ValueError, match=r"ord=.* of a matrix is not supported"):
            np.linalg.norm(m, ord=ord_)
    with pytest.raises(ValueError, match="'fro' is a matrix norm"):
        np.linalg.norm(v, ord="fro")
    with pytest.raises(ValueError, match="'fro' is a matrix norm"):
        np.linalg.norm(m, ord="fro", axis=0)
    with pytest.raises(plexus.ShapeError, match=r"takes a vector or a matrix, got shape \(2, 2, 2\)"):
        np.linalg.norm(plexus.ones((2, 2, 2)), ord=1)
    with pytest.raises(plexus.InvalidArgumentError, match="axis 2 is out of range for a tensor of rank 2"):
        np.linalg.norm(m, axis=2)
    with pytest.raises(plexus.InvalidArgumentError, match="names one axis twice"):
        np.linalg.norm(m, axis=(1, -1))
    with pytest.raises(TypeError, match="a tuple of two ints"):
        np.linalg.norm(m, axis=(0, 1, 1))
    with pytest.raises(TypeError, match="is a builtins.list, not a plexus Tensor"):
        np.linalg.norm([3.0, 4.0])


def test_random_seed_and_multinomial_are_reproducible_and_follow_the_probabilities():
    onp = need("numpy")
    p = [0.1, 0.2, 0.3, 0.4]
    np.random.seed(42)
    a = np.random.multinomial(10, p, size=500)
    u = np.random.uniform(size=3)
    plexus.seed(42)  # the same stream: npx.seed and plexus.seed
    b = np.random.multinomial(10, p, size=500)
    assert a.dtype == onp.int64 and a.shape == (500, 4) and a.tolist() == b.tolist()
    assert np.random.uniform(size=3).tolist() == u.tolist()  # then the same draws after it
    np.random.seed(43)
    assert np.random.multinomial(10, p, size=500).tolist() != a.tolist()
    counts = a.asnumpy()
    assert (counts.sum(axis=1) == 10).all() and (counts >= 0).all()
    freq = counts.sum(axis=0) / 5000.0
    assert onp.abs(freq - p).max() < 0.03  # sd about 0.007
    # d2l: np.random.multinomial(1000, fair_probs) / 1000, one draw of n, shape (6,).
    np.random.seed(0)
    one = np.random.multinomial(100000, [1 / 6] * 6)
    assert one.shape == (6,) and one.sum().item() == 100000
    assert onp.abs(one.asnumpy() / 100000 - 1 / 6).max() < 0.01
    # As NumPy's: the last category takes what pvals leave, and shapes follow size.
    assert np.random.multinomial(5, [0.0, 0.0]).tolist() == [0, 5]
    assert np.random.multinomial(5, [1.0, 0.0, 0.0]).tolist() == [5, 0, 0]
    assert np.random.multinomial(5, [1.0], size=(2, 3)).shape == (2, 3, 1)
    assert np.random.multinomial(0, [0.5, 0.5], size=2).tolist() == [[0, 0], [0, 0]]
    assert np.random.multinomial(3, [0.5, 0.5], size=0).shape == (0, 2)
    assert np.random.multinomial(3, plexus.array([0.5, 0.5])).sum().item() == 3  # pvals as a tensor


def test_random_multinomial_and_seed_refusals_name_what_is_wrong():
    nan, inf = float("nan"), float("inf")
    with pytest.raises(ValueError, match="pvals must be 0 or more"):
        np.random.multinomial(3, [0.5, -0.1, 0.6])
    with pytest.raises(ValueError, match="pvals must be finite"):
        np.random.multinomial(3, [0.5, nan])
    with pytest.raises(ValueError, match="pvals must be finite"):
        np.random.multinomial(3, [inf, 0.5])
    with pytest.raises(ValueError, match=r"sum\(pvals\[:-1\]\) is 1.25, more than 1"):
        np.random.multinomial(3, [0.5, 0.75, 0.5])
    # As NumPy's: the last category takes what the others leave (float32 probabilities summing past 1 too).
    assert np.random.multinomial(4, [0.5, 0.6]).asnumpy().sum() == 4
    assert np.random.multinomial(6, plexus.ones((6,)) / 6).asnumpy().sum() == 6
    with pytest.raises(ValueError, match=r"1-D\), got shape \(1, 2\)"):
        np.random.multinomial(3, [[0.5, 0.5]])
    with pytest.raises(ValueError, match="n must be 0 or more, got -1"):
        np.random.multinomial(-1, [0.5, 0.5])
    with pytest.raises(TypeError, match="n .* is an int, not a float"):
        np.random.multinomial(2.5, [0.5, 0.5])
    with pytest.raises(ValueError, match="negative length"):
        np.random.multinomial(2, [0.5, 0.5], size=(2, -1))
    with pytest.raises(ValueError, match=r"-1 is outside \[0, 2\*\*64\)"):
        np.random.seed(-1)
    with pytest.raises(ValueError, match=r"outside \[0, 2\*\*64\)"):
        np.random.seed(2 ** 64)
    with pytest.raises(TypeError, match="not a float"):
        np.random.seed(1.0)
    np.random.seed(2 ** 64 - 1)
    np.random.seed(None)  # from the operating system, as NumPy's


def test_results_stay_on_the_inputs_device():
    onp = need("numpy")
    d = plexus.cpu(1)  # PLEXUS_CPU_DEVICES=2
    x = f64(onp.random.RandomState(4).randn(2, 3), device=d)
    results = [npx.softmax(x, axis=0), npx.log_softmax(x), npx.one_hot(plexus.array([1, 2], device=d), 3),
               npx.batch_dot(x.reshape(1, 2, 3), x.reshape(1, 3, 2), transpose_b=False),
               npx.sequence_mask(x, [1, 0, 2], True, axis=0), npx.sequence_mask(x, plexus.array([1, 3], device=d),
                                                                              True, axis=1),
               np.linalg.norm(x), np.linalg.norm(x, axis=1), np.linalg.norm(x, ord=1, axis=0),
               np.random.multinomial(3, plexus.array([0.5, 0.5], device=d)),
               np.random.multinomial(3, [0.5, 0.5], device=d)]
    for r in results:
        assert r.device == d
    assert results[0].dtype == onp.float64 and results[2].dtype == onp.float32
    assert onp.abs(results[1].asnumpy() - npx.log_softmax(x.copyto(plexus.cpu(0))).asnumpy()).max() == 0
    # Lengths on another device than the data: the runtime's DeviceMismatchError, naming both.
    with pytest.raises(plexus.DeviceMismatchError, match="cpu"):
        npx.sequence_mask(x, plexus.array([1, 3]), True, axis=1)


@pytest.mark.parametrize("axis", [None, 0, 1, -1])
def test_cumsum_repeat_tile_and_swapaxes_agree_with_numpy(axis):
    numpy = need("numpy")
    a = numpy.arange(12).reshape(3, 4) - 5
    for dtype in ("int32", "float64", "uint8"):
        got = plexus.array(a % 200 if dtype == "uint8" else a, dtype=dtype).cumsum(axis)
        want = numpy.cumsum((a % 200).astype(dtype) if dtype == "uint8" else a.astype(dtype), axis=axis)
        assert got.asnumpy().tolist() == want.tolist() and got.dtype == (dtype if dtype == "float64" else "int64")
    x = plexus.array(a, dtype="float64")
    assert numpy.array_equal(np.repeat(x, 2, axis=axis).asnumpy(), numpy.repeat(a, 2, axis=axis))
    assert numpy.array_equal(x.repeat([1, 0, 3], axis=0).asnumpy(), numpy.repeat(a, [1, 0, 3], axis=0))
    assert numpy.array_equal(np.tile(x, (2, 1, 2)).asnumpy(), numpy.tile(a, (2, 1, 2)))
    assert numpy.array_equal(np.tile(x, 3).asnumpy(), numpy.tile(a, 3))
    assert numpy.array_equal(x.swapaxes(0, -1).asnumpy(), numpy.swapaxes(a, 0, -1))
    # d2l's masked_softmax: valid_lens.repeat(shape[1]).
    assert np.array([2, 3], dtype="int64").repeat(2).tolist() == [2, 2, 3, 3]


def test_cumsum_repeat_and_tile_are_differentiable_and_refuse_bad_arguments():
    torch = need("torch")
    values = [[1.0, -2.0, 3.0], [0.5, 4.0, -1.0]]
    weights = torch.arange(1.0, 13.0, dtype=torch.float64)
    for mine, theirs in [(lambda x: x.cumsum(1), lambda t: t.cumsum(1)),
                         (lambda x: x.repeat(2, axis=1), lambda t: t.repeat_interleave(2, dim=1)),
                         (lambda x: np.tile(x, (1, 2)), lambda t: t.repeat(1, 2))]:
        x = f64(values)
        x.attach_grad()
        t = torch.tensor(values, dtype=torch.float64, requires_grad=True)
        y = theirs(t).reshape(-1)
        (y * weights[:y.numel()]).sum().backward()
        with autograd.record():
            (mine(x).reshape(-1) * f64(weights[:y.numel()].tolist())).sum().backward()
        assert x.grad.asnumpy().tolist() == t.grad.tolist()
    x = f64(values)
    with pytest.raises(plexus.InvalidArgumentError, match="cumsum: axis 2 is out of range"):
        x.cumsum(2)
    with pytest.raises(ValueError, match="repeats may not be negative"):
        x.repeat(-1)
    with pytest.raises(ValueError, match="one int per element along the axis .3."):
        x.repeat([1, 2], axis=1)
    with pytest.raises(ValueError, match="reps are ints of 0 or more"):
        np.tile(x, (1, 1.5))
    with pytest.raises(plexus.InvalidArgumentError, match="swapaxes: axis 5 is out of range"):
        x.swapaxes(0, 5)


def test_matmul_of_four_axes_broadcasts_batches_as_numpy(tmp_path):
    numpy = need("numpy")
    a, b = numpy.arange(24.0).reshape(2, 1, 3, 4), numpy.arange(60.0).reshape(5, 4, 3) / 7
    got = plexus.array(a, dtype="float64") @ plexus.array(b, dtype="float64")
    assert got.shape == (2, 5, 3, 3) and numpy.allclose(got.asnumpy(), a @ b, rtol=1e-15, atol=0)
    npx.save(str(tmp_path / "x"), [plexus.array([1, 2])])
    assert npx.load(str(tmp_path / "x"))[0].tolist() == [1.0, 2.0]


def test_pick_along_any_axis_as_npx_pick():
    numpy = need("numpy")
    d = numpy.arange(24.0).reshape(2, 3, 4)
    x = f64(d)
    last = numpy.array([[0, 1, 2], [3, 3, 0]])
    assert numpy.array_equal(npx.pick(x, plexus.array(last, dtype="int64")).asnumpy(),
                             numpy.take_along_axis(d, last[..., None], -1)[..., 0])
    middle = numpy.array([[0, 1, 2, 0], [1, 1, 0, 2]])
    assert numpy.array_equal(npx.pick(x, middle, axis=1).asnumpy(), numpy.take_along_axis(d, middle[:, None], 1)[:, 0])
    assert npx.pick(x, middle, axis=1, keepdims=True).shape == (2, 1, 4)
    x.attach_grad()
    with autograd.record():
        npx.pick(x, middle, axis=1).sum().backward()
    want = numpy.zeros_like(d)
    numpy.put_along_axis(want, middle[:, None], 1.0, 1)
    assert numpy.array_equal(x.grad.asnumpy(), want)
    with pytest.raises(plexus.ShapeError, match=r"index has data's shape without axis 1, \(2, 4\); got \(2, 3\)"):
        npx.pick(x, last, axis=1)
    with pytest.raises(plexus.InvalidArgumentError, match="an index lies outside"):
        npx.pick(x, middle + 3, axis=1)
    with pytest.raises(plexus.ShapeError, match="pick: data has an axis to pick along; got a scalar"):
        npx.pick(f64(1.0), [0])


def test_broadcast_to_as_numpys_with_its_gradient():
    numpy = need("numpy")
    x = f64([[1.0], [2.0]])
    x.attach_grad()
    with autograd.record():
        y = np.broadcast_to(x, (3, 2, 4))
        y.sum().backward()
    assert numpy.array_equal(y.asnumpy(), numpy.broadcast_to(numpy.array([[1.0], [2.0]]), (3, 2, 4)))
    assert x.grad.asnumpy().tolist() == [[12.0], [12.0]]
    with pytest.raises(plexus.ShapeError):
        np.broadcast_to(x, (3, 5))
    with pytest.raises(plexus.ShapeError, match=r"\(2, 1\) does not broadcast to \(1,\)"):
        np.broadcast_to(x, (1,))



def test_random_randint_and_float_token_ids():
    numpy = need("numpy")
    np.random.seed(5)
    a = np.random.randint(-3, 4, size=(2000,))
    np.random.seed(5)
    assert np.random.randint(-3, 4, size=(2000,)).tolist() == a.tolist()  # the seeded stream
    counts = numpy.bincount(a.asnumpy() + 3, minlength=7)
    assert a.dtype == "int64" and counts.min() > 200 and len(counts) == 7  # every value of [-3, 4), about 286 each
    assert np.random.randint(5).shape == () and np.random.randint(2, size=3, dtype="uint8").dtype == "uint8"
    with pytest.raises(ValueError, match="low >= high"):
        np.random.randint(3, 3)
    with pytest.raises(ValueError, match=r"\[0, 300\) does not fit uint8"):
        np.random.randint(300, dtype="uint8")
    with pytest.raises(TypeError, match="high is an int, not a float"):
        np.random.randint(0, 2.5)
    with pytest.raises(ValueError, match="more than 2..53 integers"):
        np.random.randint(0, 2 ** 54)
    with pytest.raises(TypeError, match="dtype is int32, int64 or uint8"):
        np.random.randint(3, dtype="float32")
    # d2l's float32 token ids (build_array_nmt) into an Embedding and take, as MXNet's.
    from plexus.gluon import nn
    embedding = nn.Embedding(10, 2)
    embedding.initialize()
    ids = np.array([[3, 0], [9, 3]])  # float32
    assert numpy.array_equal(embedding(ids).asnumpy(), embedding.weight.data().asnumpy()[[[3, 0], [9, 3]]])
    assert np.take(np.arange(10), np.array([7, 2])).tolist() == [7.0, 2.0]
    with pytest.raises(plexus.InvalidArgumentError, match="an index is not a row number .a whole number below 2.63.: found 0.5"):
        embedding(np.array([0.5]))
