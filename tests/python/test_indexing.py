"""x[key] and x[key] = v as NumPy's indexing: ints, slices, '...', None, and arrays of indices (lists,
ranges, NumPy integer arrays and masks, integer tensors), each checked against NumPy itself."""
import pytest

import plexus
from conftest import need

np = need("numpy")

A = np.arange(60, dtype=np.float64).reshape(3, 4, 5)

# Keys whose result NumPy places in each way: one array, arrays side by side (their part stays where they
# are), arrays apart (their part comes first), ints beside arrays, masks, None, '...', negative indices.
KEYS = [
    [0, 2], [-1, -3], [], range(2), np.array([2, 0]), np.array([[1, 0], [2, 2]], dtype=np.uint8),
    ([0, 2],), (slice(None), [1, 3]), (slice(1, None), [0, 0, 3]), (Ellipsis, [4, -1]),
    ([0, 1], [1, 2]), ([[0], [2]], slice(None), [[1, 2]]), ([0, 1], slice(None), [1, 2]),
    (0, slice(None), [1, 2]), (slice(None), [[0, 1], [2, 3]], 0), (1, [2], 3),
    (None, [0, 1]), (slice(None), None, [1]),
    (A[:, 0, 0] > 10,), (slice(None), A[0] > 7), ([True, False, True],),
]


@pytest.mark.parametrize("key", KEYS, ids=[repr(k)[:40] for k in KEYS])
def test_reading_agrees_with_numpy(key):
    x = plexus.array(A, dtype="float64", device=plexus.cpu(1))
    got = x[key]
    assert got.device == plexus.cpu(1)
    assert got.shape == A[key].shape
    assert np.array_equal(got.asnumpy(), A[key])


def test_tensors_of_indices_count_from_the_end_too():
    x = plexus.array(A, dtype="float64")
    assert np.array_equal(x[plexus.array([2, -1, 0], dtype="int64")].asnumpy(), A[[2, -1, 0]])
    assert np.array_equal(x[:, plexus.array([[3], [-4]], dtype="int32")].asnumpy(), A[:, [[3], [-4]]])
    assert np.array_equal(x[plexus.array(1, dtype="int64")].asnumpy(), A[1])
    # An integer table: values moved bit for bit.
    big = plexus.array([2**62 + 1, -5, 7], dtype="int64")
    assert big[[0, 0, 2]].tolist() == [2**62 + 1, 2**62 + 1, 7]


def test_whole_float_indices_index_as_mxnets_float32_arrays_do():
    # d2l's data_iter (features[np.array(batch)]) and y_hat[[0, 1], y] with y = np.array([0, 2]): MXNet's
    # np.array makes float32, and its indexing takes them; NumPy would refuse floats.
    x = plexus.array(A, dtype="float64")
    assert np.array_equal(x[plexus.array([2, -1, 0])].asnumpy(), A[[2, -1, 0]])
    assert np.array_equal(x[:, np.array([3.0, 1.0])].asnumpy(), A[:, [3, 1]])
    assert np.array_equal(x[plexus.array([[0.0]], dtype="bfloat16"), 1].asnumpy(), A[[[0]], 1])
    y_hat = plexus.array([[0.1, 0.3, 0.6], [0.3, 0.2, 0.5]])
    assert y_hat[[0, 1], plexus.array([0, 2])].tolist() == pytest.approx([0.1, 0.5])


def test_the_d2l_cross_entropy_picks_each_rows_label():
    y_hat = plexus.array([[0.1, 0.3, 0.6], [0.3, 0.2, 0.5]])
    y = plexus.array([0, 2], dtype="int64")
    assert y_hat[[0, 1], y].tolist() == pytest.approx([0.1, 0.5])
    assert (-plexus.log(y_hat[range(len(y_hat)), y])).tolist() == pytest.approx([-np.log(0.1), -np.log(0.5)])


def test_gradients_add_back_into_the_places_read():
    w = plexus.array(A[:2, :3, 0], dtype="float64")
    w.attach_grad()
    with plexus.autograd.record():
        picked = w[[0, 1, 1], [2, 0, 0]] * plexus.array([1.0, 2.0, 3.0], dtype="float64")
        loss = picked.sum() + (w[:, [2, 2]] ** 2).sum()
    loss.backward()
    want = np.zeros((2, 3))
    np.add.at(want, ([0, 1, 1], [2, 0, 0]), [1.0, 2.0, 3.0])
    want[:, 2] += 2 * 2 * A[:2, 2, 0]
    assert np.allclose(w.grad.asnumpy(), want, rtol=0, atol=1e-12)


@pytest.mark.parametrize("key, words", [
    ([3], "index 3 is out of bounds for axis 0 with size 3"),
    ([-4], "index -4 is out of bounds for axis 0 with size 3"),
    (([0], [5]), "index 5 is out of bounds for axis 1 with size 4"),
    ((slice(None), [1.5]), "an array of float indices must hold whole numbers; it holds 1.5"),
    (([0.0, float("nan")],), "an array of float indices must hold whole numbers; it holds nan"),
    ((np.array(["a"]),), "must be of integer, whole float or boolean type, not str32"),
    (([0, 1], [0, 1, 2]), "could not be broadcast together with shapes (2,) (3,)"),
    (([True, False],), "dimension is 3 but corresponding boolean dimension is 2"),
    ((0, 0, 0, [0]), "too many indices for a tensor of rank 3"),
    ({"a": 1}, "not by a dict"),
])
def test_bad_keys_are_index_errors_in_numpys_words(key, words):
    x = plexus.array(A)
    with pytest.raises(IndexError, match=words.replace("(", r"\(").replace(")", r"\)")):
        x[key]


def test_bad_tensors_of_indices_are_refused():
    x = plexus.array(A)
    with pytest.raises(IndexError, match="index 3 is out of bounds for axis 0 with size 3"):
        x[plexus.array([0, 3], dtype="int32")]
    with pytest.raises(IndexError, match="index -9 is out of bounds for axis 1"):
        x[:, plexus.array([-9], dtype="int64")]
    with pytest.raises(IndexError, match="float indices must hold whole numbers; it holds 0.5"):
        x[plexus.array([0.0, 0.5])]
    # A comparison's result is a mask, as MXNet's bool (d2l's indices[max_ious >= threshold]); it had been refused.
    assert np.array_equal(x[plexus.array([1.0, 0.0, 1.0]) > 0.5].asnumpy(), A[[True, False, True]])
    assert np.array_equal(x[plexus.array([True, False, True])].asnumpy(), A[[True, False, True]])  # bools: uint8
    with pytest.raises(IndexError, match="indexes as a mask of 0s and 1s .what comparisons give., and this one holds other"):
        x[plexus.array([0, 2], dtype="uint8")]
    with pytest.raises(plexus.DeviceMismatchError, match="indices are on cpu.1. and x on cpu.0."):
        x[plexus.array([0], dtype="int64", device=plexus.cpu(1))]


@pytest.mark.parametrize("key, value", [
    ([0, 2], 7.0), ((slice(None), [1, 3]), -1.0), (([0, 1], [1, 2]), 5.0), ((A > 50,), 0.0),
    ((0, [1, -1]), 9), (([0, 2], slice(None), [4, 0]), 2.5), (range(1, 3), 1.0),
])
def test_writing_numbers_through_arrays_agrees_with_numpy(key, value):
    x, want = plexus.array(A, dtype="float64"), A.copy()
    x[key] = value
    want[key] = value
    assert np.array_equal(x.asnumpy(), want)


def test_writing_through_a_tensor_of_indices_and_its_refusals():
    x, want = plexus.array(A, dtype="float64"), A.copy()
    x[plexus.array([1, -1], dtype="int64")] = plexus.array([3.0], dtype="float64")
    want[[1, -1]] = 3.0
    assert np.array_equal(x.asnumpy(), want)
    # Values of the places' shape, or one that broadcasts to it, as NumPy's (it had been refused).
    x[[0, 1]] = plexus.arange(40, dtype="float64").reshape(2, 4, 5)
    want[[0, 1]] = np.arange(40.0).reshape(2, 4, 5)
    x[[2, 2], 1] = plexus.array([[5.0], [6.0]], dtype="float64")  # a place named twice takes the last, as NumPy's
    want[[2, 2], 1] = [[5.0], [6.0]]
    assert np.array_equal(x.asnumpy(), want)
    with pytest.raises(ValueError, match=r"could not broadcast the values of shape \(3,\) into the places' shape \(2, 4, 5\)"):
        x[[0, 1]] = plexus.ones((3,), dtype="float64")
    with pytest.raises(IndexError, match="index 7 is out of bounds"):
        x[[7]] = 1.0
    x[None, 0] = 1.0  # a new axis names no places: row 0 takes the number, as NumPy's (it had been refused)
    want[None, 0] = 1.0
    assert np.array_equal(x.asnumpy(), want)


def test_keys_a_review_found_misread():
    # Each of these gave rows where NumPy gives none, truncated a float, or placed the indexed part
    # where NumPy does not.
    x = plexus.array(np.arange(4.0))
    for key in [slice(None, 0, 2), slice(1, 1, 3), slice(None, -4, 3)]:
        assert x[key].shape == (0,)
    a = A.reshape(3, 4, 5)
    w = plexus.array(a, dtype="float64")
    # A '...' that names no axis still parts the arrays around it: their part comes first.
    assert np.array_equal(w[:, [0, 2], ..., [0, 1]].asnumpy(), a[:, [0, 2], ..., [0, 1]])
    assert np.array_equal(w[:, [0, 2], None, [0, 1]].asnumpy(), a[:, [0, 2], None, [0, 1]])
    for key in [np.array(1.5), (0, np.array(2.7))]:
        with pytest.raises(IndexError, match="only integers, slices"):
            w[key]
        with pytest.raises(IndexError, match="only integers, slices"):
            w[key] = -1.0
    for key in [2 ** 70, np.uint64(2 ** 64 - 1), (0, 2 ** 70)]:
        with pytest.raises(IndexError, match="is out of bounds for axis"):
            w[key]
    with pytest.raises(plexus.DTypeError, match="not real numbers: complex"):
        w[[0], [1]] = 1 + 2j
    assert np.array_equal(w.asnumpy(), a)
    with pytest.raises(IndexError, match="too many indices for a tensor of rank 0"):
        plexus.array(3.0)[0]
    with pytest.raises(IndexError, match="too many indices for a tensor of rank 0"):
        plexus.array(3.0)[:]


def test_keys_from_pytorch_index_as_numpy_reads_them():
    torch = need("torch")
    x = plexus.array(A, dtype="float64")
    assert np.array_equal(x[torch.tensor(1)].asnumpy(), A[1])
    assert np.array_equal(x[torch.tensor([0, 2])].asnumpy(), A[[0, 2]])
    assert np.array_equal(x[0, torch.tensor([0, 2])].asnumpy(), A[0, [0, 2]])
    with pytest.raises(IndexError, match="a bool is not an index here"):
        x[torch.tensor(True)]


def test_values_written_through_ints_slices_and_new_axes_broadcast_as_numpys():
    numpy = np
    # One copy into a region of x (px_tensor_assign_region): every shape NumPy's assignment broadcasts.
    a = numpy.arange(60.0).reshape(3, 4, 5)
    cases = [((slice(None), slice(None, None, 2)), numpy.arange(5.0)),           # a row down the places
             ((slice(None), 1), numpy.arange(3.0).reshape(3, 1)),               # a column across
             ((Ellipsis, 0), numpy.ones((1, 1, 4))),                            # leading ones dropped
             ((1, slice(1, 4, 2), None, slice(0, 5, 3)), numpy.arange(4.0).reshape(2, 1, 2)),
             ((slice(None), None, 2), numpy.arange(5.0)),
             ((slice(3, 3), 0), numpy.ones(5)),                                 # no places: nothing written
             ((2, 3, 4), numpy.array(7.0)),
             ((slice(None, None, 2),), 5)]
    for key, v in cases:
        b, t = a.copy(), plexus.array(a, dtype="float64")
        b[key] = v
        t[key] = plexus.array(v, dtype="float64") if isinstance(v, numpy.ndarray) else v
        assert numpy.array_equal(t.asnumpy(), b), key
    # Values of another dtype and device are cast and moved; the dtype is the tensor's.
    t = plexus.zeros((2, 3), dtype="int32")
    t[:, ::2] = plexus.array([[1.9], [-2.9]], device=plexus.cpu(1), dtype="float64")
    assert t.tolist() == [[1, 0, 1], [-2, 0, -2]] and t.dtype == numpy.int32
    # Values sharing x's memory are read whole before any place is written, as NumPy's.
    for key, src in [(slice(1, None), slice(None, -1)), (slice(None, -1), slice(1, None))]:
        b, t = numpy.arange(10.0), plexus.arange(10, dtype="float64")
        b[key] = b[src]
        t[key] = t[src]
        assert t.tolist() == b.tolist()
    b, t = numpy.arange(12.0).reshape(3, 4), plexus.arange(12, dtype="float64").reshape(3, 4)
    b[:, 1::2] = b[:, ::2].copy()
    t[:, 1::2] = t[:, ::2]
    assert t.tolist() == b.tolist()
    # A view's base sees the write, and refusals write nothing.
    base = plexus.zeros((4, 4))
    view = base[1:3]
    view[:, ::3] = 1.0
    assert base.asnumpy()[:, 0].tolist() == [0, 1, 1, 0] and base.asnumpy()[:, 3].tolist() == [0, 1, 1, 0]
    with pytest.raises(ValueError, match=r"could not broadcast the values of shape \(3,\) into the places' shape \(4, 2\)"):
        base[:, ::2] = plexus.ones(3)
    with pytest.raises(ValueError, match=r"could not broadcast the values of shape \(2, 4, 2\)"):
        base[:, ::2] = plexus.ones((2, 4, 2))
    assert base.sum().item() == 4.0
    w = plexus.ones(3)
    w.attach_grad()
    with plexus.autograd.record():
        with pytest.raises(plexus.InvalidArgumentError, match="while autograd records"):
            w[::2] = 0.0
    assert w.tolist() == [1.0, 1.0, 1.0]


def test_a_0d_integer_tensor_indexes_as_its_int_and_first_axis_rows_are_views():
    numpy = np
    # d2l's nms: boxes[B[0], :] with B a tensor of indices; it had been a take (a gather on the device).
    a = numpy.arange(24.0).reshape(6, 4)
    x = plexus.array(a, dtype="float64")
    B = plexus.array([3, 1, 2], dtype="int64")
    for key in [(B[0], slice(None)), B[1], (B[2], 1), (slice(1, 3), B[0].astype("int32"))]:
        want = a[tuple(int(k.item()) if isinstance(k, plexus.Tensor) else k for k in
                       (key if isinstance(key, tuple) else (key,)))]
        assert numpy.array_equal(x[key].asnumpy(), want), key
    with pytest.raises(IndexError):
        x[plexus.array(9, dtype="int64"), :]
    # Rows of the first axis read through a tuple key share x's memory, as NumPy's views.
    row = x[B[0], :]
    row[...] = -1.0
    assert x.asnumpy()[3].tolist() == [-1.0] * 4
    x[B[1]] = 5.0
    assert x.asnumpy()[1].tolist() == [5.0] * 4
    # and gradients flow back through them.
    w = plexus.array(a, dtype="float64")
    w.attach_grad()
    with plexus.autograd.record():
        y = (w[B[0], :] * 2).sum() + w[1:3, 0].sum()
    y.backward()
    g = numpy.zeros_like(a)
    g[3] = 2
    g[1:3, 0] += 1
    assert numpy.array_equal(w.grad.asnumpy(), g)
