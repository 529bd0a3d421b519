"""Losses."""
from ._plexus.loss import SoftmaxCrossEntropyLoss

__all__ = ["SoftmaxCrossEntropyLoss"]
