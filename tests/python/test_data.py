"""Data files written by NumPy read back exactly, the loader's transforms against a NumPy reference of the
choices it reports, and the metrics against hand values and torch.topk."""
import os
import tempfile

import pytest

import plexus
from plexus.data import transforms as T
from conftest import need

np = need("numpy")

DTYPES = ["float16", "float32", "float64", "int32", "int64", "uint8"]


@pytest.fixture
def folder():
    with tempfile.TemporaryDirectory(prefix="plexus-data-") as d:
        yield d


def sample(dtype, shape, seed=0):
    """Values that use the dtype's range: negatives, fractions, extremes."""
    rng = np.random.default_rng(seed)
    dt = np.dtype(dtype)
    if dt.kind == "f":
        a = rng.standard_normal(shape) * 1000
        flat = a.reshape(-1)
        if flat.size >= 3:
            flat[:3] = [np.finfo(dt).max, np.finfo(dt).tiny, -0.0]
        return a.astype(dt)
    info = np.iinfo(dt)
    a = rng.integers(info.min, info.max, size=shape, endpoint=True, dtype=dt)
    if a.size >= 2:
        a.reshape(-1)[:2] = [info.min, info.max]
    return a


def same(tensor, expected):
    """The tensor's values and dtype are exactly the array's (bool read as uint8)."""
    expected = np.asarray(expected)
    if expected.dtype == np.bool_:
        expected = expected.astype(np.uint8)
    got = tensor.asnumpy()
    assert got.dtype == expected.dtype.newbyteorder("=")
    assert got.shape == expected.shape
    assert np.array_equal(got, expected)


@pytest.mark.parametrize("dtype", DTYPES + ["bool"])
def test_npy_files_numpy_writes_read_back_exactly(folder, dtype):
    for shape in [(2, 3, 4), (5,), (), (0, 3)]:
        a = sample(dtype, shape) if dtype != "bool" else np.random.default_rng(1).random(shape) > 0.5
        for order in ("<", ">"):
            for fortran in (False, True):
                b = a.astype(a.dtype.newbyteorder(order))
                b = np.array(b, order="F" if fortran else "C")  # (np.ascontiguousarray makes () (1,))
                path = os.path.join(folder, "a.npy")
                np.save(path, b)
                same(plexus.data.read_npy(path), a)


def test_npy_versions_and_the_device(folder):
    a = sample("float32", (3, 4))
    for version in [(1, 0), (2, 0), (3, 0)]:
        path = os.path.join(folder, "v.npy")
        with open(path, "wb") as f:
            np.lib.format.write_array(f, a, version=version)
        t = plexus.data.read_npy(path, device=plexus.cpu(1))
        assert t.device == plexus.cpu(1)
        same(t, a)


def test_npz_files_stored_and_compressed(folder):
    arrays = {d: sample(d, (3, 2), seed=i) for i, d in enumerate(DTYPES)}
    arrays["flags"] = np.array([True, False, True])
    arrays["big_endian_fortran"] = np.asfortranarray(sample(">f8", (2, 5)))
    for save in (np.savez, np.savez_compressed):
        path = os.path.join(folder, "a.npz")
        save(path, **arrays)
        got = plexus.data.read_npz(path)
        assert sorted(got) == sorted(arrays)
        for name, a in arrays.items():
            same(got[name], a)
        same(plexus.data.read_npz(path, "int64"), arrays["int64"])
        with pytest.raises(plexus.InvalidArgumentError, match="has no array 'x_train'"):
            plexus.data.read_npz(path, "x_train")
    # Positional arrays are arr_0, arr_1, ... as np.load names them.
    np.savez(path, np.arange(3), np.ones(2))
    assert sorted(plexus.data.read_npz(path)) == ["arr_0", "arr_1"]


def test_dtypes_plexus_lacks_are_refused_by_name(folder):
    path = os.path.join(folder, "bad.npy")
    for values, name in [(np.arange(3, dtype=np.int16), "int16"), (np.arange(3, dtype=np.uint32), "uint32"),
                         (np.ones(2, dtype=np.complex64), "complex64"), (np.array(["ab"]), "str"),
                         (np.array([b"ab"]), "bytes"), (np.array([None, 1], dtype=object), "object"),
                         (np.zeros(2, dtype=[("a", "<f4")]), "structured")]:
        np.save(path, values, allow_pickle=True)
        with pytest.raises(plexus.InvalidArgumentError, match=name) as e:
            plexus.data.read_npy(path)
        assert path in str(e.value)
    np.save(path, np.zeros(1000, dtype=np.float32))
    with pytest.raises(plexus.InvalidArgumentError, match="declares more than 100 bytes"):
        plexus.data.read_npy(path, max_bytes=100)
    assert plexus.data.read_npy(path, max_bytes=4000).shape == (1000,)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_csv_files_numpy_writes_read_back_exactly(folder, dtype):
    a = sample(dtype, (6, 4))
    a.reshape(-1)[:3] = [1e-30, -2.5, 0.1]
    path = os.path.join(folder, "a.csv")
    # %.9g and %.17g hold float32 and float64 exactly; the header line is skipped; NumPy's comment lines too.
    np.savetxt(path, a, delimiter=",", fmt="%.9g" if dtype == "float32" else "%.17g", header="a,b,c,d",
               comments="")
    same(plexus.data.read_csv(path, skip_rows=1, dtype=dtype), a)
    np.savetxt(path, a, delimiter=";", fmt="%.17g", header="made by NumPy")  # '# made by NumPy'
    same(plexus.data.read_csv(path, delimiter=";", dtype=dtype, columns=[3, 1]), a[:, [3, 1]])
    np.savetxt(path, a)  # the default: spaces, %.18e
    same(plexus.data.read_csv(path, delimiter=" ", dtype=dtype), a)


def test_csv_integers_and_errors(folder):
    path = os.path.join(folder, "i.csv")
    a = sample("int64", (3, 3))
    np.savetxt(path, a, fmt="%d", delimiter=",")
    same(plexus.data.read_csv(path, dtype="int64"), a)
    with open(path, "w") as f:
        f.write("1,2\n3,four\n")
    with pytest.raises(plexus.InvalidArgumentError, match="i.csv: line 2, column 2: 'four' is not a number"):
        plexus.data.read_csv(path)
    with open(path, "w") as f:
        f.write("1,2\n3\n")
    with pytest.raises(plexus.InvalidArgumentError, match="line 2: has 1 columns, the first row has 2"):
        plexus.data.read_csv(path)


def test_csv_negative_columns_comments_and_cr_line_ends_as_np_loadtxt(folder):
    path = os.path.join(folder, "mac.csv")
    with open(path, "w", newline="") as f:
        f.write("# x,y,z\r1,2,3 # first\r\n4,5,6\r#\r7,8,9#last\n")
    expected = np.loadtxt(path, delimiter=",", usecols=[-1, 0], dtype=np.float32)
    same(plexus.data.read_csv(path, columns=[-1, 0]), expected)
    with pytest.raises(plexus.InvalidArgumentError, match=r"line 2: column index -4 is outside its 3 columns \(0..2, or -3..-1"):
        plexus.data.read_csv(path, columns=[-4])


def test_npz_limit_is_named_with_what_the_earlier_arrays_took(folder):
    path = os.path.join(folder, "pos.npz")
    np.savez(path, np.zeros(3), np.ones(3))  # arr_0, arr_1: 24 bytes each
    with pytest.raises(plexus.InvalidArgumentError, match="member 'arr_1.npy': declares 24 bytes of values, which with "
                       "the 24 bytes of the arrays before it are more than the limit of 30; refusing"):
        plexus.data.read_npz(path, max_bytes=30)
    assert len(plexus.data.read_npz(path, max_bytes=48)) == 2


def npy_by_hand(path, descr, shape):
    with open(path, "wb") as f:
        np.lib.format.write_array_header_1_0(f, {"descr": descr, "fortran_order": False, "shape": shape})


@pytest.mark.parametrize("descr,shape", [("<f4", (0, 2**62)), ("|u1", (0, 2**63 - 1, 2**63 - 1))])
def test_npy_shapes_np_load_calls_too_big_are_refused(folder, descr, shape):
    path = os.path.join(folder, "big.npy")
    npy_by_hand(path, descr, shape)
    with pytest.raises(ValueError, match="array is too big"):
        np.load(path)
    with pytest.raises(plexus.InvalidArgumentError, match=r"the shape \(0, %d.* is too big: its nonzero dimensions" % shape[1]):
        plexus.data.read_npy(path)


def test_npy_descr_that_is_no_dtype_string_is_named_so(folder):
    path = os.path.join(folder, "junk.npy")
    npy_by_hand(path, "<f4junk", (0,))
    with pytest.raises(ValueError, match="descr is not a valid dtype descriptor"):
        np.load(path)
    with pytest.raises(plexus.InvalidArgumentError, match="the descr '<f4junk' is not a dtype code NumPy writes"):
        plexus.data.read_npy(path)


def reference(images, aug, size, padding, mean, std):
    """torchvision's RandomCrop(size, padding) at the corner aug chose, its flip, ToTensor and Normalize, in
    NumPy (images (C, H, W) uint8)."""
    top, left, flipped = aug
    padded = np.pad(images, ((0, 0), (padding, padding), (padding, padding)))
    crop = padded[:, top:top + size, left:left + size]
    if flipped:
        crop = crop[:, :, ::-1]
    return (crop / 255.0 - np.array(mean)[:, None, None]) / np.array(std)[:, None, None]


def test_augmentations_match_a_numpy_reference():
    rng = np.random.default_rng(5)
    x = rng.integers(0, 256, size=(40, 3, 8, 8), dtype=np.uint8)
    y = np.arange(40) % 7
    mean, std = [0.49, 0.48, 0.45], [0.25, 0.24, 0.26]
    train = [T.RandomCrop(8, padding=2), T.RandomHorizontalFlip(), T.ToTensor(), T.Normalize(mean, std)]
    loader = plexus.data.DataLoader(plexus.data.ArrayDataset(x, y), 16, shuffle=True, seed=3, transforms=train)
    corners, flips = set(), 0
    for epoch in range(2):
        for b in loader.batches():
            assert b.data.dtype == np.float32 and b.label.dtype == np.int64
            got = b.data.asnumpy()
            for i, (row, aug) in enumerate(zip(b.rows, b.augmentations)):
                np.testing.assert_allclose(got[i], reference(x[row], aug, 8, 2, mean, std), rtol=0, atol=2e-6)
                assert b.label.asnumpy()[i] == y[row]
                corners.add(aug[:2])
                flips += aug[2]
    assert len(corners) > 15 and 20 < flips < 60  # 25 corners allowed, 80 samples seen
    # The test loader: ToTensor and Normalize only, in order, nothing random.
    test = plexus.data.DataLoader(plexus.data.ArrayDataset(x, y), 40, transforms=[T.ToTensor(), T.Normalize(mean, std)])
    (b,) = list(test.batches())
    assert b.augmentations is None and b.rows == list(range(40))
    np.testing.assert_allclose(b.data.asnumpy(), (x / 255.0 - np.array(mean)[:, None, None]) / np.array(std)[:, None, None],
                               rtol=0, atol=2e-6)


def test_loader_of_plain_arrays_and_bad_transforms():
    x = np.arange(30, dtype=np.float64).reshape(10, 3)
    loader = plexus.data.DataLoader(plexus.data.ArrayDataset(x, x[:, 0] > 10), 4, shuffle=True)
    rows = []
    for data, label in loader:
        assert data.dtype == np.float64 and label.dtype == np.uint8
        rows += [int(r[0]) // 3 for r in data.asnumpy()]
        np.testing.assert_array_equal(label.asnumpy(), data.asnumpy()[:, 0] > 10)
    assert sorted(rows) == list(range(10))
    images = plexus.data.ArrayDataset(np.zeros((4, 2, 5, 5), dtype=np.uint8), np.zeros(4))
    for transforms, message in [([T.RandomCrop(8)], "a 8x8 crop does not fit in a 5x5 image padded by 0"),
                                ([T.RandomHorizontalFlip(p=2)], r"p must be in \[0, 1\], got 2$"),
                                ([T.Normalize(0.5, 0)], "std must be > 0"),
                                ([T.Normalize([0.5] * 3, [1] * 3)], "3 means and 3 stds for samples"),
                                ([T.ToTensor(), T.RandomCrop(4)], "RandomCrop after ToTensor")]:
        with pytest.raises(plexus.InvalidArgumentError, match=message):
            plexus.data.DataLoader(images, 2, transforms=transforms)
    with pytest.raises(TypeError, match="a transform is one of"):
        plexus.data.DataLoader(images, 2, transforms=["flip"])
    with pytest.raises(plexus.ShapeError, match="3 labels for 4 samples"):
        plexus.data.ArrayDataset(np.zeros((4, 2)), np.zeros(3))


def test_transforms_refuse_images_laid_out_height_width_channels():
    # d2l's layout (Fashion-MNIST's samples are (28, 28, 1)): Gluon's ToTensor moves the channels first,
    # this one does not, so a conv net had silently read 28 channels of 28 x 1.
    hwc = plexus.data.ArrayDataset(np.zeros((4, 28, 28, 1), dtype=np.uint8), np.zeros(4, dtype=np.int32))
    for transforms in ([T.ToTensor()], [T.Normalize(0.5, 0.25)], [T.RandomCrop(28, 4), T.ToTensor()]):
        with pytest.raises(plexus.InvalidArgumentError, match=r"\(28, 28, 1\), images laid out \(H, W, C\).*"
                                                              r"x.transpose\(0, 3, 1, 2\)"):
            plexus.data.DataLoader(hwc, 2, transforms=transforms)
    chw = plexus.data.ArrayDataset(np.full((4, 1, 28, 28), 255, dtype=np.uint8), np.zeros(4, dtype=np.int32))
    data, _ = next(iter(plexus.data.DataLoader(chw, 2, transforms=[T.ToTensor()])))
    assert data.shape == (2, 1, 28, 28) and float(data.max().item()) == 1.0
    # Without transforms the loader gives the samples as they are.
    assert next(iter(plexus.data.DataLoader(hwc, 2)))[0].shape == (2, 28, 28, 1)
    # (C, H, W) data the rule must not refuse: 8 channels of 4 x 4, small planes, a mean per channel.
    for shape, transforms in [((10, 8, 4, 4), [T.Normalize([0.5] * 8, [0.2] * 8)]), ((10, 6, 3, 3), [T.ToTensor()]),
                              ((10, 8, 28, 3), [T.Normalize([0.5] * 8, [0.2] * 8)])]:
        chw_data = plexus.data.ArrayDataset(np.random.rand(*shape).astype(np.float32), np.zeros(10, np.int32))
        assert next(iter(plexus.data.DataLoader(chw_data, 5, transforms=transforms)))[0].shape == (5,) + shape[1:]


def test_metrics_match_hand_values_and_torch_topk():
    torch = need("torch")
    acc, top2 = plexus.metric.Accuracy(), plexus.metric.TopKAccuracy(2)
    preds = plexus.array([[0.1, 0.7, 0.2], [0.5, 0.3, 0.2], [0.3, 0.3, 0.4], [0.4, 0.4, 0.2]])
    labels = plexus.array([1, 2, 2, 1])
    acc.update(labels, preds)
    top2.update(labels, preds)
    assert acc.get() == ("accuracy", 0.5)
    assert top2.get() == ("top_k_accuracy_2", 0.75)  # row 1's label is third; row 3's ties for first
    top2.reset()
    assert np.isnan(top2.get()[1])
    # Random scores (no ties) over two devices, as split_and_load gives them, against torch.
    rng = np.random.default_rng(0)
    scores = rng.standard_normal((300, 10)).astype(np.float32)
    truth = rng.integers(0, 10, size=300)
    for k in (1, 3, 5):
        m = plexus.metric.TopKAccuracy(k)
        m.update([plexus.array(truth[:150]), plexus.array(truth[150:], device=plexus.cpu(1))],
                 [plexus.array(scores[:150]), plexus.array(scores[150:], device=plexus.cpu(1))])
        expected = (torch.topk(torch.from_numpy(scores), k, dim=1).indices == torch.from_numpy(truth)[:, None])
        assert m.get()[1] == pytest.approx(expected.any(dim=1).double().mean().item(), abs=1e-12)
        assert m.num_inst == 300
    a = plexus.metric.Accuracy()
    a.update(plexus.array(truth), plexus.array(scores))
    assert a.get()[1] == pytest.approx((torch.from_numpy(scores).argmax(1).numpy() == truth).mean(), abs=1e-12)


def test_missing_files_are_file_not_found_and_paths_are_taken(tmp_path):
    np = need("numpy")
    import pathlib
    from plexus import data, nn
    missing = tmp_path / "nope"
    for call in (lambda: data.read_npy(missing), lambda: data.read_npz(str(missing)), lambda: data.read_csv(missing)):
        with pytest.raises(FileNotFoundError, match="no such file"):
            call()
    np.save(tmp_path / "a.npy", np.arange(3, dtype=np.float32))
    assert data.read_npy(pathlib.Path(tmp_path / "a.npy")).tolist() == [0.0, 1.0, 2.0]
    net = nn.Dense(2, in_units=3)
    net.initialize()
    trainer = nn.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1, "momentum": 0.9})
    with pytest.raises(FileNotFoundError, match="load_states: no such file"):
        trainer.load_states(missing)
    with pytest.raises(FileNotFoundError, match="load_parameters: no such file"):
        net.load_parameters(pathlib.Path(missing))
    net.save_parameters(tmp_path / "net.params")  # writers take a path too
    trainer.save_states(tmp_path / "trainer.states")
    net.load_parameters(tmp_path / "net.params")
    trainer.load_states(tmp_path / "trainer.states")


def test_last_batch_keep_discard_and_rollover_as_gluon():
    np = need("numpy")
    x = np.arange(10, dtype=np.float32).reshape(10, 1)
    ds = plexus.data.ArrayDataset(x, np.arange(10))

    def epoch(loader):
        return [b.rows for b in loader.batches()]

    assert epoch(plexus.data.DataLoader(ds, 4)) == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
    discard = plexus.data.DataLoader(ds, 4, last_batch="discard")
    assert len(discard) == 2 and discard.last_batch == "discard"
    assert epoch(discard) == [[0, 1, 2, 3], [4, 5, 6, 7]]
    rollover = plexus.data.DataLoader(ds, 4, last_batch="rollover")
    assert epoch(rollover) == [[0, 1, 2, 3], [4, 5, 6, 7]]
    assert epoch(rollover) == [[8, 9, 0, 1], [2, 3, 4, 5], [6, 7, 8, 9]]
    data, label = next(iter(rollover))
    assert data.asnumpy().ravel().tolist() == [0, 1, 2, 3] and label.asnumpy().tolist() == [0, 1, 2, 3]
    with pytest.raises(ValueError, match="last_batch 'drop' is not 'keep', 'discard' or 'rollover'"):
        plexus.data.DataLoader(ds, 4, last_batch="drop")
    with pytest.raises(plexus.InvalidArgumentError, match="rollover needs batch_size"):
        plexus.data.DataLoader(ds, 11, last_batch="rollover")


def test_fashion_mnist_with_transforms_of_ones_own_as_d2l_to_tensor(tmp_path):
    np = need("numpy")
    try:
        train = plexus.data.fashion_mnist(train=False)
    except plexus.Error as e:
        pytest.skip("no Fashion-MNIST here: %s" % e)
    plain = plexus.data.DataLoader(train, 8, transforms=[T.ToTensor()])
    data, label = next(iter(plain))
    normalized, same_label = next(iter(plexus.data.DataLoader(train, 8)))
    assert data.dtype == np.float32 and data.shape == (8, 1, 28, 28) and label.dtype == np.int32
    assert 0 <= data.asnumpy().min() and data.asnumpy().max() <= 1  # d2l's ToTensor: [0, 1]
    assert np.allclose((data.asnumpy() - 0.13) / 0.31, normalized.asnumpy(), atol=1e-5)
    assert (label.asnumpy() == same_label.asnumpy()).all()


def test_datasets_are_indexed_as_gluons():
    np = need("numpy")
    try:
        test = plexus.data.fashion_mnist(train=False)
    except plexus.Error as e:
        pytest.skip("no Fashion-MNIST here: %s" % e)
    # d2l 3.5: mnist_train[0][0].shape is (28, 28, 1); X, y = mnist_train[:18]; labels are NumPy int32.
    image, label = test[0]
    assert image.shape == (28, 28, 1) and image.dtype == "uint8" and isinstance(label, np.int32) and label == 9
    X, y = test[:18]
    assert X.shape == (18, 28, 28, 1) and X.squeeze(axis=-1).shape == (18, 28, 28) and y.dtype == np.int32
    data, labels = next(iter(plexus.data.DataLoader(test, 18, transforms=[T.ToTensor()])))  # the same rows, in order
    assert (X.asnumpy().transpose(0, 3, 1, 2) == np.rint(data.asnumpy() * 255)).all()
    assert (y == labels.asnumpy()).all()
    assert test[-1][1] == test[9999][1] and (test[-1][0].asnumpy() == test[9999][0].asnumpy()).all()
    back = test[10:4:-3]
    assert back[0].shape == (2, 28, 28, 1) and back[1].tolist() == [test[10][1], test[7][1]]
    for key, error, message in ((10000, IndexError, "ImageDataset index 10000 is out of range for 10000 samples"),
                                (-10001, IndexError, "index -10001 is out of range"),
                                ([1, 2], TypeError, "ImageDataset indices are integers or slices, not list"),
                                (1.5, TypeError, "not float")):
        with pytest.raises(error, match=message):
            test[key]
    ds = plexus.data.ArrayDataset(np.arange(12, dtype=np.float32).reshape(6, 2), np.arange(6, dtype=np.int32))
    sample, label = ds[1]
    assert sample.tolist() == [2.0, 3.0] and label.item() == 1 and label.dtype == "int32"
    samples, labels = ds[np.int64(2):4]
    assert samples.tolist() == [[4.0, 5.0], [6.0, 7.0]] and labels.tolist() == [2, 3]
    assert [l.item() for _, l in ds] == list(range(6))  # iteration stops at the IndexError, as a list's
    assert ds[6:][0].shape == (0, 2)
    with pytest.raises(IndexError, match="ArrayDataset index 6 is out of range for 6 samples"):
        ds[6]
    for d, n in ((ds, 6), (test, 10000)):  # the private reader checks too
        with pytest.raises(IndexError, match="sample %d is out of range for %d" % (n, n)):
            d._samples([0, n])
        with pytest.raises(IndexError, match="sample -1 is out of range"):
            d._samples([-1])


def test_save_and_load_tensors_lists_and_dicts_as_mxnet_nd_save(tmp_path):
    np = need("numpy")
    x, y = plexus.arange(4), plexus.array(np.array([[1, 2]], np.int32))
    plexus.save(tmp_path / "x-file", x)  # d2l 5.5
    assert [t.tolist() for t in plexus.load(tmp_path / "x-file")] == [[0.0, 1.0, 2.0, 3.0]]
    plexus.save(str(tmp_path / "x-files"), [x, y])
    x2, y2 = plexus.load(tmp_path / "x-files", device=plexus.cpu(1))
    assert y2.dtype == np.int32 and y2.tolist() == [[1, 2]] and x2.device == plexus.cpu(1)
    plexus.save(tmp_path / "mydict", {"x": x, "y": y})
    got = plexus.load(tmp_path / "mydict")
    assert sorted(got) == ["x", "y"] and got["x"].tolist() == x.tolist()
    with pytest.raises(TypeError, match="save: data is a Tensor, a list of them or a dict of them by name"):
        plexus.save(tmp_path / "bad", 3)
    with pytest.raises(TypeError, match="is not a Tensor"):
        plexus.save(tmp_path / "bad", [x, 3])
    with pytest.raises(FileNotFoundError, match="load: no such file"):
        plexus.load(tmp_path / "missing")


def test_passes_over_a_loader_may_overlap_as_gluons_do():
    import threading
    loader = plexus.data.DataLoader(plexus.data.ArrayDataset(np.arange(10.0).reshape(10, 1), np.arange(10)), 5)
    assert [y.tolist() for _, y in loader] == [[0, 1, 2, 3, 4], [5, 6, 7, 8, 9]]
    # d2l's train_ch11 evaluates the loss over the loader inside its pass over it (this had been a RuntimeError).
    pairs = [(a.tolist(), b.tolist()) for _, a in loader for _, b in loader]
    assert pairs == [(a, b) for a in ([0, 1, 2, 3, 4], [5, 6, 7, 8, 9]) for b in ([0, 1, 2, 3, 4], [5, 6, 7, 8, 9])]
    # Each pass is the next epoch: with shuffle, the same epochs in the same order as passes one after another.
    shuffled = plexus.data.DataLoader(plexus.data.ArrayDataset(np.arange(12.0).reshape(12, 1), np.arange(12)), 4,
                                      shuffle=True, seed=3)
    one_by_one = [[y.tolist() for _, y in shuffled] for _ in range(3)]
    shuffled.begin_epoch(0)
    outer = iter(shuffled)
    first = [next(outer)[1].tolist()]
    inner = [y.tolist() for _, y in shuffled]
    first += [y.tolist() for _, y in outer]
    assert [first, inner] == one_by_one[:2] and one_by_one[0] != one_by_one[1]
    assert [y.tolist() for _, y in shuffled] == one_by_one[2]
    first, second = iter(loader), iter(loader)
    assert next(first)[1].tolist() == [0, 1, 2, 3, 4] and next(second)[1].tolist() == [0, 1, 2, 3, 4]
    assert next(first)[1].tolist() == [5, 6, 7, 8, 9] and next(second)[1].tolist() == [5, 6, 7, 8, 9]
    # A sharded loader's overlapping passes are sharded too; rollover passes cannot overlap, and say why.
    sharded = plexus.data.DataLoader(plexus.data.ArrayDataset(np.arange(8.0).reshape(8, 1), np.arange(8)), 4)
    sharded.shard(1, 2)
    assert [(a.tolist(), b.tolist()) for _, a in sharded for _, b in sharded][:1] == [([2, 3], [2, 3])]
    rolling = plexus.data.DataLoader(plexus.data.ArrayDataset(np.arange(10.0).reshape(10, 1), np.arange(10)), 4,
                                     last_batch="rollover")
    with pytest.raises(RuntimeError, match="with last_batch='rollover' each pass starts with the rows"):
        [(a, b) for a in rolling for b in rolling]
    assert [y.tolist() for _, y in rolling][0] == [8, 9, 0, 1]  # the next epoch, after the refused pass's
    # Passes on three threads at once had hung or aborted the process, then one of them was refused: each
    # now reads its own whole epoch.
    big = plexus.data.DataLoader(plexus.data.ArrayDataset(np.zeros((4000, 3), np.float32), np.zeros(4000)), 4)
    ended = []
    threads = [threading.Thread(target=lambda: ended.append(sum(1 for _ in big))) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not any(t.is_alive() for t in threads)
    assert ended == [1000, 1000, 1000]


def test_array_dataset_labels_of_integer_dtypes_plexus_lacks_stay_integers():
    data = np.zeros((2, 1), np.float32)
    y = plexus.data.ArrayDataset(data, np.array([16777217, 3], np.uint32))[0:2][1]
    assert y.dtype == np.int64 and y.tolist() == [16777217, 3]  # float32 had made it 16777216
    y = plexus.data.ArrayDataset(data, np.array([-1, 3], np.int8))[0:2][1]
    assert y.dtype == np.int32 and y.tolist() == [-1, 3]
    with pytest.raises(plexus.DTypeError, match="uint64 values beyond int64"):
        plexus.data.ArrayDataset(data, np.array([2 ** 63, 1], np.uint64))
    # Data of those dtypes become float32, as before (they had been refused as int32 samples).
    small = plexus.data.ArrayDataset(np.arange(8, dtype=np.int8).reshape(4, 2), np.arange(4))
    batches = [d.tolist() for d, _ in plexus.data.DataLoader(small, 2)]
    assert batches == [[[0.0, 1.0], [2.0, 3.0]], [[4.0, 5.0], [6.0, 7.0]]]


def test_transforms_take_numpy_scalars_and_a_loader_gluons_num_workers_and_device_strings(folder):
    x = np.random.default_rng(0).random((6, 1, 4, 4)).astype(np.float32)
    norm = T.Normalize(x.mean(), x.std())  # NumPy float32 scalars had been a RuntimeError
    assert norm.mean == [pytest.approx(float(x.mean()))] and norm.std == [pytest.approx(float(x.std()))]
    assert T.Normalize(np.array(0.5), [np.float64(2)]).std == [2.0]
    assert T.RandomCrop(np.int64(3), padding=np.int64(1)).height == 3
    with pytest.raises(TypeError, match="mean and std are numbers, not text"):
        T.Normalize("0.5", 1)
    ds = plexus.data.ArrayDataset(x, np.arange(6))
    loader = plexus.data.DataLoader(ds, 4, num_workers=4, device="cpu:1")  # as d2l writes it
    batches = [(d.device, y.tolist()) for d, y in loader]
    assert batches == [(plexus.cpu(1), [0, 1, 2, 3]), (plexus.cpu(1), [4, 5])]
    assert len(list(plexus.data.DataLoader(ds, 4, num_workers=np.int64(2)))) == 2
    for bad in (-1, 1.5, True):
        with pytest.raises(ValueError, match="num_workers is a whole number >= 0"):
            plexus.data.DataLoader(ds, 4, num_workers=bad)
    with pytest.raises(TypeError, match="the dataset is an ArrayDataset or fashion_mnist\\(\\), not a list"):
        plexus.data.DataLoader([(1, 2)], 4)
    path = os.path.join(folder, "a.npy")
    np.save(path, x)
    assert plexus.data.read_npy(path, ctx=plexus.cpu(1)).device == plexus.cpu(1)


def test_metrics_refuse_labels_that_are_no_class_and_a_model_gone_nan_scores_nothing():
    preds = plexus.array([[0.1, 0.7, 0.2], [0.5, 0.3, 0.2]])
    for m in (plexus.metric.Accuracy(), plexus.metric.TopKAccuracy(2)):
        # Truncated, 1.5 had counted as class 1 and NaN as class 0 (a hit each).
        for bad in ([1.5, 0.0], [float("nan"), 0.0], [float("inf"), 0.0]):
            with pytest.raises(plexus.InvalidArgumentError, match="not a class index"):
                m.update(plexus.array(bad), preds)
        m.update(plexus.array([1.0, 0.0]), preds)  # whole numbers in a float dtype are classes
        assert m.get()[1] == 1.0
    # Predictions given as classes (the labels' shape): the same rules.
    acc = plexus.metric.Accuracy()
    with pytest.raises(plexus.InvalidArgumentError, match="not a class index"):
        acc.update(plexus.array([1.5, 0.0]), plexus.array([1.0, 0.0]))  # 1.5 had been a hit on class 1
    acc.update(plexus.array([0.0, 1.0]), plexus.array([float("nan"), 1.0]))  # a NaN prediction names no class
    assert acc.get()[1] == 0.5
    with pytest.raises(plexus.InvalidArgumentError, match="below 2\\^63"):
        plexus.metric.Accuracy().update(plexus.array([2.0 ** 63]), plexus.array([[1.0, 0.0]]))
    top = plexus.metric.TopKAccuracy(2)
    nan = float("nan")
    # Every label had been a hit on a row of NaN scores, and so had one whose NaN sat in its column.
    top.update(plexus.array([0, 2, 2]), plexus.array([[nan, nan, nan], [0.1, 0.2, nan], [0.9, 0.5, 0.05]]))
    assert top.get()[1] == 0.0  # (the last row's label is third)


def test_begin_epoch_makes_the_next_pass_that_epoch_for_a_resumed_run():
    x = np.arange(40, dtype=np.float32).reshape(20, 2)
    y = np.arange(20, dtype=np.int32)

    def labels_of_pass(loader):
        return [v for _, label in loader for v in label.tolist()]

    unbroken = plexus.data.DataLoader(plexus.data.ArrayDataset(x, y), 6, shuffle=True, seed=5, last_batch="rollover")
    epochs = [labels_of_pass(unbroken) for _ in range(4)]
    resumed = plexus.data.DataLoader(plexus.data.ArrayDataset(x, y), 6, shuffle=True, seed=5, last_batch="rollover")
    resumed.begin_epoch(2)
    assert resumed.epoch == 2
    assert len(resumed) == 4  # rollover: epoch 2 starts with the 4 rows epoch 1 left, 24 rows in all
    assert labels_of_pass(resumed) == epochs[2]  # it had given epoch 0's order again
    assert labels_of_pass(resumed) == epochs[3]
    assert epochs[2] != epochs[0]
    for bad in (-1, 1.5, True, 2 ** 64):
        with pytest.raises(ValueError, match="whole number in \\[0, 2\\*\\*63\\)"):
            resumed.begin_epoch(bad)
    resumed.begin_epoch(np.int64(3))  # NumPy's integers are whole numbers
    assert resumed.epoch == 3


def test_a_forked_child_goes_on_with_a_loader_whose_prefetch_stayed_in_the_parent():
    import os
    x = np.arange(40, dtype=np.float32).reshape(20, 2)
    loader = plexus.data.DataLoader(plexus.data.ArrayDataset(x, np.arange(20, dtype=np.int32)), 4)
    it = iter(loader)
    first = next(it)[1].tolist()  # the next batch is being made on the prefetch thread now
    expected_rest = [v for _, label in plexus.data.DataLoader(plexus.data.ArrayDataset(
        x, np.arange(20, dtype=np.int32)), 4) for v in label.tolist()][4:]
    pid = os.fork()
    if pid == 0:  # the child: it had waited for ever for the parent's thread (next, a new pass, or dropping it)
        code = 1
        try:
            signal_alarm = __import__("signal")
            signal_alarm.alarm(20)
            rest = [v for _, label in it for v in label.tolist()]
            again = [v for _, label in loader for v in label.tolist()]
            del loader
            code = 0 if rest == expected_rest and again == list(range(20)) else 2
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, status
    assert first == [0, 1, 2, 3]
    assert [v for _, label in it for v in label.tolist()] == expected_rest  # the parent's pass goes on


def test_metrics_take_labels_of_one_column_as_mxnet_does():
    preds = plexus.array([[0.1, 0.7, 0.2], [0.5, 0.3, 0.2], [0.3, 0.3, 0.4]])
    for m in (plexus.metric.Accuracy(), plexus.metric.TopKAccuracy(2)):
        m.update(plexus.array([[1], [2], [2]]), preds)  # (N, 1): had been a ShapeError
        flat = type(m)() if isinstance(m, plexus.metric.Accuracy) else plexus.metric.TopKAccuracy(2)
        flat.update(plexus.array([1, 2, 2]), preds)
        assert m.get() == flat.get()
        assert m.num_inst == 3
    with pytest.raises(plexus.ShapeError, match="wants labels \\(N\\) and preds \\(N, C\\)"):
        plexus.metric.Accuracy().update(plexus.array([[1, 2]]), preds)


def test_loader_passes_review_findings():
    import gc
    rows = np.arange(40.0).reshape(40, 1)
    # A pass the collector ends while a new pass holds the loader's lock gives its loader back (it had deadlocked).
    dl = plexus.data.DataLoader(plexus.data.ArrayDataset(rows, np.arange(40)), 8)

    class Holder:
        pass
    # The collector made to run while the new pass makes its spare loader under the lock (a few allocations
    # in): each threshold below lands it at another point of that.
    for extra in range(1, 8):
        gc.collect()
        gc.disable()
        h = Holder()
        h.me, h.it = h, dl.batches()
        next(h.it)
        del h
        gc.set_threshold(gc.get_count()[0] + extra, 1000, 1000)
        gc.enable()
        try:
            assert len(next(dl.batches()).rows) == 8
        finally:
            gc.set_threshold(700, 10, 10)
    # A spare made before shard() is not given to a later pass (it had read unsharded rows).
    dl = plexus.data.DataLoader(plexus.data.ArrayDataset(rows, np.arange(40)), 8)
    it1 = dl.batches()
    next(it1)
    it2 = dl.batches()
    next(it2)
    with pytest.raises(RuntimeError, match="shard it before iterating, or once the pass has ended"):
        dl.shard(1, 2)
    list(it2), list(it1)
    dl.shard(1, 2)
    a = dl.batches()
    first = next(a).rows
    b = dl.batches()
    assert next(b).rows == first == [4, 5, 6, 7]
    # ArrayDataset's keywords, and integer columns of any number of arrays stay integers; Python floats batch in
    # float64, as MXNet's default_batchify_fn.
    ds = plexus.data.ArrayDataset(data=rows, label=np.arange(40))
    assert len(ds) == 40
    three = plexus.data.ArraysDataset(rows, np.arange(40, dtype=np.int8), np.arange(40, dtype=np.uint16))
    assert [three[1][k].dtype for k in (1, 2)] == [np.int32, np.int32]
    assert plexus.data.default_batchify([1.5, 2.5]).dtype == np.float64
    with pytest.raises(TypeError, match="mix tensors and ndarray"):
        plexus.data.default_batchify([plexus.ones((2,)), np.ones(2)])
