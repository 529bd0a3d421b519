"""Learning-rate schedules, as Gluon's mx.lr_scheduler: call one with an update's number for its rate, or hand it
to Trainer.set_lr_scheduler."""
from ._plexus.lr_scheduler import LRScheduler, FactorScheduler, MultiFactorScheduler, CosineScheduler

__all__ = ["LRScheduler", "FactorScheduler", "MultiFactorScheduler", "CosineScheduler"]
