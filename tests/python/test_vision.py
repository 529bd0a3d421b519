"""d2l's computer-vision chapter: plexus.image, gluon.data.vision's transforms called on one image and through
transform_first, CIFAR10 and ImageFolderDataset read from files, and the names the chapter uses beside them
(npx.batch_flatten, np.split, np.set_printoptions, BatchNorm(center=False, scale=False)); each checked against
NumPy, PyTorch or values worked by hand."""
import pytest

import plexus
from conftest import need
from plexus import autograd, gluon, image, np, npx

numpy = need("numpy")
T = gluon.data.vision.transforms


def _image(h=6, w=8, seed=0):
    return numpy.random.RandomState(seed).randint(0, 256, (h, w, 3)).astype(numpy.uint8)


def test_flips_crops_and_to_tensor_on_one_image_agree_with_numpy():
    a = _image()
    t = plexus.array(a)
    assert t.dtype == numpy.uint8
    assert numpy.array_equal(T.RandomFlipLeftRight(p=1.0)(t).asnumpy(), a[:, ::-1])
    assert numpy.array_equal(T.RandomFlipLeftRight(p=0.0)(t).asnumpy(), a)
    numpy.random.seed(1)
    seen = {numpy.array_equal(T.RandomFlipTopBottom()(a).asnumpy(), a[::-1]) for _ in range(20)}
    assert seen == {True, False}  # each image flipped or not, both happening
    x = T.ToTensor()(t)
    assert x.shape == (3, 6, 8) and x.dtype == numpy.float32
    assert numpy.allclose(x.asnumpy(), a.transpose(2, 0, 1) / 255.0, atol=1e-7)
    assert T.ToTensor()(numpy.stack([a, a])).shape == (2, 3, 6, 8)
    mean, std = [0.1, 0.2, 0.3], [0.5, 0.25, 2.0]
    y = T.Normalize(mean, std)(x).asnumpy()
    want = (a.transpose(2, 0, 1) / 255.0 - numpy.array(mean)[:, None, None]) / numpy.array(std)[:, None, None]
    assert numpy.allclose(y, want, atol=1e-6)
    numpy.random.seed(2)
    crop = T.RandomCrop((5, 4), pad=1)(t).asnumpy()  # (width, height), as Gluon's
    padded = numpy.pad(a, ((1, 1), (1, 1), (0, 0)))
    assert crop.shape == (4, 5, 3)
    assert any(numpy.array_equal(crop, padded[i:i + 4, j:j + 5]) for i in range(5) for j in range(6))
    chained = T.Compose([T.RandomFlipLeftRight(p=1.0), T.ToTensor()])(t)
    assert numpy.allclose(chained.asnumpy(), a[:, ::-1].transpose(2, 0, 1) / 255.0)
    with pytest.raises(ValueError, match="Normalize: 2 mean values for 3 channels"):
        T.Normalize([0.1, 0.2], 1.0)(x)
    with pytest.raises(ValueError, match=r"Normalize: the image is \(C, H, W\) or \(N, C, H, W\) floats"):
        T.Normalize(0.5, 0.5)(t)
    with pytest.raises(ValueError, match="ToTensor: an image is"):
        T.ToTensor()(numpy.zeros(3))


def test_resizing_is_pytorchs_bilinear_interpolation():
    torch = need("torch")
    f = numpy.random.RandomState(3).rand(7, 9, 3).astype(numpy.float32)
    for w, h in [(18, 14), (4, 3), (9, 5), (1, 1)]:
        got = image.imresize(f, w, h).asnumpy()
        ref = torch.nn.functional.interpolate(torch.from_numpy(f.transpose(2, 0, 1))[None], size=(h, w),
                                              mode="bilinear", align_corners=False)[0].numpy().transpose(1, 2, 0)
        assert numpy.allclose(got, ref, atol=1e-5), (w, h)
    a = _image()
    r = T.Resize((16, 12))(a).asnumpy()  # (w, h), as Gluon's; uint8 rounds to nearest
    ref = torch.nn.functional.interpolate(torch.from_numpy(a.transpose(2, 0, 1).astype(numpy.float32))[None],
                                          size=(12, 16), mode="bilinear", align_corners=False)[0].numpy()
    assert r.dtype == numpy.uint8
    assert numpy.abs(r.astype(float) - numpy.rint(ref.transpose(1, 2, 0))).max() <= 1
    assert T.Resize(4, keep_ratio=True)(a).shape == (4, 5, 3)  # the shorter side (6) to 4: 8 -> 5
    assert T.Resize(5)(a).shape == (5, 5, 3)
    # The whole image at its own aspect ratio, resized: a RandomResizedCrop with nothing left to chance.
    whole = T.RandomResizedCrop((16, 12), scale=(1.0, 1.0), ratio=(8 / 6, 8 / 6))(a).asnumpy()
    assert numpy.array_equal(whole, r)
    numpy.random.seed(4)
    for _ in range(20):
        assert T.RandomResizedCrop((5, 3), scale=(0.1, 1), ratio=(0.5, 2))(a).shape == (3, 5, 3)
    with pytest.raises(ValueError, match="interp=0 is not offered"):
        image.imresize(a, 3, 3, interp=0)
    with pytest.raises(ValueError, match="the width is a whole number >= 1"):
        image.imresize(a, 0, 3)
    with pytest.raises(ValueError, match=r"scale is \(low, high\)"):
        T.RandomResizedCrop(4, scale=(0.5, 0.1))


def test_crops_of_the_image_module_give_their_rectangles():
    a = _image(10, 12)
    assert numpy.array_equal(image.fixed_crop(a, 2, 3, 4, 5).asnumpy(), a[3:8, 2:6])
    out, rect = image.center_crop(a, (4, 6))
    assert rect == (4, 2, 4, 6) and numpy.array_equal(out.asnumpy(), a[2:8, 4:8])
    numpy.random.seed(5)
    out, (x0, y0, w, h) = image.random_crop(a, (5, 3))
    assert (w, h) == (5, 3) and numpy.array_equal(out.asnumpy(), a[y0:y0 + 3, x0:x0 + 5])
    out, rect = image.center_crop(a, (24, 20))  # larger than the image: its 12x10 part at 24:20, resized up
    assert rect == (0, 0, 12, 10) and out.shape == (20, 24, 3)
    assert T.CenterCrop(4)(a).shape == (4, 4, 3)
    assert numpy.array_equal(image.resize_short(a, 5).asnumpy(), image.imresize(a, 6, 5).asnumpy())
    with pytest.raises(ValueError, match=r"fixed_crop: 4x5 from \(10, 3\) is outside the 12x10 image"):
        image.fixed_crop(a, 10, 3, 4, 5)
    with pytest.raises(ValueError, match=r"an image is \(H, W\) or \(H, W, C\)"):
        image.imresize(numpy.zeros((2, 2, 2, 2)), 1, 1)


def test_colour_transforms_follow_their_formulas():
    from plexus import vision
    a = _image()
    f = a.astype(numpy.float32)
    luma = f @ numpy.array([0.299, 0.587, 0.114], dtype=numpy.float32)
    assert numpy.array_equal(vision.brightness(a, 1.5), numpy.clip(numpy.rint(f * 1.5), 0, 255).astype(numpy.uint8))
    assert numpy.allclose(vision.contrast(f, 0.0), luma.mean(), atol=1e-4)  # all contrast gone: the mean luma
    assert numpy.allclose(vision.saturation(f, 0.0), luma[..., None].repeat(3, axis=2), atol=1e-4)  # gray
    assert numpy.allclose(vision.saturation(f, 2.0), 2 * f - luma[..., None], atol=1e-3)
    assert numpy.allclose(vision.hue(f, 0.0), f, atol=1.0)  # YIQ there and back (MXNet's 3-digit constants)
    turned = vision.hue(f, 1.0)  # half a turn of the chroma: the luma stays
    assert numpy.allclose(turned @ numpy.array([0.299, 0.587, 0.114]), luma, atol=0.5)
    assert not numpy.allclose(turned, f, atol=5)
    for aug in [T.RandomBrightness(0), T.RandomContrast(0), T.RandomSaturation(0), T.RandomColorJitter()]:
        assert numpy.array_equal(aug(a).asnumpy(), a), aug
    numpy.random.seed(6)
    for aug in [T.RandomBrightness(0.5), T.RandomHue(0.5), T.RandomColorJitter(0.5, 0.5, 0.5, 0.5),
                T.RandomLighting(0.1)]:
        out = aug(plexus.array(a))
        assert out.shape == a.shape and out.dtype == numpy.uint8
    changed = T.RandomColorJitter(brightness=0.5)(a).asnumpy()
    alpha = changed.astype(float).sum() / f.sum()  # one factor for the whole image
    assert 0.45 < alpha < 1.55
    with pytest.raises(ValueError, match="RandomBrightness: the amount is a finite number >= 0"):
        T.RandomBrightness(-1)
    with pytest.raises(ValueError, match="RandomColorJitter: hue is a finite number >= 0"):
        T.RandomColorJitter(hue="x")
    with pytest.raises(ValueError, match="colour transforms take RGB images"):
        T.RandomHue(0.5)(numpy.zeros((2, 2, 1), numpy.uint8))


class _Pairs(gluon.data.Dataset):
    def __init__(self, images):
        self.images = images

    def __getitem__(self, i):
        return plexus.array(self.images[i]), numpy.int32(i)

    def __len__(self):
        return len(self.images)


def test_transform_first_applies_python_transforms_sample_by_sample():
    images = numpy.stack([_image(seed=s) for s in range(5)])
    augs = T.Compose([T.RandomFlipLeftRight(p=1.0), T.Resize((4, 3)), T.ToTensor()])
    for ds in [_Pairs(images), gluon.data.ArrayDataset(images, numpy.arange(5, dtype=numpy.int32)),
               gluon.data.SimpleDataset([(plexus.array(im), numpy.int32(i)) for i, im in enumerate(images)])]:
        batches = list(gluon.data.DataLoader(ds.transform_first(augs), 2))
        assert [b[0].shape for b in batches] == [(2, 3, 3, 4), (2, 3, 3, 4), (1, 3, 3, 4)]
        got = numpy.concatenate([b[0].asnumpy() for b in batches])
        want = numpy.stack([augs(im).asnumpy() for im in images])
        assert numpy.array_equal(got, want), type(ds).__name__
        assert numpy.concatenate([b[1].asnumpy() for b in batches]).tolist() == [0, 1, 2, 3, 4]
    whole = _Pairs(images).transform(lambda x, y: (x.astype("float32") / 2, y + 10))
    x, y = whole[1]
    assert numpy.array_equal(x.asnumpy(), images[1] / 2) and y == 11
    # An ArrayDataset's samples are (H, W, C) images whatever the transforms (a Cast beside ToTensor had moved
    # the axes differently from ToTensor alone).
    arrays = gluon.data.ArrayDataset(images, numpy.arange(5, dtype=numpy.int32))
    for fn in [T.ToTensor(), T.Compose([T.ToTensor()]), T.Compose([T.ToTensor(), T.Cast("float32")])]:
        batch = next(iter(gluon.data.DataLoader(arrays.transform_first(fn), 5)))[0]
        assert numpy.allclose(batch.asnumpy(), images.transpose(0, 3, 1, 2) / 255.0), fn
    # Fashion-MNIST with only the loader's own transforms: whole batches in its thread, and the same
    # transforms on each sample read by index; chained further sample by sample.
    mnist = gluon.data.vision.FashionMNIST(train=False)
    fast = mnist.transform_first(T.Compose([T.ToTensor(), T.Normalize(0.5, 0.25)]))
    x, y = next(iter(gluon.data.DataLoader(fast, 3)))
    one, label = fast[1]
    assert one.shape == (1, 28, 28) and int(label) == int(y.asnumpy()[1])
    assert numpy.allclose(one.asnumpy(), x.asnumpy()[1], atol=1e-6)
    more = fast.transform_first(lambda im: im * 2)
    assert numpy.allclose(more[1][0].asnumpy(), 2 * one.asnumpy(), atol=1e-6)


def _write_cifar(folder, name, labels, seed):
    rows = numpy.random.RandomState(seed).randint(0, 256, (len(labels), 3073)).astype(numpy.uint8)
    rows[:, 0] = labels
    rows.tofile(str(folder / name))
    return rows


def test_cifar10_reads_the_binary_batches(tmp_path):
    with pytest.raises(FileNotFoundError, match="Plexus downloads nothing"):
        gluon.data.vision.CIFAR10(root=str(tmp_path), train=False)
    folder = tmp_path / "cifar-10-batches-bin"
    folder.mkdir()
    rows = _write_cifar(folder, "test_batch.bin", [3, 9, 0], 7)
    ds = gluon.data.vision.CIFAR10(root=str(tmp_path), train=False)
    assert len(ds) == 3
    img, label = ds[1]
    assert img.shape == (32, 32, 3) and img.dtype == numpy.uint8 and label == 9
    assert numpy.array_equal(img.asnumpy(), rows[1, 1:].reshape(3, 32, 32).transpose(1, 2, 0))
    x, y = next(iter(gluon.data.DataLoader(ds.transform_first(T.Compose([T.RandomFlipLeftRight(p=1.0),
                                                                         T.ToTensor()])), 3)))
    assert x.shape == (3, 3, 32, 32) and y.asnumpy().tolist() == [3, 9, 0]
    assert numpy.allclose(x.asnumpy()[2], rows[2, 1:].reshape(3, 32, 32)[:, :, ::-1] / 255.0)
    for i in range(1, 6):
        _write_cifar(tmp_path, "data_batch_%d.bin" % i, [i, i], i)
    train = gluon.data.vision.CIFAR10(root=str(tmp_path))
    assert len(train) == 10 and [int(train[k][1]) for k in range(10)] == [1, 1, 2, 2, 3, 3, 4, 4, 5, 5]
    (folder / "test_batch.bin").write_bytes(b"\0" * 3000)
    with pytest.raises(ValueError, match="not whole records of 1 \\+ 3072 bytes"):
        gluon.data.vision.CIFAR10(root=str(tmp_path), train=False)
    with pytest.raises(TypeError, match="transform= is Gluon 1's"):
        gluon.data.vision.CIFAR10(root=str(tmp_path), transform=lambda x: x)


def test_image_folders_and_imread_decode_with_pillow(tmp_path):
    Image = need("PIL.Image")
    for k, cls in enumerate(["dog", "cat"]):
        (tmp_path / cls).mkdir()
        for i in range(2):
            Image.fromarray(_image(5, 7, seed=10 * k + i)).save(str(tmp_path / cls / ("%d.png" % i)))
    (tmp_path / "cat" / "notes.txt").write_text("not an image")
    (tmp_path / "readme.md").write_text("a file beside the folders")
    ds = gluon.data.vision.ImageFolderDataset(str(tmp_path))
    assert ds.synsets == ["cat", "dog"] and len(ds) == 4
    img, label = ds[3]
    assert label == 1 and numpy.array_equal(img.asnumpy(), _image(5, 7, seed=1))
    assert numpy.array_equal(image.imread(str(tmp_path / "cat" / "0.png")).asnumpy(), _image(5, 7, seed=10))
    gray = image.imread(tmp_path / "cat" / "0.png", 0)
    assert gray.shape == (5, 7, 1)
    want = numpy.asarray(Image.open(str(tmp_path / "cat" / "0.png")).convert("L"))
    assert numpy.array_equal(gray.asnumpy()[..., 0], want)
    bgr = image.imread(str(tmp_path / "cat" / "0.png"), to_rgb=False).asnumpy()
    assert numpy.array_equal(bgr, _image(5, 7, seed=10)[:, :, ::-1])
    assert numpy.array_equal(image.imdecode((tmp_path / "dog" / "1.png").read_bytes()).asnumpy(), _image(5, 7, seed=1))
    with pytest.raises(ValueError, match="is not an image Pillow can decode"):
        image.imread(str(tmp_path / "cat" / "notes.txt"))
    with pytest.raises(FileNotFoundError):
        image.imread(str(tmp_path / "missing.png"))
    with pytest.raises(ValueError, match="flag is 1 \\(colour\\) or 0"):
        image.imread(str(tmp_path / "cat" / "0.png"), 2)
    with pytest.raises(FileNotFoundError, match="is not a folder"):
        gluon.data.vision.ImageFolderDataset(str(tmp_path / "missing"))


def test_batch_flatten_split_and_print_options_as_mxnet_and_numpy():
    x = plexus.arange(24, dtype="float64").reshape(2, 3, 4)
    a = numpy.arange(24.0).reshape(2, 3, 4)
    assert npx.batch_flatten(x).shape == (2, 12)
    for args in [(3, 1), ([1, 3], 2), ([0, 5], 1), (2, 0)]:
        got = np.split(x, args[0], axis=args[1])
        want = numpy.split(a, args[0], axis=args[1])
        assert [g.tolist() for g in got] == [w.tolist() for w in want], args
    x.attach_grad()
    with autograd.record():
        parts = np.split(x, 2, axis=2)
        loss = (parts[0] * 2).sum() + (parts[1] * 3).sum()
    loss.backward()
    assert numpy.array_equal(x.grad.asnumpy()[0, 0], [2.0, 2.0, 3.0, 3.0])
    with pytest.raises(ValueError, match="array split does not result in an equal division"):
        np.split(x, 5, axis=1)
    with pytest.raises(TypeError, match="indices_or_sections is an int or a sequence of ints"):
        np.split(x, "2")
    saved = numpy.get_printoptions()
    try:
        np.set_printoptions(2)
        assert str(plexus.arange(3) / 3).splitlines() == ["[0.   0.33 0.67]", "<Tensor 3 @cpu(0)>"]
        assert np.get_printoptions()["precision"] == 2
    finally:
        numpy.set_printoptions(**saved)
    assert str(plexus.arange(3) / 3).splitlines()[0] == "[0.         0.33333334 0.6666667 ]"


def test_batch_norm_without_center_or_scale_normalizes_only_as_gluon_and_pytorch():
    torch = need("torch")
    from plexus.gluon import nn
    x = numpy.random.RandomState(8).rand(4, 3, 5, 5).astype(numpy.float32) * 3 + 1
    head = numpy.random.RandomState(9).rand(4, 3, 5, 5).astype(numpy.float32)
    bn = nn.BatchNorm(center=False, scale=False)
    bn.initialize()
    trainer = gluon.Trainer(bn.collect_params(), "sgd", {"learning_rate": 1.0})
    px = plexus.array(x)
    px.attach_grad()
    with autograd.record():
        y = bn(px)
        loss = (y * plexus.array(head)).sum()
    loss.backward()
    trainer.step(1)
    tx = torch.from_numpy(x).requires_grad_()
    ty = torch.nn.functional.batch_norm(tx, None, None, training=True, eps=1e-5)
    (ty * torch.from_numpy(head)).sum().backward()
    assert numpy.allclose(y.asnumpy(), ty.detach().numpy(), atol=1e-5)
    assert numpy.allclose(px.grad.asnumpy(), tx.grad.numpy(), atol=1e-4)
    assert bn.gamma.data().tolist() == [1.0, 1.0, 1.0] and bn.beta.data().tolist() == [0.0, 0.0, 0.0]
    assert bn.gamma.grad_req == "null" and bn.beta.grad_req == "null"
    plain = nn.BatchNorm()
    plain.initialize()
    assert plain.gamma.grad_req == "write"


def test_model_zoo_networks_have_gluons_layers_and_no_pretrained_weights():
    from plexus import init
    vision = gluon.model_zoo.vision
    # torchvision's resnet18(num_classes=10) has 11,181,642 parameters; Gluon's also lists the 4,800 running
    # means and variances of its BatchNorm layers.
    net = vision.resnet18_v1(classes=10)
    net.initialize(init.Xavier())
    assert net(plexus.random.uniform(shape=(2, 3, 32, 32))).shape == (2, 10)  # (the first layer's input size)
    assert sum(p.data().size for p in net.collect_params().values()) == 11181642 + 2 * 4800
    # d2l's fine-tuning: a new output on the features of another network, its rate ten times the rest.
    pretrained = vision.resnet18_v2()
    pretrained.initialize(init.Xavier())
    finetune = vision.get_model("resnet18_v2", classes=2)
    finetune.features = pretrained.features
    finetune.output.initialize(init.Xavier())
    finetune.output.collect_params().setattr("lr_mult", 10)
    x = plexus.random.uniform(shape=(2, 3, 64, 64))
    assert numpy.allclose(finetune.features(x).asnumpy(), pretrained.features(x).asnumpy())
    assert finetune(x).shape == (2, 2)
    assert [type(b).__name__ for b in pretrained.features[-3:]] == ["Activation", "GlobalAvgPool2D", "Flatten"]
    assert pretrained.features[0].gamma.grad_req == "null"  # v2's input BatchNorm(scale=False, center=False)
    vgg = vision.vgg11(classes=3)
    vgg.initialize(init.Xavier())
    assert vgg(plexus.random.uniform(shape=(1, 3, 32, 32))).shape == (1, 3)
    with pytest.raises(ValueError, match="Plexus downloads nothing and has no pretrained weights"):
        vision.resnet18_v2(pretrained=True)
    with pytest.raises(ValueError, match="'resnet50_v1' is not one of Plexus's models"):
        vision.get_model("resnet50_v1")
    with pytest.raises(TypeError, match="norm_layer not offered"):
        vision.resnet34_v1(norm_layer=None)


def test_what_an_attack_on_the_vision_names_found():
    from plexus import vision
    # Resize keeps the ratio as Gluon's, truncating the other side (7x4 to a shorter side of 2: 3x2).
    assert T.Resize(2, keep_ratio=True)(numpy.zeros((7, 4, 3), numpy.uint8)).shape == (3, 2, 3)
    # A factor never below 0 (Gluon's max(0, 1 - b)): brightness 3 had made negative pixels.
    numpy.random.seed(11)
    for _ in range(30):
        assert T.RandomBrightness(3)(numpy.ones((2, 2, 3), numpy.float32)).asnumpy().min() >= 0
    # Two-dimensional images stay two-dimensional; gray ones are refused by the colour transforms.
    flat = numpy.arange(12, dtype=numpy.uint8).reshape(3, 4)
    assert numpy.array_equal(T.RandomFlipLeftRight(p=1.0)(flat).asnumpy(), flat[:, ::-1])
    assert T.CenterCrop(2)(flat).shape == (2, 2)
    with pytest.raises(ValueError, match="colour transforms take RGB images"):
        T.RandomLighting(0.1)(numpy.zeros((2, 2, 1), numpy.uint8))
    # Arguments: NumPy numbers are numbers; infinities, a scale that is no pair and an empty image are refused.
    assert T.RandomBrightness(numpy.float32(0.5)).amount == 0.5
    with pytest.raises(ValueError, match="is a finite number >= 0"):
        T.RandomContrast(float("inf"))
    with pytest.raises(ValueError, match=r"scale is a pair \(low, high\)"):
        T.RandomResizedCrop(4, scale=(0.5,))
    with pytest.raises(ValueError, match="the image is empty"):
        T.Resize(3)(numpy.zeros((0, 4, 3), numpy.uint8))
    assert vision.brightness(numpy.full((1, 1, 3), 200, numpy.uint8), 2.0).tolist() == [[[255, 255, 255]]]
    # An empty batch flattens, as MXNet's.
    assert npx.batch_flatten(plexus.zeros((0, 3, 4))).shape == (0, 12)
    # More axes than a tensor has are refused in an assignment too (they had been accepted silently).
    with pytest.raises(IndexError, match="the key makes 10 axes; a tensor has at most 8"):
        plexus.zeros((2, 2))[(None,) * 8] = 7
    # A bfloat16 tensor prints under NumPy's print options (NumPy has no bfloat16).
    saved = numpy.get_printoptions()
    try:
        np.set_printoptions(precision=2)
        assert str(plexus.full((2,), 1.0 / 3, dtype="bfloat16")).splitlines()[0] == "[0.33 0.33]"
    finally:
        numpy.set_printoptions(**saved)


def test_imread_scales_16_bit_images_and_names_a_file_it_cannot_decode(tmp_path):
    Image = need("PIL.Image")
    ramp = (numpy.arange(16, dtype=numpy.uint16) * 4096).reshape(4, 4)
    Image.fromarray(ramp).save(str(tmp_path / "wide.png"))
    assert Image.open(str(tmp_path / "wide.png")).mode.startswith("I")
    got = image.imread(str(tmp_path / "wide.png"), 0).asnumpy()[..., 0]
    assert numpy.array_equal(got, (ramp >> 8).astype(numpy.uint8))  # 0, 16, 32, ... (it had clipped to 255)
    Image.fromarray(_image(32, 32)).save(str(tmp_path / "whole.jpg"))
    data = (tmp_path / "whole.jpg").read_bytes()
    (tmp_path / "cut.jpg").write_bytes(data[:len(data) // 2])
    with pytest.raises(ValueError, match="cut.jpg is not an image Pillow can decode"):
        image.imread(str(tmp_path / "cut.jpg"))


def test_plexus_and_gluon_import_without_numpy_and_vision_says_it_needs_it():
    # plexus/vision.py and image.py need NumPy; `import plexus` had come to need it through them.
    import subprocess
    import sys
    code = """
import sys
class NoNumPy:
    def find_spec(self, name, path=None, target=None):
        if name == "numpy" or name.startswith("numpy."):
            raise ImportError("numpy is not installed here")
sys.meta_path.insert(0, NoNumPy())
import plexus
from plexus import gluon
assert str(plexus.ones(3)).startswith("[1. 1. 1.]")
try:
    gluon.data.vision.transforms
except ImportError as e:
    print("refused:", e)
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "refused: numpy is not installed here" in out.stdout


def test_gluons_random_crop_takes_width_height_and_pad():
    a = _image(6, 8)
    numpy.random.seed(12)
    crop = T.RandomCrop((5, 3), pad=2)  # (width, height), as Gluon's
    assert (crop.height, crop.width, crop.padding) == (3, 5, 2)
    out = crop(a).asnumpy()
    padded = numpy.pad(a, ((2, 2), (2, 2), (0, 0)))
    assert out.shape == (3, 5, 3)
    assert any(numpy.array_equal(out, padded[i:i + 3, j:j + 5]) for i in range(8) for j in range(8))
    assert T.RandomCrop(4)(a).shape == (4, 4, 3)
    with pytest.raises(ValueError, match="pad_value=1 is not offered"):
        T.RandomCrop(4, pad=1, pad_value=1)
    with pytest.raises(ValueError, match="pad is a whole number >= 0"):
        T.RandomCrop(4, pad=(1, 2))


def test_the_vision_refusals_name_what_was_wrong(tmp_path):
    from plexus import vision
    for call, kind, words in [
            (lambda: T.Resize("big"), ValueError, "Resize: size is an int or \\(width, height\\)"),
            (lambda: T.RandomResizedCrop(4, ratio=(2.0, 1.0)), ValueError, "ratio is \\(low, high\\)"),
            (lambda: image.imdecode("not bytes"), TypeError, "buf is the bytes of an encoded image, not a str"),
            (lambda: image.imdecode(b"no image"), ValueError, "the 8 bytes is not an image Pillow can decode"),
            (lambda: npx.batch_flatten(plexus.array(1.0)), ValueError, "a scalar has no batch axis"),
            (lambda: np.split(plexus.ones(4), 0), ValueError, "the number of sections must be larger than 0"),
            (lambda: gluon.data.vision.ImageFolderDataset(str(tmp_path), flag=3), ValueError, "flag is 1"),
            (lambda: gluon.data.vision.ImageFolderDataset(str(tmp_path), transform=abs), TypeError,
             "transform= is Gluon 1's"),
            (lambda: gluon.data.vision.NoSuchDataset, AttributeError, "gluon.data.vision has no 'NoSuchDataset'")]:
        with pytest.raises(kind, match=words):
            call()
    rows = numpy.zeros((1, 3073), numpy.uint8)
    rows[0, 0] = 12
    rows.tofile(str(tmp_path / "test_batch.bin"))
    with pytest.raises(ValueError, match="a label 12 is not one of the 10 classes"):
        vision.CIFAR10(root=str(tmp_path), train=False)
    assert "CIFAR10" in dir(gluon.data.vision)
