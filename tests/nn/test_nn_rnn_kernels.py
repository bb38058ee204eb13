"""The recurrent kernels' fast paths (kernels/rnn.py): LSTM's forward without a following
backward saves nothing and must agree with the recording forward; packed sequences that end
(forward direction) or join (reverse direction) at different steps keep their own states;
saved derivatives survive a backward so ``retain_graph`` gives the same gradients twice."""

from __future__ import annotations

import numpy as np
import pytest

import disttorch as dt
from disttorch import nn
from disttorch.kernels import rnn as K
from disttorch.kernels import vml
from disttorch.nn.utils import rnn as R


def _np(t):
    return t.detach().numpy()


@pytest.mark.parametrize("proj_size", [0, 2])
def test_lstm_no_grad_forward_matches_recording_forward_packed(proj_size):
    dt.manual_seed(0)
    lstm = nn.LSTM(3, 4, num_layers=2, bidirectional=True, proj_size=proj_size).double()
    seqs = [dt.randn(n, 3, dtype=dt.float64) for n in (2, 9, 5, 9)]
    packed = R.pack_sequence(seqs, enforce_sorted=False)
    out_g, (h_g, c_g) = lstm(packed)
    assert out_g.data.requires_grad
    with dt.no_grad():
        out_n, (h_n, c_n) = lstm(packed)
    np.testing.assert_array_equal(_np(out_n.data), _np(out_g.data))
    np.testing.assert_array_equal(_np(h_n), _np(h_g))
    np.testing.assert_array_equal(_np(c_n), _np(c_g))
    # each sequence alone (no packing) gives the same output and final states
    for k, (seq, o) in enumerate(zip(seqs, R.unpack_sequence(out_n))):
        with dt.no_grad():
            o_alone, (h_alone, c_alone) = lstm(seq)
        np.testing.assert_allclose(_np(o), _np(o_alone), rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(_np(h_n[:, k]), _np(h_alone), rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(_np(c_n[:, k]), _np(c_alone), rtol=1e-12, atol=1e-12)


def test_lstm_forward_kernel_save_flag_and_states():
    rng = np.random.default_rng(0)
    bs, hs = (3, 3, 2, 1), 2
    xw = rng.standard_normal((sum(bs), 4 * hs))
    h0, c0 = rng.standard_normal((3, hs)), rng.standard_normal((3, hs))
    w_t = rng.standard_normal((hs, 4 * hs))
    for reverse in (False, True):
        y1, h1, c1, saved = K.lstm_forward(xw.copy(), h0, c0, w_t, None, bs, reverse, save=True)
        y2, h2, c2, none = K.lstm_forward(xw.copy(), h0, c0, w_t, None, bs, reverse, save=False)
        assert none is None and len(saved) == 5
        np.testing.assert_array_equal(y1, y2)
        np.testing.assert_array_equal(h1, h2)
        np.testing.assert_array_equal(c1, c2)
    # forward direction: sequence 2 ends after step 1 (rows 2 of step 1), sequence 1 after step 2
    y, h_n, _c, _ = K.lstm_forward(xw.copy(), h0, c0, w_t, None, bs, False, save=False)
    np.testing.assert_array_equal(h_n, np.stack([y[8], y[7], y[5]]))
    # reverse direction: every sequence ends at step 0
    y, h_n, _c, _ = K.lstm_forward(xw.copy(), h0, c0, w_t, None, bs, True, save=False)
    np.testing.assert_array_equal(h_n, y[:3])


def test_lstm_retain_graph_gives_the_same_gradients_twice():
    dt.manual_seed(0)
    lstm = nn.LSTM(3, 4, num_layers=2)
    x = dt.randn(6, 2, 3, requires_grad=True)
    loss = (lstm(x)[0] ** 2).sum()
    loss.backward(retain_graph=True)
    first = [_np(p.grad).copy() for p in lstm.parameters()] + [_np(x.grad).copy()]
    lstm.zero_grad()
    x.grad = None
    loss.backward()
    second = [_np(p.grad) for p in lstm.parameters()] + [_np(x.grad)]
    for a, b in zip(first, second):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("mode,gates", [("LSTM", 4), ("RNN_TANH", 1)])
def test_tied_bias_gradients_are_equal_and_independent(mode, gates):
    """LSTM and Elman RNN: b_ih and b_hh get the same gradient, as separate arrays."""
    dt.manual_seed(0)
    m = nn.LSTM(3, 4) if mode == "LSTM" else nn.RNN(3, 4)
    m(dt.randn(5, 2, 3))[0].sum().backward()
    g_ih, g_hh = m.bias_ih_l0.grad, m.bias_hh_l0.grad
    assert g_ih.shape == (gates * 4,)
    np.testing.assert_array_equal(_np(g_ih), _np(g_hh))
    assert not np.shares_memory(_np(g_ih), _np(g_hh))


@pytest.mark.parity
@pytest.mark.parametrize("nonlinearity", ["tanh", "relu"])
def test_elman_rnn_float32_bits_match_pytorch(torch, nonlinearity):
    """PyTorch's CPU RNN adds ``(h W_hhᵀ + b_hh) + (x W_ihᵀ + b_ih)`` and takes its own tanh:
    the same bits here (machine-learning-book ch15 prints nn.RNN's output beside a manual one).
    The products are exact (quarters, a diagonal W_hh of powers of two), so only the order of
    the bias additions and the tanh can round differently; the biases are arbitrary."""
    rng = np.random.default_rng(0)
    x = (rng.integers(-4, 5, (3, 9, 5)) / 4).astype(np.float32)
    w_ih = (rng.integers(-4, 5, (4, 5)) / 4).astype(np.float32)
    w_hh = np.diag([0.5, -0.25, 1.0, 0.125]).astype(np.float32)
    b_ih, b_hh = rng.standard_normal((2, 4)).astype(np.float32)
    outs = []
    for lib in (dt, torch):
        rnn = lib.nn.RNN(5, 4, batch_first=True, nonlinearity=nonlinearity)
        cell = lib.nn.RNNCell(5, 4, nonlinearity=nonlinearity)
        for m in (rnn, cell):
            weights = (
                [getattr(m, n) for n in ("weight_ih", "weight_hh", "bias_ih", "bias_hh")]
                if m is cell
                else None
            )
            weights = weights or [rnn.weight_ih_l0, rnn.weight_hh_l0, rnn.bias_ih_l0, rnn.bias_hh_l0]
            with lib.no_grad():
                for p, v in zip(weights, (w_ih, w_hh, b_ih, b_hh)):
                    p.copy_(lib.from_numpy(v))
        y, h = rnn(lib.from_numpy(x))
        h1 = cell(lib.from_numpy(x[:, 1]), cell(lib.from_numpy(x[:, 0])))
        outs.append((y.detach().numpy(), h.detach().numpy(), h1.detach().numpy()))
    if nonlinearity == "relu" or vml.mkl_runtime() is not None:  # PyTorch's tanh is MKL's
        for ours, theirs in zip(*outs):
            np.testing.assert_array_equal(ours, theirs)
        return
    # without MKL disttorch's float32 tanh is float64's rounded once, MKL's an ulp off it in
    # 0.5-0.9% of elements (by CPU): PyTorch's order of additions with that tanh, bit for bit
    ys, hidden = [], np.zeros((3, 4), np.float32)
    for t in range(9):
        pre = (hidden @ w_hh.T + b_hh) + (x[:, t] @ w_ih.T + b_ih)
        hidden = np.tanh(pre.astype(np.float64)).astype(np.float32)
        ys.append(hidden)
    expected = (np.stack(ys, 1), hidden[None], ys[1])
    for ours, theirs, exact in zip(*outs, expected):
        np.testing.assert_array_equal(ours, exact)
        np.testing.assert_allclose(ours, theirs, rtol=2**-23, atol=0)
