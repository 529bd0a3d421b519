"""Metrics as MXNet's mx.metric: update(labels, preds) after each batch (tensors, or lists of them, one per
device), get() -> (name, value) over every sample since reset(). The hits are counted on the predictions'
device; only get() waits. TopKAccuracy counts a label as in the top k when fewer than k scores are strictly
greater than its own, so ties count in its favour."""
from ._plexus.metric import EvalMetric, Accuracy, TopKAccuracy

__all__ = ["EvalMetric", "Accuracy", "TopKAccuracy"]
