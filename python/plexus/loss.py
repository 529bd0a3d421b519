"""Losses, as Gluon's: per-sample values (the mean over every axis but the batch's), with Gluon's
constructor options (weight, SoftmaxCrossEntropyLoss's axis, sparse_label and from_logits,
SigmoidBinaryCrossEntropyLoss's from_sigmoid) and __call__(pred, label, sample_weight=None)."""
from ._plexus.loss import SoftmaxCrossEntropyLoss, L2Loss, L1Loss, SigmoidBinaryCrossEntropyLoss
from ._plexus.nn import Block as _Block



def _call(self, *args, **kwargs):
    """loss(pred, label, sample_weight=None): forward, so that a subclass's forward is the one called,
    as d2l's MaskedSoftmaxCELoss(SoftmaxCELoss) overrides it and calls super().forward(pred, label, w)."""
    from ._plexus import Tensor
    from .nn import _not_a_tensor
    for name, value in zip(("pred", "label"), args):
        if not isinstance(value, Tensor):
            raise _not_a_tensor("%s(pred, label)" % type(self).__name__, name, value)
    return self.forward(*args, **kwargs)


for _loss in (SoftmaxCrossEntropyLoss, L2Loss, L1Loss, SigmoidBinaryCrossEntropyLoss):
    _loss.__call__ = _call

class Loss(_Block):
    """Gluon's loss base class for a loss of your own (d2l's BPRLoss(gluon.loss.Loss)): it keeps Gluon's weight
    and batch_axis; the subclass writes forward(...) giving the per-sample loss."""

    def __init__(self, weight=None, batch_axis=0, **kwargs):
        super().__init__()
        self._weight = weight
        self._batch_axis = batch_axis


# Gluon's short names.
SoftmaxCELoss = SoftmaxCrossEntropyLoss
SigmoidBCELoss = SigmoidBinaryCrossEntropyLoss

__all__ = ["Loss", "SoftmaxCrossEntropyLoss", "SoftmaxCELoss", "L2Loss", "L1Loss", "SigmoidBinaryCrossEntropyLoss",
           "SigmoidBCELoss"]
