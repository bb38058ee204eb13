"""``pad``: grow (or, with negative amounts in constant mode, crop) the last dims of a
tensor with a constant, a reflection, the edge value, or wrap-around."""

from __future__ import annotations

from typing import Sequence

import numpy as np

from ..._tensor import Size, Tensor
from ...autograd.function import Function
from ...autograd.grad_reads import reads_inputs
from ...kernels.windows import pad_constant
from ...ops.dtype_rules import refuse_kernel
from ._axis_taps import AxisTaps
from ._channels_last import keeps_channels_last

__all__ = ["pad"]

_INDEX_MODES = {"reflect": "reflect", "replicate": "edge", "circular": "wrap"}


def _pairs(pad: Sequence[int], ndim: int) -> list[tuple[int, int]]:
    """(before, after) per dim of the input, from PyTorch's last-dim-first flat list (a
    tuple or list of ints, as its parser takes: not a tensor, a float or a bool)."""
    if not isinstance(pad, (tuple, list, Size)):
        raise TypeError(f"pad(): argument 'pad' (position 2) must be tuple of ints, not {type(pad).__name__}")
    for i, p in enumerate(pad):
        if isinstance(p, (bool, np.bool_)) or not isinstance(p, (int, np.integer, Tensor)):
            raise TypeError(
                f"pad(): argument 'pad' (position 2) must be tuple of ints, but found element of type "
                f"{type(p).__name__} at pos {i}"
            )
    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    if len(pad) // 2 > ndim:
        raise RuntimeError(
            "Padding length should be less than or equal to two times the input "
            "dimension but got padding length {} and input of dimension {}".format(len(pad), ndim)
        )
    pairs = [(0, 0)] * ndim
    for i in range(len(pad) // 2):
        pairs[ndim - 1 - i] = (int(pad[2 * i]), int(pad[2 * i + 1]))
    return pairs


class ConstantPad(Function):
    """Pad with ``value`` (negative amounts crop). Its adjoint is the same op with the
    amounts negated, so backward is ``ConstantPad(g, -pairs, 0)``."""

    _raw = True
    _node_name = "ConstantPadNdBackward0"

    @staticmethod
    def forward(ctx, x, pairs, value):
        a = x._data
        new_shape = tuple(n + lo + hi for n, (lo, hi) in zip(a.shape, pairs))
        if any(n < 0 for n in new_shape):
            raise RuntimeError(
                f"The input size {a.shape}, plus negative padding {pairs} resulted "
                f"in a negative output size, which is invalid."
            )
        ctx.pairs = pairs
        return pad_constant(a, pairs, value)

    @staticmethod
    def backward(ctx, g):
        return ConstantPad.apply(g, [(-lo, -hi) for lo, hi in ctx.pairs], 0), None, None


def _source_index(mode: str, shape: tuple, d: int, pair: tuple, n_padded: int) -> np.ndarray:
    """For each position of padded dim ``d``, the input position it copies. A negative
    amount crops. ``reflect`` and ``replicate`` pad the whole dim and then crop; ``circular``
    crops and then wraps what is left around, at most once (PyTorch's rules and messages)."""
    n, (lo, hi) = shape[d], pair
    size = n + lo + hi
    if mode == "circular":
        if lo > n or hi > n:
            raise RuntimeError("Padding value causes wrapping around more than once.")
        if size < 0:
            raise RuntimeError("Negative padding value is resulting in an empty dimension")
        kept = np.arange(n)[max(-lo, 0) : n - max(-hi, 0)]
        if max(lo, hi) > len(kept):
            raise RuntimeError("Padding value causes wrapping around more than once.")
        return np.concatenate([kept[len(kept) - max(lo, 0) :], kept, kept[: max(hi, 0)]])
    if mode == "reflect" and max(lo, hi) >= n:
        raise RuntimeError(
            f"Argument #4: Padding size should be less than the corresponding input dimension, but got: "
            f"padding ({lo}, {hi}) at dimension {d} of input {list(shape)}"
        )
    if size < (1 if n_padded == 1 else 0):
        name = "DHW"[d - len(shape) + 3]
        raise RuntimeError(f"input ({name}: {n}) is too small. Calculated output {name}: {size}")
    whole = np.pad(np.arange(n), (max(lo, 0), max(hi, 0)), mode=_INDEX_MODES[mode])
    return whole[max(-lo, 0) : len(whole) - max(-hi, 0)]


@keeps_channels_last
def pad(input: Tensor, pad: Sequence[int], mode: str = "constant", value: float | None = None) -> Tensor:
    """Pad ``input``. ``pad`` lists (before, after) amounts starting from the last dim:
    ``(left, right)`` pads the last dim, ``(left, right, top, bottom)`` the last two.

    Args:
        mode: ``'constant'`` (``value``, default 0; negative amounts crop),
            ``'reflect'`` (mirror without repeating the edge), ``'replicate'`` (repeat the
            edge) or ``'circular'`` (wrap around).
    """
    ndim = input._data.ndim
    if mode != "constant" and mode not in _INDEX_MODES:  # (checked first, as PyTorch's)
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    pairs = _pairs(pad, ndim)
    if mode == "constant":
        return ConstantPad.apply(input, pairs, 0 if value is None else value)
    if value:
        raise RuntimeError(f'Padding mode "{mode}" doesn\'t take in value argument')
    n_padded = len(pad) // 2
    if n_padded > 3 or ndim not in (n_padded + 1, n_padded + 2):  # PyTorch's kernels: 1-3D, batched or not
        raise NotImplementedError(
            f"Padding size {len(pad)} is not supported for {ndim}D input tensor.\n"
            "Supported combinations for non-constant padding:\n"
            "  - 2D or 3D input: padding size = 2 (pads last dimension)\n"
            "  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n"
            "  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)"
        )
    if mode in ("reflect", "replicate"):
        refuse_kernel(f"{'reflection' if mode == 'reflect' else 'replication'}_pad{n_padded}d", input, "b")
    shape = input._data.shape
    if mode == "replicate" and 0 in shape[ndim - n_padded :]:
        raise RuntimeError(
            f"Expected {n_padded + 1}D or {n_padded + 2}D (batch mode) tensor with possibly 0 batch size "
            f"and other non-zero dimensions for input, but got: {list(shape)}"
        )
    # Each padded dim is rebuilt by one gather along it (its adjoint sums the copies back).
    out = input
    for d in range(ndim - n_padded, ndim):
        if pairs[d] != (0, 0):
            out = AxisTaps.apply(out, d, [(_source_index(mode, shape, d, pairs[d], n_padded), None)])
    if out is input:
        return input.clone()
    return (
        out if mode == "circular" else reads_inputs(out)
    )  # (reflection/replication_pad's backward reads it)
