"""Losses, as Gluon's: per-sample values."""
from ._plexus.loss import SoftmaxCrossEntropyLoss, L2Loss, L1Loss, SigmoidBinaryCrossEntropyLoss

__all__ = ["SoftmaxCrossEntropyLoss", "L2Loss", "L1Loss", "SigmoidBinaryCrossEntropyLoss"]
