"""Fashion-MNIST (Debian's dataset-fashion-mnist, or $PLEXUS_FASHION_MNIST) and its loader."""
from ._plexus.data import ImageDataset, fashion_mnist
from ._plexus.data import DataLoader as _DataLoader

__all__ = ["ImageDataset", "fashion_mnist", "DataLoader"]


class DataLoader(_DataLoader):
    """Batches (data, label) of a dataset on `device`: data (n, 1, 28, 28) float32 normalized, label (n)
    int32. Each pass over it is one epoch; with shuffle, each epoch has its own order. The next batch is
    prepared while the current one is used."""

    def __init__(self, dataset, batch_size, shuffle=False, device=None, ctx=None, seed=0):
        from . import _device
        super().__init__(dataset, batch_size, shuffle, _device(device, ctx), seed)
        self._epoch = 0

    def __iter__(self):
        self.begin_epoch(self._epoch)
        self._epoch += 1
        while True:
            batch = self._next()
            if batch is None:
                return
            yield batch
