"""gluon.rnn's RNN, GRU and LSTM (python/plexus/rnn.py): outputs, final states and gradients against
PyTorch's layers given the same weights (their gates are MXNet's), in float32 (a parameter's dtype);
layouts, directions,
layers, deferred input size, refusals, and d2l's concise RNN training a few steps."""
import pytest

import plexus
from plexus import autograd
from plexus.gluon import nn, rnn
from conftest import need

torch = need("torch")
np = need("numpy")

PARTS = {"weight_ih": "i2h_weight", "weight_hh": "h2h_weight", "bias_ih": "i2h_bias", "bias_hh": "h2h_bias"}


def twins(kind, hidden, layers, bidirectional, inputs, **kwargs):
    """A Plexus layer with random weights (biases too) and PyTorch's with the same."""
    mine = getattr(rnn, kind)(hidden, num_layers=layers, bidirectional=bidirectional, **kwargs)
    mine.initialize()
    theirs = getattr(torch.nn, kind)(inputs, hidden, num_layers=layers, bidirectional=bidirectional,
                                     nonlinearity=kwargs.get("activation", "relu")) if kind == "RNN" else \
        getattr(torch.nn, kind)(inputs, hidden, num_layers=layers, bidirectional=bidirectional)
    gen = np.random.default_rng(7)
    for name, p in theirs.named_parameters():
        base, layer = name.split("_l")
        prefix = "r" if layer.endswith("_reverse") else "l"
        param = getattr(mine, "%s%s_%s" % (prefix, layer.split("_")[0], PARTS[base]))
        values = gen.uniform(-0.6, 0.6, tuple(p.shape)).astype(np.float32)
        if 0 in param.shape:
            param._infer_shape(tuple(p.shape))
        param.set_data(plexus.array(values))
        with torch.no_grad():
            p.copy_(torch.tensor(values))
    return mine, theirs


@pytest.mark.parametrize("kind, layers, bidirectional, layout", [
    ("RNN", 1, False, "TNC"), ("RNN", 2, True, "NTC"), ("RNN-tanh", 2, False, "TNC"), ("GRU", 1, False, "TNC"), ("GRU", 2, True, "TNC"),
    ("LSTM", 1, True, "NTC"), ("LSTM", 2, False, "TNC")])
def test_outputs_states_and_gradients_agree_with_pytorch(kind, layers, bidirectional, layout):
    steps, batch, features, hidden = 4, 3, 5, 6
    extra = {"activation": "tanh"} if kind == "RNN-tanh" else {}
    kind = kind.split("-")[0]
    mine, theirs = twins(kind, hidden, layers, bidirectional, features, layout=layout, **extra)
    gen = np.random.default_rng(3)
    x_values = gen.normal(size=(steps, batch, features)).astype(np.float32)
    directions = 2 if bidirectional else 1
    h0 = (gen.normal(size=(layers * directions, batch, hidden)) * 0.5).astype(np.float32)
    c0 = (gen.normal(size=(layers * directions, batch, hidden)) * 0.5).astype(np.float32)
    x = plexus.array(x_values if layout == "TNC" else x_values.swapaxes(0, 1))
    x.attach_grad()
    states = [plexus.array(h0)] + ([plexus.array(c0)] if kind == "LSTM" else [])
    weights = gen.normal(size=(steps, batch, hidden * directions)).astype(np.float32)
    with autograd.record():
        out, new = mine(x, states)
        out_tnc = out if layout == "TNC" else out.swapaxes(0, 1)
        loss = (out_tnc * plexus.array(weights)).sum() + new[0].sum()
    loss.backward()
    tx = torch.tensor(x_values, requires_grad=True)
    th = torch.tensor(h0)
    t_out, t_new = theirs(tx, (th, torch.tensor(c0)) if kind == "LSTM" else th)
    t_h = t_new[0] if kind == "LSTM" else t_new
    ((t_out * torch.tensor(weights)).sum() + t_h.sum()).backward()
    assert out_tnc.shape == (steps, batch, hidden * directions) and len(new) == len(states)
    assert np.allclose(out_tnc.asnumpy(), t_out.detach().numpy(), rtol=1e-5, atol=1e-6)
    assert np.allclose(new[0].asnumpy(), t_h.detach().numpy(), rtol=1e-5, atol=1e-6)
    if kind == "LSTM":
        assert np.allclose(new[1].asnumpy(), t_new[1].detach().numpy(), rtol=1e-5, atol=1e-6)
    x_grad = x.grad.asnumpy() if layout == "TNC" else x.grad.asnumpy().swapaxes(0, 1)
    assert np.allclose(x_grad, tx.grad.numpy(), rtol=1e-4, atol=1e-5)
    for name, p in theirs.named_parameters():
        base, layer = name.split("_l")
        param = getattr(mine, "%s%s_%s" % ("r" if layer.endswith("_reverse") else "l", layer.split("_")[0], PARTS[base]))
        assert np.allclose(param.grad().asnumpy(), p.grad.numpy(), rtol=1e-4, atol=1e-5), name


def test_begin_state_deferred_input_and_output_alone_as_gluon():
    layer = rnn.LSTM(8, num_layers=2)
    assert layer.l0_i2h_weight.shape == (32, 0)  # inferred at the first call, as Gluon's
    layer.initialize()
    state = layer.begin_state(batch_size=2)
    assert [tuple(s.shape) for s in state] == [(2, 2, 8), (2, 2, 8)]
    out = layer(plexus.ones((3, 2, 5)))  # no states given: the output alone
    assert out.shape == (3, 2, 8) and layer.l0_i2h_weight.shape == (32, 5)
    assert sorted(layer.collect_params().keys())[:2] == ["l0_h2h_bias", "l0_h2h_weight"]
    gru = rnn.GRU(4, input_size=3)
    gru.initialize(device=plexus.cpu(1))
    out, new = gru(plexus.ones((2, 1, 3), device=plexus.cpu(1)), gru.begin_state(1, device=plexus.cpu(1)))
    assert out.device == plexus.cpu(1) and new[0].shape == (1, 1, 4)


def test_gluons_defaults_printing_and_empty_batches():
    layer = rnn.RNN(4)
    assert layer._activation == "relu"  # Gluon's default (PyTorch's is tanh)
    assert str(rnn.LSTM(4, num_layers=2, bidirectional=True)) == "LSTM(None -> 4, TNC, num_layers=2, bidirectional)"
    gru = rnn.GRU(4, input_size=3)
    gru.initialize()
    assert str(gru) == "GRU(3 -> 4, TNC)"
    out, new = gru(plexus.zeros((5, 0, 3)), gru.begin_state(0))  # a batch of none, as PyTorch's
    assert out.shape == (5, 0, 4) and new[0].shape == (1, 0, 4)
    assert gru.begin_state(2, func=plexus.full, val=0.5)[0].asnumpy().tolist() == [[[0.5] * 4] * 2]
    assert gru.state_info(2)[0]["dtype"] == "float32"


def test_refusals_name_what_is_wrong():
    with pytest.raises(ValueError, match="layout is 'TNC'"):
        rnn.RNN(4, layout="NCT")
    with pytest.raises(ValueError, match="activation is 'relu' or 'tanh'"):
        rnn.RNN(4, activation="gelu")
    with pytest.raises(ValueError, match="hidden_size must be an int above 0"):
        rnn.GRU(0)
    with pytest.raises(ValueError, match="num_layers must be an int above 0"):
        rnn.GRU(4, num_layers=0)
    with pytest.raises(ValueError, match="input_size must be an int, 0 to infer it"):
        rnn.LSTM(4, input_size=-1)
    deferred = plexus.gluon.nn.Parameter._deferred("w", (8, 0))  # a layer's parameter inferred at its first call
    with pytest.raises(plexus.ShapeError, match=r"parameter w of shape \(8, 0\) cannot take shape \(9, 3\)"):
        deferred._infer_shape((9, 3))
    deferred._infer_shape((8, 3))
    assert deferred.shape == (8, 3)
    with pytest.raises(ValueError, match=r"dropout must be a number in \[0, 1\)"):
        rnn.LSTM(4, dropout=1.0)
    layer = rnn.LSTM(4, input_size=3)
    layer.initialize()
    with pytest.raises(plexus.ShapeError, match=r"states are 2 tensor\(s\) of shape \(1, 2, 4\)"):
        layer(plexus.ones((5, 2, 3)), layer.begin_state(3))
    with pytest.raises(plexus.ShapeError, match=r"inputs are \(steps, batch, features\) for layout TNC, got shape \(5, 3\)"):
        layer(plexus.ones((5, 3)))
    with pytest.raises(plexus.ShapeError, match="the inputs of l0 have 7 features, and it takes 3"):
        layer(plexus.ones((5, 2, 7)))
    with pytest.raises(plexus.ShapeError, match="a sequence of 0 steps has no output"):
        layer(plexus.ones((0, 2, 3)))
    with pytest.raises(TypeError, match="LSTM: inputs is a numpy.ndarray, not a plexus Tensor"):
        layer(np.ones((5, 2, 3)))
    with pytest.raises(plexus.DTypeError, match="the inputs are int64 and the layer's parameters float32"):
        layer(plexus.ones((5, 2, 3), dtype="int64"))
    with pytest.raises(plexus.DTypeError, match="the inputs are bfloat16"):
        layer(plexus.ones((5, 2, 3), dtype="bfloat16"))
    with pytest.raises(TypeError, match="states are begin_state's list of tensors"):
        layer(plexus.ones((5, 2, 3)), np.zeros((1, 2, 4)))
    with pytest.raises(TypeError, match="states are plexus Tensors"):
        layer(plexus.ones((5, 2, 3)), [np.zeros((1, 2, 4))] * 2)
    with pytest.raises(plexus.DeviceMismatchError, match="the states are on cpu.1. and the inputs on cpu.0."):
        layer(plexus.ones((5, 2, 3)), layer.begin_state(2, device=plexus.cpu(1)))
    with pytest.raises(TypeError, match="batch_size is an int of 0 or more"):
        layer.begin_state(2.0)
    with pytest.raises(ValueError, match=r"dropout must be a number in \[0, 1\)"):
        rnn.GRU(4, dropout="0.1")


def test_dropout_between_layers_only_while_training():
    layer = rnn.RNN(16, num_layers=2, activation="tanh", dropout=0.5, input_size=4)
    layer.initialize(init=plexus.init.Normal(0.5))
    x = plexus.ones((3, 2, 4))
    predicted = layer(x).asnumpy()
    assert np.array_equal(layer(x).asnumpy(), predicted)  # the same outside record()
    with autograd.record():
        trained = layer(x).asnumpy()
    assert not np.array_equal(trained, predicted)


def test_d2l_concise_rnn_trains():
    # d2l's RNNModel: an RNN layer and a Dense over its outputs, the state carried from batch to batch.
    class RNNModel(nn.Block):
        def __init__(self, rnn_layer, vocab_size):
            super().__init__()
            self.rnn = rnn_layer
            self.vocab_size = vocab_size
            self.dense = nn.Dense(vocab_size)

        def forward(self, inputs, state):
            X = plexus.one_hot(inputs.T, self.vocab_size)
            Y, state = self.rnn(X, state)
            return self.dense(Y.reshape(-1, Y.shape[-1])), state

        def begin_state(self, *args, **kwargs):
            return self.rnn.begin_state(*args, **kwargs)

    vocab, steps, batch = 5, 6, 4
    plexus.seed(1)
    net = RNNModel(rnn.GRU(16), vocab)
    net.initialize(init=plexus.init.Normal(0.1))
    trainer = nn.Trainer(net.collect_params(), "sgd", {"learning_rate": 1.0})
    loss = plexus.loss.SoftmaxCrossEntropyLoss()
    corpus = np.arange(200) % vocab  # 0 1 2 3 4 0 1 ...: each token's successor is fixed
    state = net.begin_state(batch_size=batch)
    losses = []
    for epoch in range(30):
        start = (epoch * steps) % 150
        X = plexus.array(np.stack([corpus[start + i * 7:start + i * 7 + steps] for i in range(batch)]), dtype="int64")
        Y = plexus.array(np.stack([corpus[start + i * 7 + 1:start + i * 7 + steps + 1] for i in range(batch)]),
                         dtype="int64")
        with autograd.record():
            y_hat, state = net(X, state)
            l = loss(y_hat, Y.T.reshape(-1)).mean()
        l.backward()
        trainer.step(1)
        losses.append(l.item())
    assert losses[-1] < 0.2 * losses[0], losses
