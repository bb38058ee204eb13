"""Pure-NumPy kernels of the recurrent layers: one layer-direction's whole sequence forward
(saving what backward needs) and backward through time. No tensors, no autograd here.

Layout: the sequence is *packed* (PyTorch's ``PackedSequence`` layout): ``xw`` holds the input
projection ``x @ W_ihᵀ + b`` of every time step stacked as rows ``(N, G)``; step ``t`` owns rows
``offsets[t]:offsets[t] + batch_sizes[t]`` and the batch sizes never grow. An ordinary
``(T, B, I)`` input is the special case ``batch_sizes = [B] * T``. Step ``t`` updates the first
``batch_sizes[t]`` rows of the running state; rows of sequences that have ended (forward
direction) or not yet started (reverse direction) keep their state, so the final state of each
sequence is its last real step's and the reverse direction starts every sequence from ``h0``.

Per step: the gates are ``xw[t] + h @ W_hhᵀ`` (one matrix product for all gates, with a
C-contiguous ``W_hhᵀ``, which BLAS multiplies fastest). A sigmoid is ``0.5 * tanh(x / 2) + 0.5``;
the forward kernels take ``xw`` and ``W_hhᵀ`` with the rows of the sigmoid gates already halved
(``gate_scale``), so one ``tanh`` covers all gates of a step; for a sequence of a step or two
(a cell) the caller instead passes the scale as ``post_scale``, applied to each step's
``h @ W_hhᵀ``, which spares preparing the weights. Biases that add linearly
(``b_hh`` of RNN and LSTM) are folded into ``xw`` by the caller. Backward walks the steps in the opposite
order and returns the gate gradients of every step as one ``(N, G)`` array, so the caller
forms ``dX``, ``dW_ih``, ``dW_hh`` and the bias gradients with one matrix product each.

Gate order is PyTorch's: LSTM ``i, f, g, o``; GRU ``r, z, n``.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import numpy as np

__all__ = [
    "gate_scale",
    "gru_backward",
    "gru_forward",
    "lstm_backward",
    "lstm_forward",
    "rnn_backward",
    "rnn_forward",
    "steps",
]


def steps(batch_sizes: Sequence[int], reverse: bool) -> Iterator[tuple[int, int, int]]:
    """``(start, stop, batch)`` row ranges of the packed steps, in processing order."""
    offsets = np.concatenate([[0], np.cumsum(batch_sizes)]).tolist()
    order = range(len(batch_sizes) - 1, -1, -1) if reverse else range(len(batch_sizes))
    for t in order:
        yield offsets[t], offsets[t + 1], offsets[t + 1] - offsets[t]


def gate_scale(mode: str, hidden: int, dtype: np.dtype) -> np.ndarray | None:
    """Per gate row: 0.5 for the sigmoid gates (LSTM ``i, f, o``; GRU ``r, z``), 1 otherwise;
    None for the Elman RNN. Multiply ``W_ih``, ``W_hh`` and the biases' rows by it before the
    forward kernels."""
    if mode == "LSTM":
        scale = np.full(4 * hidden, 0.5, dtype=dtype)
        scale[2 * hidden : 3 * hidden] = 1.0
    elif mode == "GRU":
        scale = np.ones(3 * hidden, dtype=dtype)
        scale[: 2 * hidden] = 0.5
    else:
        return None
    return scale


def _finish_sigmoid_(a: np.ndarray) -> None:
    """``tanh(x / 2)`` -> ``sigmoid(x)`` in place."""
    a *= 0.5
    a += 0.5


# ------------------------------------------------------------------------ Elman RNN
def rnn_forward(
    xw: np.ndarray, h0: np.ndarray, w_hh_t: np.ndarray, batch_sizes: Sequence[int], reverse: bool, relu: bool
) -> tuple:
    """``h_t = act(xw_t + h_{t-1} W_hhᵀ)`` (both biases in ``xw``); returns
    ``(y (N, H), h_n, saved)``."""
    y = np.empty_like(xw)
    hprev = np.empty_like(xw)
    h = h0.copy()
    for s, e, b in steps(batch_sizes, reverse):
        hprev[s:e] = h[:b]
        pre = y[s:e]
        np.matmul(h[:b], w_hh_t, out=pre)
        pre += xw[s:e]
        if relu:
            np.maximum(pre, 0, out=pre)
        else:
            np.tanh(pre, out=pre)
        h[:b] = pre
    return y, h, (y, hprev)


def rnn_backward(
    dy: np.ndarray,
    dhn: np.ndarray,
    saved: tuple,
    w_hh: np.ndarray,
    batch_sizes: Sequence[int],
    reverse: bool,
    relu: bool,
) -> tuple:
    """Returns ``(dpre (N, H), dh0, hprev)``: pre-activation gradients of every step."""
    y, hprev = saved
    dpre = np.empty_like(y)
    dh = dhn.copy()
    for s, e, b in steps(batch_sizes, not reverse):
        g = dpre[s:e]
        np.add(dh[:b], dy[s:e], out=g)
        if relu:
            g *= y[s:e] > 0
        else:
            g *= 1 - y[s:e] * y[s:e]
        dh[:b] = g @ w_hh
    return dpre, dh, hprev


# ------------------------------------------------------------------------------ LSTM
def lstm_forward(
    xw: np.ndarray,
    h0: np.ndarray,
    c0: np.ndarray,
    w_hh_t: np.ndarray,
    w_hr: np.ndarray | None,
    batch_sizes: Sequence[int],
    reverse: bool,
    post_scale: np.ndarray | None = None,
) -> tuple:
    """One LSTM layer-direction (``xw``, ``w_hh_t`` prescaled by ``gate_scale``, both biases in
    ``xw``); returns ``(y (N, P), h_n (B, P), c_n (B, H), saved)`` where ``P`` is the
    projection size (``H`` without projection). ``xw`` (the caller's temporary) is overwritten
    with the gate activations."""
    n, hs = xw.shape[0], c0.shape[1]
    p = h0.shape[1]
    gates = xw
    rec = np.empty((h0.shape[0], xw.shape[1]), dtype=xw.dtype)  # h @ W_hhᵀ of one step
    c_all = np.empty((n, hs), dtype=xw.dtype)
    cprev = np.empty((n, hs), dtype=xw.dtype)
    tanh_c = np.empty((n, hs), dtype=xw.dtype)
    hprev = np.empty((n, p), dtype=xw.dtype)
    hc = np.empty((n, hs), dtype=xw.dtype) if w_hr is not None else None
    y = np.empty((n, p), dtype=xw.dtype)
    h, c = h0.copy(), c0.copy()
    w_r = np.ascontiguousarray(w_hr.T) if w_hr is not None else None
    half = gate_scale("LSTM", hs, xw.dtype)  # tanh(x/2) -> sigmoid(x) on i, f, o; g kept
    half_off = 1 - half
    for s, e, b in steps(batch_sizes, reverse):
        hprev[s:e] = h[:b]
        cprev[s:e] = c[:b]
        g = gates[s:e]
        hw = rec[:b]
        np.matmul(h[:b], w_hh_t, out=hw)
        if post_scale is not None:
            hw *= post_scale
        g += hw
        np.tanh(g, out=g)
        g *= half
        g += half_off
        ct = c_all[s:e]
        np.multiply(g[:, hs : 2 * hs], c[:b], out=ct)
        ct += g[:, :hs] * g[:, 2 * hs : 3 * hs]
        c[:b] = ct
        tc = tanh_c[s:e]
        np.tanh(ct, out=tc)
        if w_r is None:
            np.multiply(g[:, 3 * hs :], tc, out=y[s:e])
        else:
            np.multiply(g[:, 3 * hs :], tc, out=hc[s:e])
            np.matmul(hc[s:e], w_r, out=y[s:e])
        h[:b] = y[s:e]
    return y, h, c, (gates, cprev, tanh_c, hprev, hc)


def lstm_backward(
    dy: np.ndarray,
    dhn: np.ndarray,
    dcn: np.ndarray,
    saved: tuple,
    w_hh: np.ndarray,
    w_hr: np.ndarray | None,
    batch_sizes: Sequence[int],
    reverse: bool,
) -> tuple:
    """Returns ``(dgates (N, 4H), dh0, dc0, hprev, dh_out, hc)``: pre-activation gate
    gradients, the initial-state gradients, and what ``dW_hh``/``dW_hr`` are formed from
    (``dh_out`` is the gradient of each step's output ``h``, needed only with projection)."""
    gates, cprev, tanh_c, hprev, hc = saved
    _n, hs = cprev.shape
    dgates = np.empty_like(gates)
    dh_out = np.empty_like(hprev) if w_hr is not None else None
    dh, dc = dhn.copy(), dcn.copy()
    for s, e, b in steps(batch_sizes, not reverse):
        # local derivatives of this step's gates (cache-hot): d gate_pre = (dc or dh) * factor
        g = gates[s:e]
        i, f, gg, o = g[:, :hs], g[:, hs : 2 * hs], g[:, 2 * hs : 3 * hs], g[:, 3 * hs :]
        fac = 1 - g
        fac *= g  # s (1 - s) for i, f, o
        fi, ff, fg, fo = fac[:, :hs], fac[:, hs : 2 * hs], fac[:, 2 * hs : 3 * hs], fac[:, 3 * hs :]
        np.multiply(gg, gg, out=fg)
        np.subtract(1, fg, out=fg)  # 1 - g^2
        fi *= gg  # di = dc * g s_i'
        ff *= cprev[s:e]  # df = dc * c_prev s_f'
        fg *= i  # dg = dc * i (1 - g^2)
        tc = tanh_c[s:e]
        fo *= tc  # do = dh * tanh(c) s_o'
        kc = tc * tc
        np.subtract(1, kc, out=kc)
        kc *= o  # dc += dh * o (1 - tanh(c)^2)
        dht = dh[:b] + dy[s:e]
        if w_hr is not None:
            dh_out[s:e] = dht
            dht = dht @ w_hr
        d = dgates[s:e]
        np.multiply(dht, fo, out=d[:, 3 * hs :])
        kc *= dht
        kc += dc[:b]  # dc of this step
        np.multiply(kc[:, None, :], fac.reshape(b, 4, hs)[:, :3], out=d.reshape(b, 4, hs)[:, :3])
        np.multiply(kc, f, out=dc[:b])
        np.matmul(d, w_hh, out=dh[:b])
    return dgates, dh, dc, hprev, dh_out, hc


# ------------------------------------------------------------------------------- GRU
def gru_forward(
    xw: np.ndarray,
    h0: np.ndarray,
    w_hh_t: np.ndarray,
    b_hh: np.ndarray | None,
    batch_sizes: Sequence[int],
    reverse: bool,
    post_scale: np.ndarray | None = None,
) -> tuple:
    """One GRU layer-direction (``xw`` holds ``x W_ihᵀ + b_ih``; ``b_hh`` stays inside the
    reset gate's product, as PyTorch; ``xw``, ``w_hh_t`` and ``b_hh`` prescaled by
    ``gate_scale``); returns ``(y (N, H), h_n, saved)``. ``xw`` (the caller's temporary) is
    overwritten with the activations of ``r, z, n``."""
    n, hs = xw.shape[0], h0.shape[1]
    gates = xw
    ghn = np.empty((n, hs), dtype=xw.dtype)  # W_hn h + b_hn (before the reset gate)
    hprev = np.empty((n, hs), dtype=xw.dtype)
    y = np.empty((n, hs), dtype=xw.dtype)
    h = h0.copy()
    for s, e, b in steps(batch_sizes, reverse):
        hp = h[:b]
        hprev[s:e] = hp
        gh = hp @ w_hh_t
        if b_hh is not None:
            gh += b_hh
        if post_scale is not None:
            gh *= post_scale
        g = gates[s:e]
        rz = g[:, : 2 * hs]
        rz += gh[:, : 2 * hs]
        np.tanh(rz, out=rz)
        _finish_sigmoid_(rz)
        ghn[s:e] = gh[:, 2 * hs :]
        nt = g[:, 2 * hs :]
        nt += g[:, :hs] * gh[:, 2 * hs :]
        np.tanh(nt, out=nt)
        yt = y[s:e]
        np.subtract(hp, nt, out=yt)  # h = n + z (h_prev - n)
        yt *= g[:, hs : 2 * hs]
        yt += nt
        h[:b] = yt
    return y, h, (gates, ghn, hprev)


def gru_backward(
    dy: np.ndarray, dhn: np.ndarray, saved: tuple, w_hh: np.ndarray, batch_sizes: Sequence[int], reverse: bool
) -> tuple:
    """Returns ``(dgi (N, 3H), dgh (N, 3H), dh0, hprev)``: gradients of the input-side and
    hidden-side gate pre-activations (they differ in the ``n`` gate) and of ``h0``."""
    gates, ghn, hprev = saved
    hs = hprev.shape[1]
    dgi = np.empty_like(gates)
    dgh = np.empty_like(gates)
    dh = dhn.copy()
    for s, e, b in steps(batch_sizes, not reverse):
        g = gates[s:e]
        r, z, nt = g[:, :hs], g[:, hs : 2 * hs], g[:, 2 * hs :]
        hp = hprev[s:e]
        dht = dh[:b] + dy[s:e]
        di = dgi[s:e]
        dr, dz, dn = di[:, :hs], di[:, hs : 2 * hs], di[:, 2 * hs :]
        np.subtract(hp, nt, out=dz)
        dz *= dht
        dz *= z * (1 - z)
        np.subtract(1, z, out=dn)
        dn *= dht
        dn *= 1 - nt * nt
        np.multiply(dn, ghn[s:e], out=dr)
        dr *= r * (1 - r)
        dg = dgh[s:e]
        dg[:, : 2 * hs] = di[:, : 2 * hs]
        np.multiply(dn, r, out=dg[:, 2 * hs :])
        dhp = dg @ w_hh
        dhp += dht * z
        dh[:b] = dhp
    return dgi, dgh, dh, hprev
