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
           "fashion_mnist", "default_fashion_mnist_folder", "DataLoader", "Batch", "transforms", "Dataset",
           "SimpleDataset", "ArraysDataset", "SampleLoader", "default_batchify"]


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

    def __init__(self, *arrays, **named):
        from . import Tensor, array
        unknown = set(named) - {"data", "label"}
        if unknown:
            raise TypeError("ArrayDataset: unexpected keyword argument(s) %s (it takes data and label)"
                            % ", ".join(sorted(unknown)))
        arrays += tuple(named[k] for k in ("data", "label") if k in named)
        if len(arrays) != 2:
            raise TypeError("ArrayDataset takes (data, label), got %d arrays: ArraysDataset takes any number (and "
                            "gluon.data.ArrayDataset picks it), read by SampleLoader" % len(arrays))
        data, label = arrays
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
                            "arrays as ArrayDataset(data, label), or read any dataset with SampleLoader (which "
                            "gluon.data.DataLoader uses for it)" % type(dataset).__name__)
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
        # Guards the members below, from any thread; reentrant: a pass the collector ends (an unfinished
        # one in a reference cycle) gives its loader back from inside whatever held the lock then.
        self._lock = _threading.RLock()
        self._busy = False  # a pass now reads this loader's own batches
        self._spares = []  # idle loaders of passes that began while another ran (d2l's evaluate_loss)
        self._shards = None  # (rank, shards) as shard() last set them
        self._sharding = 0  # shard() calls so far: a spare made before the last one is not given again

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
        """This process's part of every batch (rank of shards), as split_and_load cuts a batch. Refused while
        a pass reads this loader (shard before the passes, or between them)."""
        with self._lock:
            if self._busy:
                raise RuntimeError("DataLoader.shard: a pass over this loader is unfinished (here or on another "
                                   "thread); shard it before iterating, or once the pass has ended")
            super().shard(rank, shards)
            self._shards = (rank, shards)
            self._sharding += 1
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
            sharding = self._sharding
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
                elif sharding == self._sharding:  # a spare sharded as this loader is now
                    self._spares.append(loader)

    def __iter__(self):
        for b in self.batches():
            yield b.data, b.label


class Dataset:
    """Gluon's Dataset: a subclass gives __getitem__(i) (a sample: a tensor, a NumPy array, a number, or a tuple of
    them) and __len__; SampleLoader (gluon.data.DataLoader) batches it."""

    def __getitem__(self, idx):
        raise NotImplementedError("%s: a Dataset defines __getitem__" % type(self).__name__)

    def __len__(self):
        raise NotImplementedError("%s: a Dataset defines __len__" % type(self).__name__)


class SimpleDataset(Dataset):
    """Gluon's SimpleDataset: a list (or anything with len() and indexing) as a dataset."""

    def __init__(self, data):
        self._data = data

    def __getitem__(self, idx):
        return self._data[idx]

    def __len__(self):
        return len(self._data)


class ArraysDataset(Dataset):
    """Gluon's ArrayDataset of any number of arrays of one length (d2l's load_array of four): sample i is the
    tuple of each array's row i (the row itself for one array). gluon.data.ArrayDataset makes one for other
    than two arrays; two go to ArrayDataset, whose loader runs on a thread of its own."""

    def __init__(self, *arrays):
        from . import Tensor, array
        if not arrays:
            raise TypeError("ArrayDataset: give at least one array")
        # Every array as ArrayDataset's labels: integers stay integers (Gluon's arrays are all alike).
        self._arrays = [a if isinstance(a, Tensor) else array(_numeric(a, True)) for a in arrays]
        lengths = [a.shape[0] if a.ndim else None for a in self._arrays]
        if None in lengths or len(set(lengths)) != 1:
            raise ValueError("ArrayDataset: the arrays have one row per sample, so their first axes agree; got "
                             "shapes %s" % [tuple(a.shape) for a in self._arrays])

    def __len__(self):
        return self._arrays[0].shape[0]

    def __getitem__(self, idx):
        rows = tuple(a[idx] for a in self._arrays)
        return rows[0] if len(rows) == 1 else rows

    def _gather(self, rows):
        """The samples of `rows` (a NumPy int array) batched: each array's rows at once."""
        from . import array
        places = array(rows, dtype="int64", device=self._arrays[0].device)
        batch = tuple(a[places] for a in self._arrays)
        return batch[0] if len(batch) == 1 else batch


def default_batchify(samples):
    """Gluon's default_batchify_fn: samples that are tuples batch field by field; tensors stack on their device;
    NumPy arrays and numbers become one array of NumPy's dtype for them (Python floats float64, as MXNet's;
    integers Plexus has no dtype for in the next one that holds them)."""
    import numpy
    from . import Tensor, array, stack
    first = samples[0]
    if isinstance(first, tuple):  # fields (a list is a value, as Gluon's)
        if any(not isinstance(s, tuple) or len(s) != len(first) for s in samples):
            raise TypeError("default_batchify: every sample is a tuple of %d fields, as the first one is" % len(first))
        return tuple(default_batchify([s[k] for s in samples]) for k in range(len(first)))
    if isinstance(first, Tensor):
        if not all(isinstance(s, Tensor) for s in samples):
            raise TypeError("default_batchify: the samples mix tensors and %s; make them all tensors or all arrays"
                            % type(next(s for s in samples if not isinstance(s, Tensor))).__name__)
        return stack(list(samples), axis=0)
    try:
        values = numpy.asarray(samples)
    except ValueError:  # ragged: NumPy cannot make one array of them
        values = numpy.empty(0, dtype=object)
    if values.dtype == object:
        raise TypeError("default_batchify: the samples (%s) do not make one array: give a batchify_fn"
                        % type(first).__name__)
    return array(_numeric(values, True))


def _moved(batch, device):
    from . import Tensor
    if device is None:
        return batch
    if isinstance(batch, Tensor):
        return batch.as_in_context(device)
    if isinstance(batch, (tuple, list)):
        return type(batch)(_moved(b, device) for b in batch)
    return batch


class SampleLoader:
    """Batches any dataset (a Dataset, or anything with __getitem__ and __len__) as Gluon's DataLoader: each
    pass one epoch (shuffled by `seed` and the epoch when `shuffle`), batchify_fn(list of samples) making each
    batch (default_batchify by default), moved to `device` when given. last_batch 'keep' or 'discard'. It
    runs in the calling thread (DataLoader's prefetch thread serves ArrayDataset and fashion_mnist)."""

    def __init__(self, dataset, batch_size, shuffle=False, last_batch="keep", batchify_fn=None, device=None, ctx=None,
                 seed=0, num_workers=0, **kwargs):
        if kwargs:
            raise TypeError("DataLoader: %s not offered by Plexus (sampler, batch_sampler, pin_memory, ...)"
                            % ", ".join(sorted(kwargs)))
        if not hasattr(dataset, "__getitem__") or not hasattr(dataset, "__len__"):
            raise TypeError("DataLoader: a dataset has __getitem__ and __len__, a %s has not" % type(dataset).__name__)
        if isinstance(batch_size, bool) or not isinstance(batch_size, _numbers.Integral) or batch_size < 1:
            raise ValueError("DataLoader: batch_size is an int of at least 1, got %r" % (batch_size,))
        if last_batch is None:
            last_batch = "keep"
        if last_batch not in ("keep", "discard"):
            raise ValueError("DataLoader: last_batch %r: a dataset read sample by sample takes 'keep' or 'discard'"
                             % (last_batch,))
        if batchify_fn is not None and not callable(batchify_fn):
            raise TypeError("DataLoader: batchify_fn is a callable of the list of samples")
        if isinstance(num_workers, bool) or not isinstance(num_workers, _numbers.Integral) or num_workers < 0:
            raise ValueError("DataLoader: num_workers is a whole number >= 0, not %r" % (num_workers,))
        self._dataset, self._batch_size, self._shuffle = dataset, int(batch_size), bool(shuffle)
        self.last_batch, self._batchify, self._seed = last_batch, batchify_fn, int(seed)
        self._device = _dev(device, ctx) if (device is not None or ctx is not None) else None
        self._epoch = 0
        self._lock = _threading.Lock()

    def __len__(self):
        n, b = len(self._dataset), self._batch_size
        return n // b if self.last_batch == "discard" else (n + b - 1) // b

    @property
    def epoch(self):
        """The epoch the next pass gives."""
        return self._epoch

    def begin_epoch(self, epoch):
        """Makes the next pass epoch `epoch` (its order), as DataLoader's."""
        if isinstance(epoch, bool) or not isinstance(epoch, _numbers.Integral) or not 0 <= epoch < 2 ** 63:
            raise ValueError("DataLoader.begin_epoch: the epoch is a whole number in [0, 2**63), not %r" % (epoch,))
        with self._lock:
            self._epoch = int(epoch)

    def __iter__(self):
        import numpy
        with self._lock:
            epoch = self._epoch
            self._epoch += 1
        n = len(self._dataset)
        order = numpy.random.default_rng((self._seed, epoch)).permutation(n) if self._shuffle else numpy.arange(n)
        gather = getattr(self._dataset, "_gather", None) if self._batchify is None else None
        for start in range(0, len(self) * self._batch_size, self._batch_size):
            rows = order[start:start + self._batch_size]
            if gather is not None:
                batch = gather(rows)
            else:
                samples = [self._dataset[int(i)] for i in rows]
                batch = (self._batchify or default_batchify)(samples)
            yield _moved(batch, self._device)

