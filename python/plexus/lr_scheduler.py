"""Learning-rate schedules, as Gluon's mx.lr_scheduler: call one with an update's number for its rate, or hand it
to a Trainer (set_lr_scheduler, or optimizer_params={'lr_scheduler': ...}). A schedule of your own is any callable
of the update's number (d2l's SquareRootScheduler), or a subclass of LRScheduler with __call__(num_update)."""
import abc as _abc

from ._plexus.lr_scheduler import _Schedule, _Callable, FactorScheduler, MultiFactorScheduler, CosineScheduler

__all__ = ["LRScheduler", "FactorScheduler", "MultiFactorScheduler", "CosineScheduler"]


class LRScheduler(_abc.ABC):
    """The base of schedules, as mx.lr_scheduler.LRScheduler: base_lr and a linear warm-up
    (get_warmup_lr); a subclass defines __call__(num_update). The built-in schedules count as
    instances."""

    def __init__(self, base_lr=0.01, warmup_steps=0, warmup_begin_lr=0, warmup_mode="linear"):
        if warmup_mode != "linear":
            raise ValueError("LRScheduler: warmup_mode %r: only 'linear' is offered" % (warmup_mode,))
        if warmup_steps < 0 or not 0 <= warmup_begin_lr <= base_lr:
            raise ValueError("LRScheduler: warmup_steps must be >= 0 and warmup_begin_lr in [0, base_lr]")
        self.base_lr = base_lr
        self.warmup_steps = warmup_steps
        self.warmup_begin_lr = warmup_begin_lr
        self.warmup_final_lr = base_lr
        self.warmup_mode = warmup_mode

    def get_warmup_lr(self, num_update):
        """The warm-up's rate at update num_update (< warmup_steps)."""
        return self.warmup_begin_lr + (self.warmup_final_lr - self.warmup_begin_lr) * num_update / self.warmup_steps

    @_abc.abstractmethod
    def __call__(self, num_update):
        """The learning rate of update num_update (1 for the first)."""


LRScheduler.register(_Schedule)


def _schedule_of(schedule):
    """What the Trainer takes: a built-in schedule as it is, any other callable wrapped, None as None."""
    if schedule is None or isinstance(schedule, _Schedule):
        return schedule
    if callable(schedule):
        return _Callable(schedule)
    raise TypeError("a learning-rate schedule is a plexus.lr_scheduler schedule or a callable of the update's number, "
                    "not a %s" % type(schedule).__name__)
