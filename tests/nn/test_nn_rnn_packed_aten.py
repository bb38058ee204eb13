"""torch.lstm / gru / rnn_tanh / rnn_relu in ATen's packed overload (data, batch_sizes, hx,
params, has_biases, num_layers, dropout, train, bidirectional): values and gradients against
PyTorch, agreement with nn.LSTM over a PackedSequence, keyword binding and errors."""

import numpy as np
import pytest

import disttorch as dt
from disttorch.autograd import gradcheck
from disttorch.nn.utils.rnn import pack_padded_sequence

MODES = [("lstm", 4), ("gru", 3), ("rnn_tanh", 1), ("rnn_relu", 1)]
LENGTHS = [5, 3, 3, 1]


def _weights(rng, gates, layers, bidirectional, inp=3, hid=4):
    params = []
    for layer in range(layers):
        for _ in range(2 if bidirectional else 1):
            width = inp if layer == 0 else hid * (2 if bidirectional else 1)
            params += [
                rng.standard_normal((gates * hid, width)) * 0.5,
                rng.standard_normal((gates * hid, hid)) * 0.5,
            ]
            params += [rng.standard_normal(gates * hid) * 0.1, rng.standard_normal(gates * hid) * 0.1]
    return params


def _packed(lib, x):
    packed = lib.nn.utils.rnn.pack_padded_sequence(lib.tensor(x), LENGTHS)
    return packed.data.numpy(), packed.batch_sizes.numpy()


def _run(lib, mode, data, sizes, h0, c0, params, bidirectional, layers=2):
    d = lib.tensor(data, requires_grad=True)
    ps = [lib.tensor(p, requires_grad=True) for p in params]
    hx = (lib.tensor(h0), lib.tensor(c0)) if mode == "lstm" else lib.tensor(h0)
    out = getattr(lib, mode)(d, lib.tensor(sizes), hx, ps, True, layers, 0.0, False, bidirectional)
    (out[0].sum() + 2 * out[1].sum()).backward()
    return [o.detach().numpy() for o in out] + [d.grad.numpy()] + [p.grad.numpy() for p in ps]


@pytest.mark.parametrize("mode,gates", MODES)
def test_packed_form_equals_the_module_over_a_packed_sequence(mode, gates):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((5, 4, 3))
    cls = {"lstm": dt.nn.LSTM, "gru": dt.nn.GRU}.get(mode, dt.nn.RNN)
    kw = {"nonlinearity": mode.split("_")[1]} if cls is dt.nn.RNN else {}
    m = cls(3, 4, num_layers=2, bidirectional=True, **kw).double()
    packed = pack_padded_sequence(dt.tensor(x), LENGTHS)
    ref_out, ref_h = m(packed)
    h0 = dt.zeros(4, 4, 4, dtype=dt.float64)
    hx = (h0, h0) if mode == "lstm" else h0
    out = getattr(dt, mode)(
        packed.data, packed.batch_sizes, hx, list(m._flat_weights), True, 2, 0.0, False, True
    )
    np.testing.assert_allclose(out[0].detach().numpy(), ref_out.data.detach().numpy(), atol=1e-12)
    ref_h = ref_h[0] if mode == "lstm" else ref_h
    np.testing.assert_allclose(out[1].detach().numpy(), ref_h.detach().numpy(), atol=1e-12)


def test_packed_gradcheck():
    rng = np.random.default_rng(1)
    data, sizes = np.arange(12.0).reshape(4, 3) / 10, dt.tensor([2, 1, 1])
    w = _weights(rng, 4, 1, False)
    h0 = dt.zeros(1, 2, 4, dtype=dt.float64)

    def fn(d, *ps):
        return dt.lstm(d, sizes, (h0, h0), list(ps), True, 1, 0.0, False, False)[0]

    inputs = [dt.tensor(data, requires_grad=True)] + [dt.tensor(p, requires_grad=True) for p in w]
    assert gradcheck(fn, tuple(inputs))


def test_keywords_and_errors():
    rng = np.random.default_rng(2)
    w = [dt.tensor(p) for p in _weights(rng, 3, 1, False)]
    data, sizes, h0 = (
        dt.ones(4, 3, dtype=dt.float64),
        dt.tensor([2, 1, 1]),
        dt.zeros(1, 2, 4, dtype=dt.float64),
    )
    out, hn = dt.gru(
        data=data,
        batch_sizes=sizes,
        hx=h0,
        params=w,
        has_biases=True,
        num_layers=1,
        dropout=0.0,
        train=False,
        bidirectional=False,
    )
    assert tuple(out.shape) == (4, 4) and tuple(hn.shape) == (1, 2, 4)
    same, _ = dt.gru(
        data,
        sizes,
        hx=h0,
        params=w,
        has_biases=True,
        num_layers=1,
        dropout=0.0,
        train=False,
        bidirectional=False,
    )
    assert dt.equal(out, same)
    with pytest.raises(ValueError, match="non-increasing and sum to the 4 rows"):
        dt.gru(data, dt.tensor([1, 2, 1]), h0, w, True, 1, 0.0, False, False)
    with pytest.raises(ValueError, match="packed data must be a 2-D tensor"):
        dt.gru(data[None], sizes, h0, w, True, 1, 0.0, False, False)
    with pytest.raises(RuntimeError, match="Expected hidden size \\(1, 2, 4\\) for hx, got \\[2, 4\\]"):
        dt.gru(data, sizes, h0[0], w, True, 1, 0.0, False, False)
    with pytest.raises(TypeError, match="unexpected keyword argument 'batch_first'"):
        dt.gru(data, sizes, h0, w, True, 1, 0.0, False, False, batch_first=True)
    with pytest.raises(TypeError, match="missing required arguments: bidirectional"):
        dt.gru(data, sizes, h0, w, True, 1, 0.0, False)


@pytest.mark.parity
@pytest.mark.parametrize("mode,gates", MODES)
@pytest.mark.parametrize("bidirectional", [False, True])
def test_packed_form_matches_pytorch(mode, gates, bidirectional):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(3)
    x = rng.standard_normal((5, 4, 3))
    data, sizes = _packed(torch, x)
    d = 2 if bidirectional else 1
    h0, c0 = rng.standard_normal((2 * d, 4, 4)), rng.standard_normal((2 * d, 4, 4))
    params = _weights(rng, gates, 2, bidirectional)
    theirs = _run(torch, mode, data, sizes, h0, c0, params, bidirectional)
    ours = _run(dt, mode, data, sizes, h0, c0, params, bidirectional)
    assert len(theirs) == len(ours)
    for t, o in zip(theirs, ours):
        np.testing.assert_allclose(o, t, rtol=1e-9, atol=1e-10)
