"""Metrics as MXNet's mx.metric: update(labels, preds) after each batch (tensors, or lists of them, one per
device), get() -> (name, value) over every sample since reset(). The hits are counted on the predictions'
device; only get() waits. TopKAccuracy counts a label as in the top k when fewer than k scores are strictly
greater than its own, so ties count in its favour."""
from ._plexus import Tensor as _Tensor
from ._plexus.metric import EvalMetric, Accuracy, TopKAccuracy
from .nn import _not_a_tensor

_update = EvalMetric.update


def _checked_update(self, labels, preds):
    """update(labels, preds): tensors, or lists of them (one per device); anything else is a TypeError naming
    it (pybind11's would list every signature)."""
    for name, value in (("labels", labels), ("preds", preds)):
        for v in value if isinstance(value, (list, tuple)) else (value,):
            if not isinstance(v, _Tensor):
                raise _not_a_tensor("%s.update(labels, preds)" % type(self).__name__, name, v)
    return _update(self, labels, preds)


EvalMetric.update = _checked_update

__all__ = ["EvalMetric", "Accuracy", "TopKAccuracy"]
