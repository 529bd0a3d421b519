"""MXNet's Gluon names over Plexus's, so that the seeds' Gluon code runs with its import lines changed
(`from plexus import autograd, gluon, np, npx` and `from plexus.gluon import nn`): gluon.nn, gluon.loss,
gluon.rnn (RNN, GRU, LSTM), gluon.Trainer, gluon.Parameter, gluon.utils.split_and_load, gluon.data.DataLoader,
gluon.data.ArrayDataset (of any number of arrays), gluon.data.Dataset and SimpleDataset (read with batchify_fn;
transform_first and transform), and gluon.data.vision (plexus/vision.py): FashionMNIST, CIFAR10,
ImageFolderDataset and the image transforms, each callable on one image. Each is the Plexus object of
docs/python.md under Gluon's name; model_zoo.vision has ResNet and VGG without pretrained weights
(plexus/model_zoo.py); what Gluon has beyond these is not here; hybridize changes nothing."""
import types as _types

from . import data as _data
from . import loss, nn, rnn
from . import model_zoo as _model_zoo
from .nn import Block, Parameter, ParameterDict, Trainer

__all__ = ["nn", "loss", "rnn", "data", "utils", "model_zoo", "Trainer", "Parameter", "ParameterDict", "Block"]

utils = _types.SimpleNamespace(split_and_load=nn.split_and_load)
model_zoo = _types.SimpleNamespace(vision=_model_zoo)


class _Transformed(_data.Dataset):
    """fashion_mnist() with transforms the DataLoader's thread runs on whole batches (Gluon's
    dataset.transform_first); read sample by sample, the same transforms apply to each image."""

    def __init__(self, dataset, transforms):
        self.dataset, self.transforms = dataset, list(transforms)

    def __len__(self):
        return len(self.dataset)

    def __getitem__(self, idx):
        data, label = self.dataset[idx]
        for t in self.transforms:
            data = t(data)
        return data, label


def _transform_first(self, fn, lazy=True):
    """Gluon's: this dataset with `fn` (a transform, or transforms.Compose of them) applied to each sample's
    data, an image (H, W, C) as Gluon's; the labels as they are. For fashion_mnist() with only ToTensor,
    Normalize, RandomCrop and RandomFlipLeftRight, the DataLoader's thread runs them on whole batches; any other
    transform or dataset is applied sample by sample (plexus/vision.py), so an ArrayDataset's samples are
    read as (H, W, C) images, as Gluon reads them. `lazy` is Gluon's, and changes nothing."""
    from . import vision
    if isinstance(self, _data.ImageDataset) and all(isinstance(t, vision.NATIVE) for t in vision.flattened(fn)):
        return _Transformed(self, vision.flattened(fn))
    return vision.TransformedDataset(self, fn)


def _transform(self, fn, lazy=True):
    """Gluon's dataset.transform(fn): fn(*sample) for each sample (a sample that is no tuple: fn(sample))."""
    from . import vision
    return vision.TransformedDataset(self, fn, first=False)


for _kind in (_data.ImageDataset, _data.ArrayDataset, _data.Dataset):
    _kind.transform_first, _kind.transform = _transform_first, _transform


def _data_loader(dataset, batch_size=None, shuffle=False, last_batch=None, num_workers=0, batchify_fn=None,
                 **kwargs):
    """Gluon's DataLoader(dataset, batch_size, shuffle, last_batch, num_workers, batchify_fn): plexus.data.DataLoader
    on cpu(0) (the seeds move each batch with split_and_load or as_in_context), one prefetch thread for Gluon's
    worker processes; any other dataset (a gluon.data.Dataset of your own, an ArrayDataset of other than two
    arrays), or a batchify_fn, is read by plexus.data.SampleLoader."""
    if batch_size is None:
        raise TypeError("DataLoader: batch_size is needed")
    native = isinstance(dataset, (_data.ImageDataset, _data.ArrayDataset, _Transformed))
    if batchify_fn is not None or not native:  # (a _Transformed one then sample by sample)
        return _data.SampleLoader(dataset, batch_size, shuffle=shuffle, last_batch=last_batch,
                                  batchify_fn=batchify_fn, num_workers=num_workers, **kwargs)
    if isinstance(dataset, _Transformed):
        if kwargs.get("transforms") is not None:
            raise TypeError("DataLoader: the dataset has its transforms (transform_first); give them once")
        kwargs["transforms"] = dataset.transforms
        dataset = dataset.dataset
    return _data.DataLoader(dataset, batch_size, shuffle=shuffle, last_batch=last_batch, num_workers=num_workers,
                            **kwargs)


def _fashion_mnist(root=None, train=True, transform=None):
    """Gluon's vision.datasets.FashionMNIST(train=...): plexus.data.fashion_mnist (root: its folder, ~
    expanded). Unlike Gluon's, one loaded without transform_first gives plexus.data's batches (ToTensor,
    then Normalize(0.13, 0.31): float32 (N, 1, 28, 28)), not raw uint8 (N, 28, 28, 1) images."""
    import os
    if transform is not None:
        raise TypeError("FashionMNIST: transform= is Gluon 1's; use .transform_first(transforms)")
    return _data.fashion_mnist(train=train, folder=None if root is None else os.path.expanduser(root))


class _Vision:
    """gluon.data.vision (plexus/vision.py), loaded at its first use: it needs NumPy, which `import plexus`
    does not."""

    def __init__(self):
        self._names = None

    def _loaded(self):
        if self._names is None:
            from . import vision
            datasets = _types.SimpleNamespace(FashionMNIST=_fashion_mnist, CIFAR10=vision.CIFAR10,
                                              ImageFolderDataset=vision.ImageFolderDataset)
            self._names = dict(vars(datasets), datasets=datasets, transforms=vision.transforms)
        return self._names

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        try:
            return self._loaded()[name]
        except KeyError:
            raise AttributeError("gluon.data.vision has no %r" % name) from None

    def __dir__(self):
        return sorted(self._loaded())


_vision = _Vision()


def _array_dataset(*arrays):
    """Gluon's ArrayDataset(*arrays): ArrayDataset for (data, label), ArraysDataset for any other number."""
    return _data.ArrayDataset(*arrays) if len(arrays) == 2 else _data.ArraysDataset(*arrays)


data = _types.SimpleNamespace(DataLoader=_data_loader, ArrayDataset=_array_dataset, Dataset=_data.Dataset,
                              SimpleDataset=_data.SimpleDataset, vision=_vision)
