"""One recurrent layer-direction over a whole (packed) sequence as ONE autograd Function.

``recurrent_layer`` runs an Elman RNN (tanh/relu), LSTM (optionally projected) or GRU layer in
one direction: the input projection of all time steps is one matrix product, the time loop
runs in NumPy (``kernels/rnn.py``) saving the gates, and backward through time returns the
gate gradients of every step, from which ``dX``, ``dW_ih``, ``dW_hh``, ``dW_hr`` and the bias
gradients are one matrix product (or column sum) each. The recurrent modules of
``nn.modules.rnn`` stack these per layer and direction.

Each layer also names the PyTorch CPU kernel it stands for (``kernel``), so that
``torch.utils.flop_counter`` counts the matrix products that kernel runs
(:func:`layer_products`): ``"rows"``, the input projection of all steps as one product over
contiguous rows then one product of the hidden state per step (``addmm`` with biases, else
``mm``); ``"strided"``, the same over a padded input that is not contiguous time-major
(``batch_first``), whose projection is an ``mm`` and a separate bias add; ``"onednn"``,
PyTorch's fused float32 LSTM layer, one operator whose products are not counted.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ... import _dtype
from ..._tensor import Tensor
from ...autograd.function import Function
from ...backends import mkldnn as _mkldnn
from ...kernels import rnn as K
from ...kernels.reductions import column_sum
from ...ops import aten
from ...ops.shape import cat, stack
from ._numpy_backward import numpy_backward
from .dropout import dropout as _dropout

__all__ = [
    "RecurrentLayerFunction",
    "layer_products",
    "padded_kernel",
    "recurrent_layer",
    "recurrent_stack",
    "runs_onednn",
]

# Sequences at least this long get their weights prepared once (sigmoid rows halved, W_hhᵀ
# made contiguous); shorter ones (a cell's single step) scale each step's gates instead.
_PREPARE_MIN_STEPS = 8
_GATES = {"RNN_TANH": 1, "RNN_RELU": 1, "LSTM": 4, "GRU": 3}
_KERNELS = ("rows", "strided", "onednn")


def _arr(t: Tensor | None) -> np.ndarray | None:
    return None if t is None else t._data


class RecurrentLayerFunction(Function):
    """``(x (N, I), h0 (B, P), c0 (B, H) or None, W_ih, W_hh, b_ih, b_hh, W_hr, mode,
    batch_sizes, reverse, kernel) -> (y (N, P), h_n (B, P)[, c_n (B, H)])`` over a packed
    sequence."""

    _raw = True

    @staticmethod
    def forward(ctx, x, h0, c0, w_ih, w_hh, b_ih, b_hh, w_hr, mode, batch_sizes, reverse, kernel):
        xa, wih, whh = x._data, w_ih._data, w_hh._data
        bih, bhh, whr = _arr(b_ih), _arr(b_hh), _arr(w_hr)
        ctx.cell = cell = mode == "LSTM" and len(batch_sizes) == 1 and whr is None and kernel != "onednn"
        if cell:  # one step as PyTorch's lstm_cell rounds it (its oneDNN layer rounds otherwise)
            xw = xa @ wih.T
            if bih is not None:
                xw += bih
            hn, cn, ctx.kernel_saved = K.lstm_cell_forward(xw, h0._data, c0._data, whh.T, bhh)
            ctx.mode, ctx.batch_sizes, ctx.reverse = mode, batch_sizes, reverse
            ctx.has_b, ctx.shapes = b_ih is not None, (h0._data.shape, c0._data.shape)
            ctx.save_for_backward(x, w_ih, w_hh, w_hr, h0)
            ctx.set_materialize_grads(False)
            return hn, hn.copy(), cn
        scale = K.gate_scale(mode, whh.shape[0] // _GATES[mode], whh.dtype)
        post = None
        if len(batch_sizes) < _PREPARE_MIN_STEPS:  # a cell's step: use the weights as they are
            whh_t, post = whh.T, scale
        elif scale is not None:  # halve the sigmoid gates' rows once (see kernels/rnn.py)
            wih, whh_t = wih * scale[:, None], np.ascontiguousarray(whh.T * scale)
            bih, bhh = (None if b is None else b * scale for b in (bih, bhh))
        else:
            whh_t = np.ascontiguousarray(whh.T)
        if mode == "LSTM" and bhh is not None:  # b_hh adds linearly: fold it into b_ih
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
            y, hn, saved = K.gru_forward(xw, h0._data, whh_t, bhh, batch_sizes, reverse)
            outs = (y, hn)
        else:
            y, hn, saved = K.rnn_forward(xw, h0._data, whh_t, bhh, batch_sizes, reverse, mode == "RNN_RELU")
            outs = (y, hn)
        ctx.kernel_saved, ctx.mode, ctx.batch_sizes, ctx.reverse = saved, mode, batch_sizes, reverse
        ctx.has_b, ctx.shapes = b_ih is not None, (h0._data.shape, None if c0 is None else c0._data.shape)
        ctx.save_for_backward(x, w_ih, w_hh, w_hr)
        ctx.set_materialize_grads(False)
        return outs

    @staticmethod
    def backward(ctx, gy, ghn, gcn=None):
        x, w_ih, w_hh, w_hr, *h0 = ctx._checked_saved()
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
            if ctx.cell:
                dcn = gcn._data.copy() if gcn is not None else np.zeros(c_shape, dt)
                dg = dgh = K.lstm_cell_backward(dy + dhn, dcn, ctx.kernel_saved)
                dh0, dc0, hprev = dg @ whh, dcn, h0[0]._data
            elif mode == "LSTM":
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
        return (*out, None, None, None, None)


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
    kernel: str = "rows",
) -> tuple:
    """Run one layer-direction of a recurrent network over a packed sequence.

    Args:
        mode: ``"RNN_TANH"``, ``"RNN_RELU"``, ``"LSTM"`` or ``"GRU"``.
        x: ``(N, I)``, the time steps' rows stacked (``N = sum(batch_sizes)``).
        h0: ``(B, P)`` initial hidden state (``B = batch_sizes[0]``); c0: ``(B, H)`` (LSTM).
        w_ih, w_hh, b_ih, b_hh, w_hr: the layer's parameters in PyTorch's layout.
        batch_sizes: the non-increasing number of sequences at each time step.
        reverse: run from the last time step to the first.
        kernel: the PyTorch CPU kernel the layer stands for when its products are counted
            (``"rows"``, ``"strided"`` or ``"onednn"``, see the module's header).

    Returns:
        ``(y (N, P), h_n (B, P))`` and, for LSTM, ``c_n (B, H)`` as a third element.
    """
    if mode not in _GATES:
        raise ValueError(f"Unknown mode '{mode}'")
    if kernel not in _KERNELS:
        raise ValueError(f"Unknown recurrent kernel '{kernel}', expected one of {_KERNELS}")
    sizes = tuple(int(b) for b in batch_sizes)
    return RecurrentLayerFunction.apply(
        x, h0, c0, w_ih, w_hh, b_ih, b_hh, w_hr, mode, sizes, bool(reverse), kernel
    )


def layer_products(args: tuple) -> list[tuple[object, int]]:
    """The matrix products one :class:`RecurrentLayerFunction` call computes, as PyTorch's CPU
    kernel for the layer runs them: ``[(aten op, flops), ...]`` from the call's arguments.

    Over ``N`` rows (``sum(batch_sizes)``), ``G`` gates of ``H`` units and a hidden state of
    width ``P``: the input projection ``2·N·I·G·H``, the hidden products ``2·N·P·G·H`` (one per
    step, each over that step's batch), and an LSTM's projection ``2·N·H·P``.
    """
    x, _, _, w_ih, w_hh, b_ih, b_hh, w_hr, _, _, _, kernel = args
    if kernel == "onednn":
        return []
    rows, gates_h, width = x.shape[0], w_hh.shape[0], w_hh.shape[1]
    with_bias = aten.addmm if b_ih is not None else aten.mm
    products = [
        (aten.mm if kernel == "strided" else with_bias, 2 * rows * w_ih.shape[1] * gates_h),
        (aten.addmm if b_hh is not None else aten.mm, 2 * rows * width * gates_h),
    ]
    if w_hr is not None:
        products.append((aten.mm, 2 * rows * w_hr.shape[1] * w_hr.shape[0]))
    return products


def runs_onednn(mode: str, dtype: _dtype.dtype, projected: bool) -> bool:
    """Whether PyTorch's CPU build runs a recurrent network over a padded input as its fused
    oneDNN layer: a float32 LSTM without projection, while ``torch.backends.mkldnn`` is enabled."""
    return mode == "LSTM" and not projected and dtype == _dtype.float32 and bool(_mkldnn.enabled)


def padded_kernel(mode: str, x: Tensor, projected: bool) -> str:
    """The PyTorch CPU kernel of the first layer over the padded time-major input ``x (T, B, I)``."""
    if runs_onednn(mode, x.dtype, projected):
        return "onednn"
    return "rows" if x.is_contiguous() else "strided"


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
    kernel: str = "rows",
) -> tuple:
    """All layers and directions of a recurrent network over packed rows ``x (N, I)``.

    ``weights[layer * D + direction]`` is ``[w_ih, w_hh(, b_ih, b_hh)(, w_hr)]``; ``h0``/``c0``
    are ``(num_layers * D, B, ·)``. Dropout applies to every layer's output but the last
    while ``training``. ``kernel`` is the first layer's (see :func:`recurrent_layer`); the
    layers above read contiguous rows. Returns ``(y (N, D*P), h_n, c_n or None)``.
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
                kernel=kernel,
            )
            outs.append(res[0])
            hs.append(res[1])
            if c0 is not None:
                cs.append(res[2])
        x = outs[0] if num_directions == 1 else cat(outs, dim=1)
        kernel = "onednn" if kernel == "onednn" else "rows"
        if dropout > 0 and training and layer < num_layers - 1:
            x = _dropout(x, dropout, True)
    return x, stack(hs), stack(cs) if c0 is not None else None
