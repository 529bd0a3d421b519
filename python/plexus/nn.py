"""Gluon-style layers: Sequential, Dense, Conv2D, MaxPool2D, AvgPool2D, GlobalAvgPool2D, AdaptiveAvgPool2D,
Flatten, Dropout, Activation, LeakyReLU, BatchNorm, LayerNorm, Embedding, d2l's Residual and resnet18; parameters, Trainer and split_and_load; mixed precision:
autocast and LossScaler."""
import os as _os

from ._plexus.nn import (Block, Parameter, ParameterDict, Dense, Conv2D, MaxPool2D, AvgPool2D, GlobalAvgPool2D,
                         AdaptiveAvgPool2D, Flatten, Dropout, Activation, LeakyReLU, BatchNorm, LayerNorm, Embedding,
                         Residual, resnet18, Sequential, Trainer,
                         clip_global_norm, autocast, autocast_dtype, LossScaler)
from . import _plexus as _native
from .init import _ConstantValues

__all__ = ["Block", "Parameter", "ParameterDict", "Dense", "Conv2D", "MaxPool2D", "AvgPool2D", "GlobalAvgPool2D",
           "AdaptiveAvgPool2D", "Flatten", "Dropout", "Activation", "LeakyReLU", "BatchNorm", "LayerNorm", "Embedding",
           "Residual", "resnet18", "Sequential", "Trainer",
           "split_and_load", "clip_global_norm", "autocast", "autocast_dtype", "LossScaler"]


def split_and_load(data, devices=None, batch_axis=0, even_split=True, ctx_list=None):
    """Gluon's split_and_load: `data` (a tensor, or anything plexus.array takes, made on the first
    device) split along `batch_axis` into one part per device of `devices` (Gluon's ctx_list=), each on
    its device. As Gluon's: a batch that does not divide evenly is a ShapeError unless
    even_split=False (part sizes then differ by at most one, and fewer rows than devices give fewer
    parts), and one device takes the whole batch."""
    from . import Tensor, array, _device
    devices = _device(devices, ctx_list)
    if devices is None:
        raise TypeError("split_and_load: give the devices (devices= or Gluon's ctx_list=)")
    devices = list(devices) if isinstance(devices, (list, tuple)) else [devices]
    if not isinstance(data, Tensor):
        data = array(data, device=devices[0] if devices else None)
    return _native.nn._split_and_load(data, devices, batch_axis, even_split)


def _devices(device, ctx):
    from . import _device, cpu
    d = _device(device, ctx)
    if d is None:
        return [cpu()]
    return list(d) if isinstance(d, (list, tuple)) else [d]


def _warn(message):
    """A UserWarning shown at the user's line: the first caller outside this package (Block's methods
    pass through wrappers of their own, so a fixed stacklevel pointed inside it)."""
    import os
    import sys
    import warnings
    here = os.path.dirname(os.path.abspath(__file__)) + os.sep
    level, frame = 2, sys._getframe(1)
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(here):
        frame, level = frame.f_back, level + 1
    warnings.warn(message, UserWarning, stacklevel=level)


def _initialize(self, init=None, device=None, ctx=None, force_reinit=False):
    """Makes the parameters on `device` (a device or a list of them; ctx= as in Gluon; default cpu(0)).
    `init` (plexus.init.Normal(0.01), Xavier(), ..., or a name such as 'normal') sets the parameters
    without an initializer of their own (weights; default Xavier-uniform); biases start at zero. As in
    Gluon, parameters already initialized are left alone with a warning unless force_reinit=True (the
    others, of blocks added since, are initialized)."""
    _initialize_all(self.collect_params(), init, _devices(device, ctx), force_reinit)


def _initialize_all(params, init, devices, force_reinit):
    from .init import create
    made = create(init)
    if force_reinit:
        ParameterDict._initialize_raw(params, devices, True, made)
        return
    # Initialized, or waiting for its shape: left alone, as Gluon's.
    done = [name for name, p in params.items() if p._initialized]
    if done:
        _warn("initialize: %s already initialized, left as they are (force_reinit=True initializes them "
              "again)" % ", ".join(done))
    for name, p in params.items():
        if not p._initialized:
            p._initialize(devices, False, made)


def _param_initialize(self, init=None, device=None, ctx=None, force_reinit=False):
    """Makes this parameter on `device` (a device or a list; default cpu(0)) with `init` when given
    (it overrides the parameter's own, as in Gluon), else its own initializer, else Xavier-uniform; an
    initialized one needs force_reinit=True."""
    from .init import create
    if self._initialized and not force_reinit:
        _warn("initialize: %s already initialized, left as it is (force_reinit=True initializes it again)"
              % self.name)
        return
    if init is None:
        self._initialize(_devices(device, ctx), force_reinit, create(None))
    else:
        self._initialize_as(_devices(device, ctx), force_reinit, create(init))


def _load_parameters(self, filename, device=None, ctx=None):
    """Reads parameters saved by save_parameters onto `device` (or a list of devices); without one each
    parameter stays on the devices it was initialized on (cpu(0) for one not initialized), as Gluon's. A
    file that is not there is a FileNotFoundError, as for open()."""
    from ._paths import existing_file
    devices = [] if device is None and ctx is None else _devices(device, ctx)
    self._load_parameters(existing_file(filename, "load_parameters"), devices)


_trainer_load_states = Trainer.load_states


def _load_states(self, fname):
    """Reads what save_states wrote (see Trainer); a file that is not there is a FileNotFoundError."""
    from ._paths import existing_file
    _trainer_load_states(self, existing_file(fname, "load_states"))


Trainer.load_states = _load_states
_trainer_init = Trainer.__init__


def _trainer_new(self, params, optimizer, optimizer_params=None):
    """Trainer(params, optimizer, optimizer_params) as Gluon's: params a ParameterDict (collect_params()),
    a dict of them by name, or a list (collect_params().values(), named '0.weight', ... by position in
    state files); optimizer_params may hold an 'lr_scheduler' (plexus.lr_scheduler), as d2l passes one."""
    if not isinstance(params, ParameterDict):
        items = params.items() if isinstance(params, dict) else \
            (("%d.%s" % (i, p.name) if isinstance(p, Parameter) else "", p) for i, p in enumerate(params))
        made = ParameterDict()
        for name, p in items:
            if not isinstance(p, Parameter):
                raise TypeError("Trainer: params are a ParameterDict, a dict or a list of Parameters; got a %s"
                                % type(p).__name__)
            made._add(name, p)
        params = made
    options = dict(optimizer_params or {})
    schedule = options.pop("lr_scheduler", None)
    if schedule is not None and "learning_rate" in options:
        from .lr_scheduler import LRScheduler
        if isinstance(schedule, LRScheduler):
            # As MXNet's Trainer: the given rate becomes the schedule's base rate, with a warning.
            schedule.base_lr = options["learning_rate"]
            _warn("learning rate from lr_scheduler has been overwritten by learning_rate in optimizer_params")
        else:
            _warn("learning_rate in optimizer_params is not used: the lr_scheduler (a callable) gives every "
                  "update's rate")
    _trainer_init(self, params, optimizer, options)  # (the C++ trainer holds the parameters it updates)
    if schedule is not None:
        self.set_lr_scheduler(schedule)


def _set_lr_scheduler(self, schedule):
    """Sets the rate of every later update from `schedule` (a plexus.lr_scheduler schedule, or any callable
    of the update's number); None goes back to a fixed rate."""
    from .lr_scheduler import _schedule_of
    _trainer_set_lr_scheduler(self, _schedule_of(schedule))
    self._plexus_schedule = schedule  # the trainer holds a callable weakly: kept here, where gc sees it


Trainer.__init__ = _trainer_new
_trainer_set_lr_scheduler = Trainer.set_lr_scheduler
Trainer.set_lr_scheduler = _set_lr_scheduler
_trainer_save_states = Trainer.save_states
Trainer.save_states = lambda self, fname: _trainer_save_states(self, _os.fspath(fname))
_block_save_parameters = Block.save_parameters
Block.save_parameters = lambda self, filename: _block_save_parameters(self, _os.fspath(filename))


def _reset_ctx(self, device):
    """Moves every parameter to `device` (or a list of devices)."""
    self.collect_params().reset_ctx(_devices(device, None))


def _params_initialize(self, init=None, device=None, ctx=None, force_reinit=False):
    """As Block.initialize, for these parameters."""
    _initialize_all(self, init, _devices(device, ctx), force_reinit)


def _params_reset_ctx(self, device):
    ParameterDict._reset_ctx_raw(self, _devices(device, None))


def _block_setattr(self, name, value):
    """A Block written in Python: a Block assigned to an attribute becomes a child (its parameters named
    "attribute.weight", ...), and a Parameter one of its own (named by its name), as in Gluon."""
    if not name.startswith("_"):
        if isinstance(value, Block):
            self._register_child(name, value)
        elif isinstance(value, Parameter):
            self._register_param(value)
            self.__dict__[name] = value  # owns it; `weight` and `bias` read back through Block's properties
            return
    object.__setattr__(self, name, value)


def _params_repr(self):
    """As Gluon's: one line per parameter."""
    lines = ["  %s (shape=%s, grad_req=%s)" % (name, p.shape, p.grad_req) for name, p in self.items()]
    return "ParameterDict (\n%s\n)" % "\n".join(lines) if lines else "ParameterDict ()"


def _params_get(self, name, **kwargs):
    """Gluon 1's ParameterDict.get, as d2l's custom layers call it (self.weight = self.params.get('weight',
    shape=(in_units, units))): this dict's parameter of that name, else a new Parameter(name, **kwargs),
    which the assignment to an attribute makes the block's."""
    for key, p in self.items():
        if key == name:
            _same_as_asked("get", p, kwargs)
            return p
    if "shape" not in kwargs:
        raise TypeError("ParameterDict.get: no parameter '%s' here, and a new one needs shape=" % name)
    made = Parameter(name, **kwargs)
    self._add(name, made)  # as Gluon's: the dict holds what it made
    return made


def _same_as_asked(call, p, asked):
    """As Gluon's: an existing parameter comes back only as the call describes it."""
    for attr, want in asked.items():
        if attr in ("shape", "grad_req", "lr_mult", "wd_mult"):
            have = p.shape if attr == "shape" else getattr(p, attr)
            if (tuple(want) if attr == "shape" else want) != have:
                raise ValueError("ParameterDict.%s: parameter '%s' exists with %s %r, not the %r asked for"
                                 % (call, p.name, attr, have, want))


def _params_get_constant(self, name, value=None):
    """Gluon 1's ParameterDict.get_constant, as d2l's FixedHiddenMLP calls it (self.rand_weight =
    self.params.get_constant('rand_weight', np.random.uniform(size=(20, 20)))): a parameter that holds `value`
    and that training leaves alone (grad_req 'null'), made when the network is initialized; this dict's
    parameter of that name if it has one."""
    for key, p in self.items():
        if key == name:
            if p.grad_req != "null":
                raise ValueError("ParameterDict.get_constant: parameter '%s' exists and is trained (grad_req %r), "
                                 "not a constant" % (name, p.grad_req))
            if value is not None:
                import numpy
                shape = value.shape if isinstance(value, _native.Tensor) else numpy.shape(value)
                _same_as_asked("get_constant", p, {"shape": shape})
            return p
    if value is None:
        raise TypeError("ParameterDict.get_constant: no parameter '%s' here, and a new one needs its value" % name)
    from . import array
    values = value if isinstance(value, _native.Tensor) else array(value)
    made = Parameter(name, shape=tuple(values.shape), init=_ConstantValues(values.detach()), grad_req="null",
                     differentiable=False)
    self._add(name, made)
    return made


class _Children(dict):
    """Gluon's block._children, as d2l's MySequential fills it (self._children[block.name] = block): an item
    set makes the block a child, as an attribute does, and they stay in the order they were set."""

    def __init__(self, owner):
        super().__init__()
        self._owner = owner

    def __setitem__(self, name, block):
        if not isinstance(block, Block):
            raise TypeError("_children[%r]: a %s is not a Block" % (name, type(block).__name__))
        if name in self:
            raise KeyError("_children: %r is already a child of this block" % (name,))
        self._owner._register_child(str(name), block)
        super().__setitem__(name, block)

    def update(self, *args, **kwargs):
        for name, block in dict(*args, **kwargs).items():
            self[name] = block

    def setdefault(self, name, block=None):
        if name not in self:
            self[name] = block
        return self[name]

    def _refuse(self, *args, **kwargs):
        raise TypeError("_children: a child stays the block's once added (its parameters are the block's); "
                        "make a new block without it")

    # (Removing one had let its Python object go while the block still computed with it.)
    __delitem__ = pop = popitem = clear = _refuse


def _block_children(self):
    """The children set through _children (a block written in Python)."""
    kids = self.__dict__.get("_plexus_children")
    if kids is None:
        kids = _Children(self)
        object.__setattr__(self, "_plexus_children", kids)
    return kids


Block._children = property(_block_children)
ParameterDict.__repr__ = _params_repr
ParameterDict.get = _params_get
ParameterDict.get_constant = _params_get_constant
Block.__setattr__ = _block_setattr
Block.initialize = _initialize
Block.zero_grad = lambda self: self.collect_params().zero_grad()
Parameter.initialize = _param_initialize
Block.load_parameters = _load_parameters
Block.reset_ctx = _reset_ctx
ParameterDict._initialize_raw = ParameterDict.initialize
ParameterDict._reset_ctx_raw = ParameterDict.reset_ctx
ParameterDict.initialize = _params_initialize
ParameterDict.reset_ctx = _params_reset_ctx


def _made_first(method, name):
    """`method` of a Block, refused with a TypeError (not a crash) before Block.__init__ has made the block: a
    Block written in Python whose __init__ uses self (self.params.get, self.add, ...) before super().__init__()."""
    def checked(self, *args, **kwargs):
        if not _native.nn._block_made(self):
            raise TypeError("%s.%s: the block is not made yet: call super().__init__() first in %s.__init__"
                            % (type(self).__name__, name.strip("_") or name, type(self).__name__))
        return method(self, *args, **kwargs)
    checked.__name__ = name
    checked.__qualname__ = "Block." + name  # (a bound method prints it: not "_made_first.<locals>.checked")
    checked.__doc__ = getattr(method, "__doc__", None)
    return checked


def _guard_until_made(cls):
    for name, attr in list(vars(cls).items()):
        if name in ("__init__", "__new__", "__setattr__", "__init_subclass__", "__class_getitem__"):
            continue
        if isinstance(attr, property):
            setattr(cls, name, property(attr.fget and _made_first(attr.fget, name),
                                        attr.fset and _made_first(attr.fset, name), attr.fdel, attr.__doc__))
        elif callable(attr) and not isinstance(attr, (type, staticmethod, classmethod)):
            checked = _made_first(attr, name)
            checked.__qualname__ = "%s.%s" % (cls.__name__, name)
            setattr(cls, name, checked)


_guard_until_made(Block)
_guard_until_made(Sequential)


def _not_a_tensor(call, name, value):
    """The TypeError for `value` given as `name` to `call` where a Tensor belongs (pybind11's would list
    every signature instead)."""
    kind = type(value)
    return TypeError("%s: %s is a %s.%s, not a plexus Tensor; make one with plexus.array(%s, device=...)"
                     % (call, name, kind.__module__, kind.__qualname__, name))


_block_call = Block.__call__
_block_forward = Block.forward


def _call(self, *args, **kwargs):
    """block(x): its forward. A block written in Python takes and gives what its forward does, as Gluon's
    (d2l's attention(queries, keys, values, valid_lens), an encoder's (outputs, state)); Plexus's layers,
    and a Python block inside a Sequential, take one tensor and give one."""
    if type(self).forward is not _block_forward and not (
            len(args) == 1 and not kwargs and isinstance(args[0], _native.Tensor) and _native.nn._summarising()):
        return self.forward(*args, **kwargs)
    if not args and list(kwargs) == ["x"]:  # Gluon's keyword
        args, kwargs = (kwargs["x"],), {}
    if len(args) != 1 or kwargs:
        raise TypeError("%s(x) takes one tensor, got %d positional and %d keyword arguments"
                        % (type(self).__name__, len(args), len(kwargs)))
    if not isinstance(args[0], _native.Tensor):
        raise _not_a_tensor("%s(x)" % type(self).__name__, "x", args[0])
    return _block_call(self, args[0])


Block.__call__ = _made_first(_call, "__call__")


def _no_forward_over_a_layer(cls, **kwargs):
    """A Python subclass may give nn.Block a forward, not Plexus's own layers or Sequential: those run their
    C++ forward inside a Sequential and in summary(), so an override would hold only for direct calls."""
    super(Block, cls).__init_subclass__(**kwargs)
    native = next(c for c in cls.__mro__ if c.__module__.startswith("plexus._plexus"))
    if native is not Block and any("forward" in vars(c) for c in cls.__mro__[:cls.__mro__.index(native)]):
        raise TypeError("%s: a subclass of Plexus's %s cannot replace its forward (a Sequential and summary() run "
                        "%s's own); subclass nn.Block, hold the %s as a child and call it in your forward"
                        % (cls.__name__, native.__name__, native.__name__, native.__name__))


Block.__init_subclass__ = classmethod(_no_forward_over_a_layer)


_set_data = Parameter.set_data


def _set_data_of_a_tensor(self, data):
    if not isinstance(data, _native.Tensor):
        raise _not_a_tensor("Parameter.set_data(data)", "data", data)
    return _set_data(self, data)


_set_data_of_a_tensor.__doc__ = _set_data.__doc__
Parameter.set_data = _set_data_of_a_tensor


# Layers written in Python with the names above (Conv1D, ..., HybridSequential).
from .gluon_layers import (Conv1D, Conv2DTranspose, MaxPool1D, AvgPool1D, GlobalMaxPool1D,  # noqa: E402
                           GlobalAvgPool1D, GlobalMaxPool2D, HybridBlock, HybridSequential)

__all__ += ["Conv1D", "Conv2DTranspose", "MaxPool1D", "AvgPool1D", "GlobalMaxPool1D", "GlobalAvgPool1D", "GlobalMaxPool2D",
            "HybridBlock", "HybridSequential"]
