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
C-contiguous ``W_hhᵀ``, which BLAS multiplies fastest, in the form ``step_product.py`` measured
faster on this machine). The LSTM kernel takes a sigmoid as ``0.5 * tanh(x / 2) + 0.5``:
it takes ``xw`` and ``W_hhᵀ`` with the rows of the sigmoid gates already halved
(``gate_scale``), so one ``tanh`` covers all gates of a step; for a sequence of a step or two
(a cell) the caller instead passes the scale as ``post_scale``, applied to each step's
``h @ W_hhᵀ``, which spares preparing the weights. The GRU kernel follows PyTorch's
``gru_cell`` step by step, with ``kernels/sigmoid.py``'s ``sigmoid`` and ``vml.py``'s ``tanh``
(PyTorch's bits where those give them); so does the one-step LSTM kernel (an ``LSTMCell``)
with its ``lstm_cell``. Biases that add linearly
(``b_hh`` of RNN and LSTM) are folded into ``xw`` by the caller. Backward walks the steps in the opposite
order and returns the gate gradients of every step as one ``(N, G)`` array, so the caller
forms ``dX``, ``dW_ih``, ``dW_hh`` and the bias gradients with one matrix product each.

The LSTM kernels keep the time loop lean (profiled with ``benchmarks/layers.py``): a step reads
its input state as a view of the previous step's output rows (no state copies), the cell
state lives in two step-sized buffers, and what backward needs is little: the activated
gates stay where the input projection was, plus two ``(N, H)`` arrays of cell states (the
memory traffic of saving, not the arithmetic, is what a step's saving costs). The element-wise
arithmetic of an LSTM step is ``lstm_cell.py``'s: NumPy passes, or the same formulas compiled
by numba when it is installed (then a step's arithmetic is a few passes).

Gate order is PyTorch's: LSTM ``i, f, g, o``; GRU ``r, z, n``.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import numpy as np

from .lstm_cell import cell_arithmetic
from .sigmoid import sigmoid, sigmoid_grad
from .step_product import StepProduct
from .tanh_grad import tanh_grad
from .vml import tanh

__all__ = [
    "gate_scale",
    "gru_backward",
    "gru_forward",
    "lstm_backward",
    "lstm_cell_backward",
    "lstm_cell_forward",
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
    """Per gate row: 0.5 for LSTM's sigmoid gates ``i, f, o``, 1 for ``g``; None for the other
    modes (the GRU's gates take ``sigmoid`` itself). Multiply ``W_ih``, ``W_hh`` and the
    biases' rows by it before the LSTM forward kernel."""
    if mode != "LSTM":
        return None
    scale = np.full(4 * hidden, 0.5, dtype=dtype)
    scale[2 * hidden : 3 * hidden] = 1.0
    return scale


# ------------------------------------------------------------------------ Elman RNN
def rnn_forward(
    xw: np.ndarray,
    h0: np.ndarray,
    w_hh_t: np.ndarray,
    b_hh: np.ndarray | None,
    batch_sizes: Sequence[int],
    reverse: bool,
    relu: bool,
) -> tuple:
    """``h_t = act((h_{t-1} W_hhᵀ + b_hh) + xw_t)`` (``xw`` holding ``b_ih``), added in
    PyTorch's order and with its ``tanh``; returns ``(y (N, H), h_n, saved)``."""
    y = np.empty_like(xw)
    hprev = np.empty_like(xw)
    h = h0.copy()
    product = StepProduct(w_hh_t, h0.shape[0], len(batch_sizes))
    for s, e, b in steps(batch_sizes, reverse):
        hprev[s:e] = h[:b]
        pre = y[s:e]
        product(h[:b], pre)
        if b_hh is not None:
            pre += b_hh
        pre += xw[s:e]
        if relu:
            np.maximum(pre, 0, out=pre)
        else:
            pre[...] = tanh(pre)
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
    product = StepProduct(w_hh, dhn.shape[0], len(batch_sizes))
    for s, e, b in steps(batch_sizes, not reverse):
        g = dpre[s:e]
        np.add(dh[:b], dy[s:e], out=g)
        if relu:
            g *= y[s:e] > 0
        else:
            g *= 1 - y[s:e] * y[s:e]
        product(g, dh[:b])
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
    save: bool = True,
    bias: np.ndarray | None = None,
) -> tuple:
    """One LSTM layer-direction (``xw``, ``w_hh_t`` and ``bias`` prescaled by ``gate_scale``;
    ``bias = b_ih + b_hh``, added per step while a step's gates are in cache); returns
    ``(y (N, P), h_n (B, P), c_n (B, H), saved)`` where ``P`` is the projection size (``H``
    without projection). ``xw`` is the caller's temporary: it is overwritten.

    With ``save`` (a backward will follow; ``saved`` is None otherwise) the steps leave what
    backward needs: the activated gates in place of ``xw``, each step's input cell state and
    ``tanh`` of its new one (``(N, H)`` each), its input state ``h_{t-1}``, and with projection
    ``o * tanh(c)``. The cell state lives in two step-sized buffers. The element-wise
    arithmetic of a step is ``kernels/lstm_cell.py``'s (compiled when numba is installed)."""
    n, hs = xw.shape[0], c0.shape[1]
    bmax, p = h0.shape
    dt = xw.dtype
    cell = cell_arithmetic(bmax, hs, dt, len(batch_sizes))
    product = StepProduct(w_hh_t, bmax, len(batch_sizes))
    rec = np.empty((bmax, 4 * hs), dtype=dt)  # h @ W_hhᵀ of a step
    c_buf = np.empty((2, bmax, hs), dtype=dt)  # the cell state before / after a step
    h_join = np.empty_like(h0)  # reverse direction: input states of a step where sequences join
    y = np.empty((n, p), dtype=dt)
    hc = np.empty((n, hs), dtype=dt) if w_hr is not None else None  # o * tanh(c) before projection
    w_r = np.ascontiguousarray(w_hr.T) if w_hr is not None else None
    if save:
        cprev = np.empty((n, hs), dtype=dt)
        tcs = np.empty((n, hs), dtype=dt)
        hprev = np.empty((n, p), dtype=dt)
    else:
        tc_buf = np.empty((bmax, hs), dtype=dt)
    h_n, c_n = h0.copy(), c0.copy()  # rows are replaced as their sequences finish
    order = list(steps(batch_sizes, reverse))
    c_buf[1, :bmax] = c0
    ps = pb = None
    for k, (s, e, b) in enumerate(order):
        cp, cc = c_buf[(k + 1) % 2], c_buf[k % 2]  # k = 0 reads c_buf[1] (c0)
        if ps is None:
            h = h0[:b]
        elif pb >= b:
            h = y[ps : ps + b]
        else:  # sequences join (reverse direction): their states start from h0, c0
            h = h_join[:b]
            h[:pb] = y[ps : ps + pb]
            h[pb:] = h0[pb:b]
            cp[pb:b] = c0[pb:b]
        c = cp[:b]
        ps, pb = s, b
        g = xw[s:e]
        hw = rec[:b]
        product(h, hw)
        if post_scale is not None:
            hw *= post_scale
        cell.gates(g, hw, bias)
        np.tanh(g, out=g)
        ct = cc[:b]
        cell.state(g, c, ct)
        tc = tcs[s:e] if save else tc_buf[:b]
        np.tanh(ct, out=tc)
        hcur = y[s:e] if w_r is None else hc[s:e]
        cell.output(g, tc, hcur)
        if save:
            hprev[s:e] = h
            cprev[s:e] = c
        if w_r is not None:
            np.matmul(hcur, w_r, out=y[s:e])
        b_next = order[k + 1][2] if k + 1 < len(order) else 0
        if b_next < b:  # rows b_next: have had their last step
            h_n[b_next:b] = y[s + b_next : e]
            c_n[b_next:b] = ct[b_next:]
    saved = (xw, cprev, tcs, hprev, hc) if save else None
    return y, h_n, c_n, saved


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
    gates, cprev, tcs, hprev, hc = saved
    hs = cprev.shape[1]
    bmax = dcn.shape[0]
    cell = cell_arithmetic(bmax, hs, gates.dtype, len(batch_sizes))
    dgates = np.empty_like(gates)
    dh_out = np.empty_like(hprev) if w_hr is not None else None
    dh, dc = dhn.copy(), dcn.copy()
    dht_buf = np.empty_like(dh)
    product = StepProduct(w_hh, bmax, len(batch_sizes))
    for s, e, b in steps(batch_sizes, not reverse):
        dht = dht_buf[:b]
        np.add(dh[:b], dy[s:e], out=dht)
        if w_hr is not None:
            dh_out[s:e] = dht
            dht = dht @ w_hr
        d = dgates[s:e]
        cell.gates_grad(dht, gates[s:e], cprev[s:e], tcs[s:e], dc[:b], d)
        product(d, dh[:b])
    return dgates, dh, dc, hprev, dh_out, hc


def lstm_cell_forward(
    xw: np.ndarray, h0: np.ndarray, c0: np.ndarray, w_hh_t: np.ndarray, b_hh: np.ndarray | None
) -> tuple:
    """One LSTM step in PyTorch's composition (its ``lstm_cell``): with ``xw = x W_ihᵀ + b_ih``
    and ``gates = (h W_hhᵀ + b_hh) + xw``, ``i, f, o = sigmoid(...)``, ``g = tanh(...)``,
    ``c' = f * c + i * g``, ``h' = o * tanh(c')``, each rounded as PyTorch's kernels round it
    (unlike :func:`lstm_forward`, no halved weights nor folded biases). Returns ``(h', c',
    saved)``; ``xw`` (the caller's temporary) is overwritten with the activated gates."""
    b, hs = c0.shape
    gates = np.empty_like(xw)
    StepProduct(w_hh_t, b, 1)(h0, gates)
    if b_hh is not None:
        gates += b_hh
    gates += xw
    blocks = gates.reshape(b, 4, hs)
    # PyTorch's sigmoid of each gate walks the gate's rows: i's, f's and o's rows, gathered
    ifo = blocks[:, [0, 1, 3]]
    blocks[:, [0, 1, 3]] = sigmoid(ifo.reshape(3 * b, hs), rows=True).reshape(b, 3, hs)
    blocks[:, 2] = tanh(blocks[:, 2])
    i, f, g, o = (blocks[:, k] for k in range(4))
    c = f * c0
    c += i * g
    tc = tanh(c)
    return o * tc, c, (gates, c0, tc)


def lstm_cell_backward(dh: np.ndarray, dc: np.ndarray, saved: tuple) -> np.ndarray:
    """The gate pre-activation gradients ``(B, 4H)`` of :func:`lstm_cell_forward`'s step from
    those of ``h'`` and ``c'``, formed as PyTorch's autograd forms them; ``dc`` becomes the
    gradient of ``c`` (in place)."""
    gates, c0, tc = saved
    b, hs = c0.shape
    i, f, g, o = (gates[:, k * hs : (k + 1) * hs] for k in range(4))
    d = np.empty_like(gates)
    di, df, dg, do = (d[:, k * hs : (k + 1) * hs] for k in range(4))
    dc += tanh_grad(dh * o, tc)  # the cell state's two gradients (either order: two terms)
    sigmoid_grad(dh * tc, o, do)
    sigmoid_grad(dc * g, i, di)
    sigmoid_grad(dc * c0, f, df)
    dg[...] = tanh_grad(dc * i, g)
    dc *= f
    return d


# ------------------------------------------------------------------------------- GRU
def gru_forward(
    xw: np.ndarray,
    h0: np.ndarray,
    w_hh_t: np.ndarray,
    b_hh: np.ndarray | None,
    batch_sizes: Sequence[int],
    reverse: bool,
) -> tuple:
    """One GRU layer-direction in PyTorch's composition (its ``gru_cell``): with ``xw = x W_ihᵀ
    + b_ih`` and ``gh = h W_hhᵀ + b_hh``, ``r = sigmoid(gh_r + xw_r)``, ``z = sigmoid(gh_z +
    xw_z)``, ``n = tanh(xw_n + gh_n * r)``, ``h' = (h - n) * z + n``, each rounded as PyTorch's
    kernels round it. Returns ``(y (N, H), h_n, saved)``; ``xw`` (the caller's temporary) is
    overwritten with the activations of ``r, z, n``."""
    n, hs = xw.shape[0], h0.shape[1]
    gates = xw
    ghn = np.empty((n, hs), dtype=xw.dtype)  # W_hn h + b_hn (before the reset gate)
    hprev = np.empty((n, hs), dtype=xw.dtype)
    y = np.empty((n, hs), dtype=xw.dtype)
    rec = np.empty((h0.shape[0], 3 * hs), dtype=xw.dtype)  # h @ W_hhᵀ (+ b_hh) of one step
    rn = np.empty_like(h0)  # (W_hn h + b_hn) * r of one step
    h = h0.copy()
    product = StepProduct(w_hh_t, h0.shape[0], len(batch_sizes))
    for s, e, b in steps(batch_sizes, reverse):
        hp = h[:b]
        hprev[s:e] = hp
        gh = rec[:b]
        product(hp, gh)
        if b_hh is not None:
            gh += b_hh
        g = gates[s:e]
        rz = g[:, : 2 * hs]
        rz += gh[:, : 2 * hs]
        # PyTorch's sigmoid of each gate walks the gate's rows: r's and z's rows, gathered
        rz[...] = sigmoid(np.ascontiguousarray(rz).reshape(2 * b, hs), rows=True).reshape(b, 2 * hs)
        gn = ghn[s:e]
        gn[...] = gh[:, 2 * hs :]
        nt = g[:, 2 * hs :]
        np.multiply(gn, g[:, :hs], out=rn[:b])
        nt += rn[:b]
        nt[...] = tanh(nt)
        yt = y[s:e]
        np.subtract(hp, nt, out=yt)
        yt *= g[:, hs : 2 * hs]
        yt += nt
        h[:b] = yt
    return y, h, (gates, ghn, hprev)


def gru_backward(
    dy: np.ndarray, dhn: np.ndarray, saved: tuple, w_hh: np.ndarray, batch_sizes: Sequence[int], reverse: bool
) -> tuple:
    """Returns ``(dgi (N, 3H), dgh (N, 3H), dh0, hprev)``: gradients of the input-side and
    hidden-side gate pre-activations (they differ in the ``n`` gate) and of ``h0``, each step's
    formed as PyTorch's autograd forms it through ``gru_forward``'s composition: a state's
    gradient adds the output's, then that through ``h - n``, then that through ``W_hh``."""
    gates, ghn, hprev = saved
    hs = hprev.shape[1]
    dgi = np.empty_like(gates)
    dgh = np.empty_like(gates)
    dh = dhn.copy()  # through W_hh (h_n's gradient until a step writes the row)
    dhz = np.zeros_like(dh)  # through h - n
    dht_buf = np.empty_like(dh)
    tmp = np.empty_like(dh)
    product = StepProduct(w_hh, dhn.shape[0], len(batch_sizes))
    for s, e, b in steps(batch_sizes, not reverse):
        g = gates[s:e]
        r, z, nt = g[:, :hs], g[:, hs : 2 * hs], g[:, 2 * hs :]
        dht = dht_buf[:b]
        np.add(dy[s:e], dhz[:b], out=dht)
        dht += dh[:b]
        t = tmp[:b]
        di = dgi[s:e]
        dr, dz, dn = di[:, :hs], di[:, hs : 2 * hs], di[:, 2 * hs :]
        np.subtract(hprev[s:e], nt, out=t)
        t *= dht  # the gradient of z
        sigmoid_grad(t, z, dz)
        np.multiply(dht, z, out=dhz[:b])  # of h - n
        np.subtract(dht, dhz[:b], out=t)  # of n
        dn[...] = tanh_grad(t, nt)
        np.multiply(dn, ghn[s:e], out=t)  # of r
        sigmoid_grad(t, r, dr)
        dg = dgh[s:e]
        dg[:, : 2 * hs] = di[:, : 2 * hs]
        np.multiply(dn, r, out=dg[:, 2 * hs :])
        product(dg, dh[:b])
    dh += dhz
    return dgi, dgh, dh, hprev
