"""Recurrent layers as Gluon's gluon.rnn (d2l's concise RNN, GRU and LSTM): RNN, GRU and LSTM over a
sequence, layout 'TNC' (steps, batch, features) or 'NTC', any number of layers, one or two directions,
arguments in Gluon's order and with its defaults (RNN's activation 'relu'),
dropout between layers. Blocks written with Plexus's ops, so they are differentiable and run on any device:
the inputs' products of all steps at once, then one product per step. Gates and parameters are MXNet's
(and PyTorch's): GRU's [r, z, n], LSTM's [i, f, g, o]; l0_i2h_weight (gates * hidden, input), l0_h2h_weight
(gates * hidden, hidden), l0_i2h_bias, l0_h2h_bias, 'r' instead of 'l' for the reverse direction."""
import numbers as _numbers

from . import _plexus as _native
from .nn import Block, Parameter, _not_a_tensor

__all__ = ["RNN", "GRU", "LSTM"]


def _positive(who, name, value):
    if isinstance(value, bool) or not isinstance(value, _numbers.Integral) or value <= 0:
        raise ValueError("%s: %s must be an int above 0, got %r" % (who, name, value))
    return int(value)


class _Recurrent(Block):
    _gates = 1   # the gates' products per step: 1 (RNN), 3 (GRU), 4 (LSTM)
    _states = 1  # h, or h and c (LSTM)

    def __init__(self, hidden_size, num_layers=1, layout="TNC", dropout=0.0, bidirectional=False, input_size=0,
                 i2h_weight_initializer=None, h2h_weight_initializer=None, i2h_bias_initializer="zeros",
                 h2h_bias_initializer="zeros"):
        super().__init__()
        who = type(self).__name__
        self._hidden = _positive(who, "hidden_size", hidden_size)
        self._layers = _positive(who, "num_layers", num_layers)
        if layout not in ("TNC", "NTC"):
            raise ValueError("%s: layout is 'TNC' (steps, batch, features) or 'NTC', not %r" % (who, layout))
        if isinstance(dropout, bool) or not isinstance(dropout, _numbers.Real) or not 0 <= dropout < 1:
            raise ValueError("%s: dropout must be a number in [0, 1), got %r" % (who, dropout))
        if isinstance(input_size, bool) or not isinstance(input_size, _numbers.Integral) or input_size < 0:
            raise ValueError("%s: input_size must be an int, 0 to infer it, got %r" % (who, input_size))
        self._layout, self._dropout, self._directions = layout, float(dropout), 2 if bidirectional else 1
        width = self._gates * self._hidden
        for layer in range(self._layers):
            inputs = input_size if layer == 0 else self._hidden * self._directions
            for prefix in "lr"[:self._directions]:
                name = "%s%d_" % (prefix, layer)
                for part, shape, init in (("i2h_weight", (width, inputs), i2h_weight_initializer),
                                          ("h2h_weight", (width, self._hidden), h2h_weight_initializer),
                                          ("i2h_bias", (width,), i2h_bias_initializer),
                                          ("h2h_bias", (width,), h2h_bias_initializer)):
                    made = Parameter._deferred(name + part, shape, init) if 0 in shape else \
                        Parameter(name + part, shape, init)
                    setattr(self, name + part, made)

    def describe(self):
        """As Gluon prints a recurrent layer: LSTM(5 -> 4, TNC, num_layers=2, bidirectional)."""
        inputs = self.l0_i2h_weight.shape[1]
        return "%s(%s -> %d, %s%s%s)" % (type(self).__name__, inputs or "None", self._hidden, self._layout,
                                         ", num_layers=%d" % self._layers if self._layers > 1 else "",
                                         ", bidirectional" if self._directions == 2 else "")

    def state_info(self, batch_size=0):
        """The shape of each state begin_state makes: (layers * directions, batch, hidden)."""
        return [{"shape": (self._layers * self._directions, batch_size, self._hidden), "__layout__": "LNC",
                 "dtype": "float32"} for _ in range(self._states)]

    def begin_state(self, batch_size=0, func=None, device=None, ctx=None, dtype="float32", **kwargs):
        """The states to start a sequence from, as Gluon's: a list of zeros (h; for an LSTM h and c) of
        shape (layers * directions, batch_size, hidden), on `device` (ctx=, as MXNet's); `func` (zeros by
        default) makes each, given shape=, device=, dtype= and the other keywords."""
        from . import _device, zeros
        if isinstance(batch_size, bool) or not isinstance(batch_size, _numbers.Integral) or batch_size < 0:
            raise TypeError("%s.begin_state: batch_size is an int of 0 or more, not %r"
                            % (type(self).__name__, batch_size))
        dev = _device(device, ctx)
        shape = self.state_info(int(batch_size))[0]["shape"]
        make = zeros if func is None else func
        return [make(shape, device=dev, dtype=dtype, **kwargs) for _ in range(self._states)]

    def forward(self, inputs, states=None):
        """inputs (steps, batch, features) ('TNC'; 'NTC' swapped); with states given (begin_state's list, or
        one tensor), (output, new states), else the output alone, as Gluon's. The output is (steps, batch,
        hidden * directions)."""
        from . import autograd, concat, dropout, stack
        who = type(self).__name__
        if not isinstance(inputs, _native.Tensor):
            raise _not_a_tensor(who, "inputs", inputs)
        if inputs.ndim != 3:
            raise _native.ShapeError("%s: inputs are (steps, batch, features) for layout %s, got shape %s"
                                     % (who, self._layout, tuple(inputs.shape)))
        if inputs._dtype_name != "float32":  # the parameters' dtype
            raise _native.DTypeError("%s: the inputs are %s and the layer's parameters float32; cast them "
                                     "(x.astype('float32')), or give token ids to one_hot or an Embedding first"
                                     % (who, inputs._dtype_name))
        x = inputs if self._layout == "TNC" else inputs.swapaxes(0, 1)
        steps, batch = x.shape[0], x.shape[1]
        if steps == 0:
            raise _native.ShapeError("%s: a sequence of 0 steps has no output; give at least one step" % who)
        given = states is not None
        if states is None:
            states = self.begin_state(batch, device=x.device, dtype=x.dtype)
        elif isinstance(states, _native.Tensor):
            states = [states]
        elif not isinstance(states, (list, tuple)):
            raise TypeError("%s: states are begin_state's list of tensors (or one tensor), not a %s"
                            % (who, type(states).__name__))
        states = list(states)
        want = self.state_info(batch)[0]["shape"]
        if any(not isinstance(s, _native.Tensor) for s in states):
            raise TypeError("%s: states are plexus Tensors (begin_state makes them), got %s"
                            % (who, [type(s).__name__ for s in states]))
        if len(states) != self._states or any(tuple(s.shape) != want for s in states):
            raise _native.ShapeError("%s: states are %d tensor(s) of shape %s (begin_state(batch_size=%d)), got %s"
                                     % (who, self._states, want, batch, [tuple(s.shape) for s in states]))
        for s in states:
            if s.device != x.device:
                raise _native.DeviceMismatchError("%s: the states are on %s and the inputs on %s; move them "
                                                  "(s.as_in_context(x.device))" % (who, s.device, x.device))
        finals = [[] for _ in range(self._states)]
        for layer in range(self._layers):
            outputs = []
            for direction, prefix in enumerate("lr"[:self._directions]):
                at = layer * self._directions + direction
                out, ends = self._run("%s%d_" % (prefix, layer), x, [s[at] for s in states], direction == 1)
                outputs.append(out)
                for kept, end in zip(finals, ends):
                    kept.append(end)
            x = outputs[0] if len(outputs) == 1 else concat(outputs, axis=2)
            if self._dropout and layer + 1 < self._layers and autograd.is_training():
                x = dropout(x, self._dropout)
        out = x if self._layout == "TNC" else x.swapaxes(0, 1)
        if not given:
            return out
        ends = [stack(kept, axis=0) for kept in finals]
        # As MXNet's one RNN op: a backward through the output frees the states' records too, so states
        # carried into the next batch (d2l's train_ch8) are constants there.
        autograd._free_with(out, ends)
        return out, ends

    def _run(self, name, x, state, reverse):
        """One layer in one direction over every step: its outputs (steps, batch, hidden) and final states."""
        steps, batch, features = x.shape
        w_x, w_h = getattr(self, name + "i2h_weight"), getattr(self, name + "h2h_weight")
        if 0 in w_x.shape:
            w_x._infer_shape((self._gates * self._hidden, features))
        elif w_x.shape[1] != features:
            raise _native.ShapeError("%s: the inputs of %s have %d features, and it takes %d (input_size, or its first "
                                     "call's)" % (type(self).__name__, name[:-1], features, w_x.shape[1]))
        b_x, b_h = getattr(self, name + "i2h_bias").data(x.device), getattr(self, name + "h2h_bias").data(x.device)
        w_h = w_h.data(x.device)
        # Every step's input product at once: (steps * batch, gates * hidden).
        width = self._gates * self._hidden
        projected = (x.reshape(steps * batch, features) @ w_x.data(x.device).T + b_x).reshape(steps, batch, width)
        outputs = [None] * steps
        for t in (range(steps - 1, -1, -1) if reverse else range(steps)):
            state = self._cell(projected[t], state[0] @ w_h.T + b_h, state)
            outputs[t] = state[0]
        from . import stack
        return stack(outputs, axis=0), state


class RNN(_Recurrent):
    """Elman RNN, as gluon.rnn.RNN: h' = activation(x W_i2h^T + b_i2h + h W_h2h^T + b_h2h), activation
    'relu' (Gluon's default; PyTorch's is tanh) or 'tanh'. Arguments in Gluon's order."""

    def __init__(self, hidden_size, num_layers=1, activation="relu", layout="TNC", dropout=0.0,
                 bidirectional=False, i2h_weight_initializer=None, h2h_weight_initializer=None,
                 i2h_bias_initializer="zeros", h2h_bias_initializer="zeros", input_size=0):
        if activation not in ("tanh", "relu"):
            raise ValueError("RNN: activation is 'relu' or 'tanh', not %r" % (activation,))
        super().__init__(hidden_size, num_layers, layout, dropout, bidirectional, input_size,
                         i2h_weight_initializer, h2h_weight_initializer, i2h_bias_initializer, h2h_bias_initializer)
        self._activation = activation

    def _cell(self, from_x, from_h, state):
        total = from_x + from_h
        return [total.tanh() if self._activation == "tanh" else total.relu()]


class GRU(_Recurrent):
    """Gated recurrent unit, as gluon.rnn.GRU: r, z = sigmoid of their products; n = tanh(x_n + r * h_n);
    h' = (1 - z) * n + z * h."""
    _gates = 3

    def _cell(self, from_x, from_h, state):
        n = self._hidden
        r = (from_x[:, :n] + from_h[:, :n]).sigmoid()
        z = (from_x[:, n:2 * n] + from_h[:, n:2 * n]).sigmoid()
        candidate = (from_x[:, 2 * n:] + r * from_h[:, 2 * n:]).tanh()
        return [(1 - z) * candidate + z * state[0]]


class LSTM(_Recurrent):
    """Long short-term memory, as gluon.rnn.LSTM: gates i, f, o = sigmoid, g = tanh; c' = f * c + i * g;
    h' = o * tanh(c'). Its states are [h, c]."""
    _gates = 4
    _states = 2

    def _cell(self, from_x, from_h, state):
        n = self._hidden
        total = from_x + from_h
        i, f = total[:, :n].sigmoid(), total[:, n:2 * n].sigmoid()
        g, o = total[:, 2 * n:3 * n].tanh(), total[:, 3 * n:].sigmoid()
        c = f * state[1] + i * g
        return [o * c.tanh(), c]
