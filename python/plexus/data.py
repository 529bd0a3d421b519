"""Data: NumPy .npy/.npz and CSV files read into tensors, datasets of arrays, and the DataLoader that batches,
shuffles, shards and transforms them on another thread (and Fashion-MNIST, Debian's dataset-fashion-mnist or
$PLEXUS_FASHION_MNIST). The formats and limits: docs/data-files.md."""
import collections as _collections
import numbers as _numbers
import sys as _sys
import threading as _threading

from ._plexus.data import ImageDataset, default_max_data_bytes, default_fashion_mnist_folder, transforms
from ._plexus.data import fashion_mnist as _fashion_mnist
from ._plexus.data import read_npy as _read_npy
from ._plexus.data import read_npz as _read_npz, read_npz_array as _read_npz_array, read_csv as _read_csv
from ._plexus.data import DataLoader as _DataLoader, _ArrayDataset
from ._paths import existing_file

_sys.modules[__name__ + ".transforms"] = transforms

__all__ = ["read_npy", "read_npz", "read_csv", "default_max_data_bytes", "ArrayDataset", "ImageDataset",
           "fashion_mnist", "default_fashion_mnist_folder", "DataLoader", "Batch", "transforms"]


def _dev(device, ctx):
    from . import _device
    return _device(device, ctx)


def read_npy(path, device=None, ctx=None, max_bytes=None):
    """The array of a .npy file (np.save) as a tensor on `device` (default cpu(0)), of at most `max_bytes`
    of values (default: default_max_data_bytes()); a file that is not there is a FileNotFoundError."""
    return _read_npy(existing_file(path, "read_npy"), _dev(device, ctx), max_bytes)


def read_npz(path, name=None, device=None, ctx=None, max_bytes=None):
    """The arrays of an .npz file (np.savez or np.savez_compressed) as a dict of tensors on `device`, or the
    one array `name` (the others are not inflated)."""
    path = existing_file(path, "read_npz")
    if name is None:
        return _read_npz(path, _dev(device, ctx), max_bytes)
    return _read_npz_array(path, name, _dev(device, ctx), max_bytes)


def read_csv(path, delimiter=",", skip_rows=0, columns=None, dtype="float32", comment="#", device=None, ctx=None,
             max_bytes=None):
    """A (rows, columns) tensor of the numbers in a CSV file: `skip_rows` lines skipped first (a header),
    `columns` the column indices kept (as np.loadtxt's usecols, negative ones from the end), text from
    `comment` to the line's end dropped and blank lines skipped; a space as the delimiter splits at runs of blanks. Parsed the same in every locale."""
    from . import _plexus as _p
    return _read_csv(existing_file(path, "read_csv"), delimiter, skip_rows, list(columns or []), _p._parse_dtype(dtype), comment or "",
                     _dev(device, ctx), max_bytes)


def fashion_mnist(train=True, folder=None):
    """Fashion-MNIST's training (60,000) or test (10,000) images and labels, from `folder` (default:
    default_fashion_mnist_folder()), each file NAME.gz or else NAME; one missing is a FileNotFoundError."""
    import errno
    import os
    where = os.fspath(folder) if folder is not None else default_fashion_mnist_folder()
    prefix = "train" if train else "t10k"
    for name in (prefix + "-images-idx3-ubyte", prefix + "-labels-idx1-ubyte"):
        path = os.path.join(where, name)
        if not os.path.exists(path + ".gz") and not os.path.exists(path):
            raise FileNotFoundError(errno.ENOENT, "fashion_mnist: neither %s.gz nor %s is there (is the data set "
                                    "installed? Debian's dataset-fashion-mnist, or give its folder)" % (name, name),
                                    path + ".gz")
    return _fashion_mnist(train, where)


class ArrayDataset(_ArrayDataset):
    """Samples `data` (N, ...) of uint8, float16, bfloat16, float32 or float64 and their labels (N, ...): NumPy
    arrays, plexus tensors, or anything numpy.asarray takes. Bool arrays become uint8. The values are copied
    to the host once; the loader gathers batches from there."""

    def __init__(self, data, label):
        from . import Tensor, array
        super().__init__(*(v if isinstance(v, Tensor) else array(_numeric(v, is_label)) for v, is_label in
                           ((data, False), (label, True))))


def _numeric(values, is_label):
    """values as an array: bools as uint8; labels' integers Plexus has no dtype for (int8, int16, uint16,
    uint32, uint64) in the next one that holds them, since labels must stay integers (data of those dtypes
    become float32, as plexus.array makes them)."""
    import numpy
    from . import _plexus
    a = numpy.asarray(values)
    if a.dtype == numpy.bool_:
        return a.astype(numpy.uint8)
    if not is_label or a.dtype.kind not in "iu":
        return a
    return _plexus._label_integers(a)


def _indices(dataset, key):
    """The rows dataset[key] names: an int (negative from the end) or a slice, as a list's."""
    try:
        rows = range(len(dataset))[key]
    except TypeError:
        raise TypeError("%s indices are integers or slices, not %s" % (type(dataset).__name__, type(key).__name__)) from None
    except IndexError:
        raise IndexError("%s index %s is out of range for %d samples" % (type(dataset).__name__, key, len(dataset))) from None
    return (rows, [rows]) if isinstance(rows, int) else (None, list(rows))


def _image_samples(self, key):
    """Gluon's dataset[i]: (image (rows, cols, 1) uint8 tensor, label numpy.int32), and dataset[a:b]: (images
    (n, rows, cols, 1), labels numpy int32 (n,)), as d2l's `X, y = mnist_train[:18]`."""
    import numpy
    one, rows = _indices(self, key)
    images, labels = self._samples(rows)
    labels = numpy.array(labels, dtype=numpy.int32)
    return (images[0], labels[0]) if one is not None else (images, labels)


def _array_samples(self, key):
    """dataset[i]: (sample, label) tensors, and dataset[a:b]: their stacks (n, ...), on cpu(0)."""
    one, rows = _indices(self, key)
    data, label = self._samples(rows)
    return (data[0], label[0]) if one is not None else (data, label)


ImageDataset.__getitem__ = _image_samples
_ArrayDataset.__getitem__ = _array_samples


Batch = _collections.namedtuple("Batch", ["data", "label", "rows", "augmentations"])
Batch.__doc__ = """One batch: data and label tensors, the dataset's rows it holds, and per row the (top, left,
flipped) the random transforms chose (None when none is random)."""


class DataLoader(_DataLoader):
    """Batches (data, label) of a dataset on `device`. Each pass over it is one epoch; with shuffle, each
    epoch has its own order (seeded by `seed` and the epoch), and the random transforms their own choices.
    The next batch is gathered, transformed and copied while the current one is used. Fashion-MNIST's
    data are (n, 1, 28, 28) float32 normalized and int32 labels; an ArrayDataset's keep their dtypes unless
    `transforms` (plexus.data.transforms: RandomCrop, RandomHorizontalFlip, ToTensor, Normalize) say
    otherwise. A test loader takes no random transforms. `last_batch` is Gluon's: 'keep' a smaller last
    batch, 'discard' it, or 'rollover' its rows into the next epoch (which then starts with them)."""

    def __init__(self, dataset, batch_size, shuffle=False, device=None, ctx=None, seed=0, transforms=None,
                 last_batch="keep", num_workers=0):
        dev = _dev(device, ctx)
        if not isinstance(dataset, (ImageDataset, _ArrayDataset)):
            raise TypeError("DataLoader: the dataset is an ArrayDataset or fashion_mnist(), not a %s; give your "
                            "arrays as ArrayDataset(data, label)" % type(dataset).__name__)
        # Gluon's worker processes: here one prefetch thread gathers, transforms and copies every batch, so
        # the number taken (d2l passes 4) changes neither the batches nor their order.
        if isinstance(num_workers, bool) or not isinstance(num_workers, _numbers.Integral) or num_workers < 0:
            raise ValueError("DataLoader: num_workers is a whole number >= 0, not %r" % (num_workers,))
        if isinstance(dataset, ImageDataset) and transforms is None:
            args = (dataset, batch_size, shuffle, dev, seed)  # ToTensor, then Normalize(0.13, 0.31)
        elif isinstance(dataset, ImageDataset):
            # Its images as (N, 1, 28, 28) uint8 arrays, under the transforms given (d2l's ToTensor alone).
            args = (dataset._as_arrays(), batch_size, shuffle, dev, seed, list(transforms))
        else:
            args = (dataset, batch_size, shuffle, dev, seed, list(transforms or []))
        super().__init__(*args)
        self._args = args  # to make a loader for a pass that begins while another runs
        if last_batch is None:  # Gluon's default
            last_batch = "keep"
        if not isinstance(last_batch, str):
            raise TypeError("DataLoader: last_batch is 'keep', 'discard' or 'rollover', not a %s"
                            % type(last_batch).__name__)
        if last_batch != "keep":
            self._set_last_batch(last_batch)
        self._rows, self._batch_size = len(dataset), batch_size
        self._epoch = 0
        self._lock = _threading.Lock()  # guards the members below, from any thread
        self._busy = False  # a pass now reads this loader's own batches
        self._spares = []  # idle loaders of passes that began while another ran (d2l's evaluate_loss)
        self._shards = None  # (rank, shards) as shard() last set them

    def __len__(self):
        """The batches of the epoch the next pass gives (with rollover, it holds the rows the last one left)."""
        if self.last_batch != "rollover" or self._epoch == 0:
            return super().__len__()
        return (self._rows + self._epoch * self._rows % self._batch_size) // self._batch_size

    def begin_epoch(self, epoch):
        """Makes the next pass over this loader epoch `epoch` (the first is 0): that epoch's order, rollover
        and random choices, as a run resumed at that epoch needs; the passes after it count on from there."""
        if isinstance(epoch, bool) or not isinstance(epoch, _numbers.Integral) or not 0 <= epoch < 2 ** 63:
            raise ValueError("DataLoader.begin_epoch: the epoch is a whole number in [0, 2**63), not %r" % (epoch,))
        with self._lock:
            self._epoch = int(epoch)

    @property
    def epoch(self):
        """The epoch the next pass gives (begin_epoch sets it)."""
        return self._epoch

    def shard(self, rank, shards):
        """This process's part of every batch (rank of shards), as split_and_load cuts a batch."""
        with self._lock:
            super().shard(rank, shards)
            self._shards = (rank, shards)
            self._spares.clear()

    def _loader_for_pass(self):
        """A loader no other pass reads: this one, else a spare like it (under the lock)."""
        if not self._busy:
            self._busy = True
            return self
        if self.last_batch == "rollover":
            raise RuntimeError("DataLoader: a pass began while another was unfinished; with last_batch='rollover' "
                               "each pass starts with the rows the one before left, so passes cannot overlap: "
                               "finish the first pass, or use another loader for the second")
        if self._spares:
            return self._spares.pop()
        other = _DataLoader(*self._args)
        if self.last_batch != "keep":
            other._set_last_batch(self.last_batch)
        if self._shards is not None:
            _DataLoader.shard(other, *self._shards)
        return other

    def batches(self):
        """The next epoch's batches as Batch tuples, with the rows and the random choices. Passes may
        overlap, as Gluon's do (d2l evaluates the loss over the loader inside a pass over it, and threads
        may each read one): each pass is the next epoch, from a loader of its own."""
        with self._lock:
            loader = self._loader_for_pass()
            _DataLoader.begin_epoch(loader, self._epoch)
            self._epoch += 1
        try:
            while True:
                batch = _DataLoader._next(loader)
                if batch is None:
                    return
                yield Batch(*batch)
        finally:
            with self._lock:
                if loader is self:
                    self._busy = False
                else:
                    self._spares.append(loader)

    def __iter__(self):
        for b in self.batches():
            yield b.data, b.label
