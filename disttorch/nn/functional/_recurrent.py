"""One recurrent layer-direction over a whole (packed) sequence as ONE autograd Function.

``recurrent_layer`` runs an Elman RNN (tanh/relu), LSTM (optionally projected) or GRU layer in
one direction: the input projection of all time steps is one matrix product, the time loop
runs in NumPy (``kernels/rnn.py``) saving the gates, and backward through time returns the
gate gradients of every step, from which ``dX``, ``dW_ih``, ``dW_hh``, ``dW_hr`` and the bias
gradients are one matrix product (or column sum) each. The recurrent modules of
``nn.modules.rnn`` stack these per layer and direction.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..._tensor import Tensor
from ...autograd.function import Function
from ...kernels import rnn as K
from ...kernels.reductions import column_sum
from ...ops.shape import cat, stack
from ._numpy_backward import numpy_backward
from .dropout import dropout as _dropout

__all__ = ["RecurrentLayerFunction", "recurrent_layer", "recurrent_stack"]

# Sequences at least this long get their weights prepared once (sigmoid rows halved, W_hhᵀ
# made contiguous); shorter ones (a cell's single step) scale each step's gates instead.
_PREPARE_MIN_STEPS = 8
_GATES = {"RNN_TANH": 1, "RNN_RELU": 1, "LSTM": 4, "GRU": 3}


def _arr(t: Tensor | None) -> np.ndarray | None:
    return None if t is None else t._data


class RecurrentLayerFunction(Function):
    """``(x (N, I), h0 (B, P), c0 (B, H) or None, W_ih, W_hh, b_ih, b_hh, W_hr, mode,
    batch_sizes, reverse) -> (y (N, P), h_n (B, P)[, c_n (B, H)])`` over a packed sequence."""

    _raw = True

    @staticmethod
    def forward(ctx, x, h0, c0, w_ih, w_hh, b_ih, b_hh, w_hr, mode, batch_sizes, reverse):
        xa, wih, whh = x._data, w_ih._data, w_hh._data
        bih, bhh, whr = _arr(b_ih), _arr(b_hh), _arr(w_hr)
        scale = K.gate_scale(mode, whh.shape[0] // _GATES[mode], whh.dtype)
        post = None
        if len(batch_sizes) < _PREPARE_MIN_STEPS:  # a cell's step: use the weights as they are
            whh_t, post = whh.T, scale
        elif scale is not None:  # halve the sigmoid gates' rows once (see kernels/rnn.py)
            wih, whh_t = wih * scale[:, None], np.ascontiguousarray(whh.T * scale)
            bih, bhh = (None if b is None else b * scale for b in (bih, bhh))
        else:
            whh_t = np.ascontiguousarray(whh.T)
        if mode != "GRU" and bhh is not None:  # b_hh adds linearly: fold it into b_ih
            bih = bhh if bih is None else bih + bhh
        xw = xa @ wih.T
        step_bias = None  # LSTM adds the bias per step, while the step's gates are in cache
        if mode == "LSTM" and bih is not None:
            step_bias = bih if post is None else bih * post
        elif bih is not None:
            xw += bih
        if post is not None:
            xw *= post
        save = any(ctx.needs_input_grad)  # a backward may follow: keep what it needs
        if mode == "LSTM":
            y, hn, cn, saved = K.lstm_forward(
                xw, h0._data, c0._data, whh_t, whr, batch_sizes, reverse, post, save, step_bias
            )
            outs = (y, hn, cn)
        elif mode == "GRU":
            y, hn, saved = K.gru_forward(xw, h0._data, whh_t, bhh, batch_sizes, reverse, post)
            outs = (y, hn)
        else:
            y, hn, saved = K.rnn_forward(xw, h0._data, whh_t, batch_sizes, reverse, mode == "RNN_RELU")
            outs = (y, hn)
        ctx.kernel_saved, ctx.mode, ctx.batch_sizes, ctx.reverse = saved, mode, batch_sizes, reverse
        ctx.has_b, ctx.shapes = b_ih is not None, (h0._data.shape, None if c0 is None else c0._data.shape)
        ctx.save_for_backward(x, w_ih, w_hh, w_hr)
        ctx.set_materialize_grads(False)
        return outs

    @staticmethod
    def backward(ctx, gy, ghn, gcn=None):
        x, w_ih, w_hh, w_hr = ctx.saved_tensors
        mode, bs, rev = ctx.mode, ctx.batch_sizes, ctx.reverse
        need = ctx.needs_input_grad

        def grads(_):
            xa, wih, whh = x._data, w_ih._data, w_hh._data
            dt = xa.dtype
            h_shape, c_shape = ctx.shapes
            n = xa.shape[0]
            p = h_shape[1]
            dy = gy._data if gy is not None else np.zeros((n, p), dt)
            dhn = ghn._data if ghn is not None else np.zeros(h_shape, dt)
            dc0 = dwhr = None
            if mode == "LSTM":
                dcn = gcn._data if gcn is not None else np.zeros(c_shape, dt)
                whr = _arr(w_hr)
                dg, dh0, dc0, hprev, dh_out, hc = K.lstm_backward(
                    dy, dhn, dcn, ctx.kernel_saved, whh, whr, bs, rev
                )
                dgh = dg
                if whr is not None and need[7]:
                    dwhr = dh_out.T @ hc
            elif mode == "GRU":
                dg, dgh, dh0, hprev = K.gru_backward(dy, dhn, ctx.kernel_saved, whh, bs, rev)
            else:
                dg, dh0, hprev = K.rnn_backward(dy, dhn, ctx.kernel_saved, whh, bs, rev, mode == "RNN_RELU")
                dgh = dg
            dx = dg @ wih if need[0] else None
            dwih = dg.T @ xa if need[3] else None
            dwhh = dgh.T @ hprev if need[4] else None
            dbih = column_sum(dg) if ctx.has_b and need[5] else None
            dbhh = None
            if ctx.has_b and need[6]:  # b_hh adds as b_ih does except in GRU's n gate
                dbhh = dbih.copy() if dgh is dg and dbih is not None else column_sum(dgh)
            return (dx, dh0 if need[1] else None, dc0 if need[2] else None, dwih, dwhh, dbih, dbhh, dwhr)

        anchor = next(g for g in (gy, ghn, gcn) if g is not None)
        out = numpy_backward(f"{mode.lower()} layer", grads, anchor, x, w_ih, w_hh, w_hr)
        return (*out, None, None, None)


def recurrent_layer(
    mode: str,
    x: Tensor,
    h0: Tensor,
    c0: Tensor | None,
    w_ih: Tensor,
    w_hh: Tensor,
    b_ih: Tensor | None,
    b_hh: Tensor | None,
    w_hr: Tensor | None,
    batch_sizes: Sequence[int],
    reverse: bool = False,
) -> tuple:
    """Run one layer-direction of a recurrent network over a packed sequence.

    Args:
        mode: ``"RNN_TANH"``, ``"RNN_RELU"``, ``"LSTM"`` or ``"GRU"``.
        x: ``(N, I)``, the time steps' rows stacked (``N = sum(batch_sizes)``).
        h0: ``(B, P)`` initial hidden state (``B = batch_sizes[0]``); c0: ``(B, H)`` (LSTM).
        w_ih, w_hh, b_ih, b_hh, w_hr: the layer's parameters in PyTorch's layout.
        batch_sizes: the non-increasing number of sequences at each time step.
        reverse: run from the last time step to the first.

    Returns:
        ``(y (N, P), h_n (B, P))`` and, for LSTM, ``c_n (B, H)`` as a third element.
    """
    if mode not in _GATES:
        raise ValueError(f"Unknown mode '{mode}'")
    return RecurrentLayerFunction.apply(
        x, h0, c0, w_ih, w_hh, b_ih, b_hh, w_hr, mode, tuple(int(b) for b in batch_sizes), bool(reverse)
    )


def recurrent_stack(
    mode: str,
    x: Tensor,
    batch_sizes: Sequence[int],
    h0: Tensor,
    c0: Tensor | None,
    weights: Sequence[Sequence[Tensor]],
    num_layers: int,
    bidirectional: bool,
    has_biases: bool,
    dropout: float = 0.0,
    training: bool = False,
) -> tuple:
    """All layers and directions of a recurrent network over packed rows ``x (N, I)``.

    ``weights[layer * D + direction]`` is ``[w_ih, w_hh(, b_ih, b_hh)(, w_hr)]``; ``h0``/``c0``
    are ``(num_layers * D, B, ·)``. Dropout applies to every layer's output but the last
    while ``training``. Returns ``(y (N, D*P), h_n, c_n or None)``.
    """
    num_directions = 2 if bidirectional else 1
    hs, cs = [], []
    for layer in range(num_layers):
        outs = []
        for direction in range(num_directions):
            idx = layer * num_directions + direction
            w = weights[idx]
            b_ih, b_hh = (w[2], w[3]) if has_biases else (None, None)
            w_hr = w[-1] if len(w) in (3, 5) else None
            res = recurrent_layer(
                mode,
                x,
                h0[idx],
                None if c0 is None else c0[idx],
                w[0],
                w[1],
                b_ih,
                b_hh,
                w_hr,
                batch_sizes,
                reverse=direction == 1,
            )
            outs.append(res[0])
            hs.append(res[1])
            if c0 is not None:
                cs.append(res[2])
        x = outs[0] if num_directions == 1 else cat(outs, dim=1)
        if dropout > 0 and training and layer < num_layers - 1:
            x = _dropout(x, dropout, True)
    return x, stack(hs), stack(cs) if c0 is not None else None
