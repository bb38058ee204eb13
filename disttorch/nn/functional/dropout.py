"""Dropout: zero entries (or whole channels) at random while training and scale the
rest by ``1 / (1 - p)``, so the expected value is unchanged; identity in eval mode.
Alpha dropout (for SELU networks) sets dropped entries to SELU's negative saturation and
applies the affine map that keeps mean and variance."""

from __future__ import annotations

import warnings
from typing import Callable

import numpy as np

from ..._random import _gen, _memory_order
from ..._tensor import Tensor
from ...autograd.function import Function
from ...kernels import torch_random as _kr
from ...kernels.threads import astype, elementwise
from ...ops.inplace import _inplace, in_own_memory
from ._channels_last import keeps_channels_last

__all__ = ["dropout", "dropout1d", "dropout2d", "dropout3d", "alpha_dropout", "feature_alpha_dropout"]


class DropoutFunction(Function):
    """``x * mask``; the mask (zeros and ``1 / (1 - p)``) has ``mask_shape``, which
    broadcasts over the entries of a channel for the channel-wise variants. The random
    draw is one sequence, as PyTorch's (its CPU ``bernoulli_`` is a serial loop over the
    generator), so the same for every thread count; turning it into the mask and applying
    that are split over the op's threads."""

    _raw, _own_16_bit = True, True  # the noise is in the input's dtype (bfloat16 included)
    _node_name = "MulBackward0"
    _profiled_as = staticmethod(  # PyTorch's operators: one draw per entry, or per channel
        lambda x, p, mask_shape, inplace=False: (
            ("aten::dropout" if mask_shape == x._data.shape else "aten::feature_dropout")
            + ("_" if inplace else "")
        )
    )

    @staticmethod
    def forward(ctx, x, p, mask_shape, inplace=False):
        a = x._data
        if p == 1:
            mask = np.zeros(mask_shape, dtype=a.dtype)
        else:  # PyTorch's noise: bernoulli_(1 - p).div_(1 - p) in the input's dtype, the
            # division in float32 for 16-bit floats (a bfloat16 input keeps 1.109375 for p=0.1)
            op = np.float64 if a.dtype == np.float64 else np.float32
            kept = a.dtype.type(op(1) / op(1 - p))
            mask = elementwise(np.where, _keep_mask(mask_shape, p, a), kept, a.dtype.type(0))
        ctx.mask = mask
        if inplace:  # into x's memory (``dropout_``: PyTorch's ``mul_`` by the noise)
            return np.multiply(a, mask, out=a)
        return elementwise(np.multiply, a, mask)

    @staticmethod
    def backward(ctx, g):
        return g * Tensor._make(ctx.mask), None, None, None


def _dropped(input: Tensor, p: float, mask_shape: tuple, inplace: bool) -> Tensor:
    """``input`` times a fresh mask of ``mask_shape``; ``inplace``: written into ``input``'s
    memory, ``input`` returned (as PyTorch's ``dropout_``)."""
    if not inplace:
        return DropoutFunction.apply(input, p, mask_shape)

    def run(write: bool) -> Callable[[Tensor], Tensor]:
        return lambda t: DropoutFunction.apply(t, p, mask_shape, write)

    return in_own_memory(input, run(True), run(False))


def _keep_mask(shape: tuple, p: float, like: np.ndarray) -> np.ndarray:
    """PyTorch's dropout draw: ``bernoulli_(1 - p)`` of the default generator (True = keep),
    into a mask of ``like``'s layout when it has ``like``'s shape (PyTorch's noise is
    ``empty_like(input)``, filled in memory order: a transposed input, a batch-first RNN's
    output, draws in its own order), else contiguous (the channel-wise noise)."""
    engine = _gen(None)
    if shape == like.shape and like.ndim > 1 and not like.flags.c_contiguous:
        return _memory_order(shape, like.strides, lambda n: _kr.bernoulli_scalar(engine, n, 1 - p))
    n = int(np.prod(shape, dtype=np.int64))
    return _kr.bernoulli_scalar(engine, n, 1 - p).reshape(shape)


def _check_p(p: float) -> None:
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


@keeps_channels_last
def dropout(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Zero each entry with probability ``p`` and scale the rest by ``1 / (1 - p)``
    (when ``training``); ``inplace``: written into ``input``, which is returned."""
    _check_p(p)
    if not training or p == 0:
        return input
    return _dropped(input, p, input._data.shape, inplace)


def _channel_dropout(
    input: Tensor, p: float, training: bool, spatial: int, name: str, inplace: bool = False
) -> Tensor:
    """Drop whole channels of a ``(N, C, *spatial)`` or unbatched ``(C, *spatial)`` input."""
    _check_p(p)
    shape = input._data.shape
    if len(shape) not in (spatial + 1, spatial + 2):
        raise RuntimeError(
            f"{name}: Expected {spatial + 1}D or {spatial + 2}D input, but received a {len(shape)}D input."
        )
    if not training or p == 0:
        return input
    lead = len(shape) - spatial
    return _dropped(input, p, shape[:lead] + (1,) * spatial, inplace)


def dropout1d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Zero whole channels of ``(N, C, L)`` / ``(C, L)`` inputs with probability ``p``."""
    return _channel_dropout(input, p, training, 1, "dropout1d", inplace)


def dropout2d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Zero whole channels of ``(N, C, H, W)`` inputs with probability ``p``.

    As in PyTorch: another number of dimensions warns (deprecated) and drops along the
    first two dimensions (a 2-D ``(N, C)`` input entry by entry); a 3-D input is taken as
    ``(N, C, L)`` (channel-wise 1-D dropout) with PyTorch's warning; fewer than 2
    dimensions raise RuntimeError.
    """
    _check_p(p)
    dim = input._data.ndim
    if dim not in (3, 4):
        warnings.warn(
            f"dropout2d: Received a {dim}-D input to dropout2d, which is deprecated and will result "
            "in an error in a future release. To retain the behavior and silence this warning, please "
            "use dropout instead. Note that dropout2d exists to provide channel-wise dropout on inputs "
            "with 2 spatial dimensions, a channel dimension, and an optional batch dimension (i.e. 3D "
            "or 4D inputs).",
            stacklevel=2,
        )
    if dim == 3:
        warnings.warn(
            "dropout2d: Received a 3D input to dropout2d and assuming that channel-wise 1D dropout "
            "behavior is desired - input is interpreted as shape (N, C, L), where C is the channel "
            "dim. This behavior will change in a future release to interpret the input as one without "
            "a batch dimension, i.e. shape (C, H, W). To maintain the 1D channel-wise dropout "
            "behavior, please switch to using dropout1d instead.",
            stacklevel=2,
        )
    if dim < 2:
        raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
    if not training or p == 0:
        return input
    return _dropped(input, p, input._data.shape[:2] + (1,) * (dim - 2), inplace)


def dropout3d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Zero whole channels of ``(N, C, D, H, W)`` / ``(C, D, H, W)`` inputs with probability ``p``.

    As in PyTorch: another number of dimensions warns (deprecated) and is taken as unbatched,
    dropping along the first dimension."""
    dim = input._data.ndim
    if dim in (4, 5):
        return _channel_dropout(input, p, training, 3, "dropout3d", inplace)
    warnings.warn(
        f"dropout3d: Received a {dim}-D input to dropout3d, which is deprecated and will result in an "
        "error in a future release. To retain the behavior and silence this warning, please use dropout "
        "instead. Note that dropout3d exists to provide channel-wise dropout on inputs with 3 spatial "
        "dimensions, a channel dimension, and an optional batch dimension (i.e. 4D or 5D inputs).",
        stacklevel=2,
    )
    _check_p(p)
    if dim == 0:
        raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
    if not training or p == 0:
        return input
    shape = input._data.shape
    return _dropped(input, p, shape[:1] + (1,) * (dim - 1) if dim > 1 else shape, inplace)


_SELU_SATURATION = 1.7580993408473766  # SELU's scale * alpha: dropped entries become -this


def _alpha_dropout(input: Tensor, p: float, training: bool, mask_shape: tuple, inplace: bool) -> Tensor:
    _check_p(p)
    if not training or p == 0:
        return input
    if inplace:
        return _inplace(input, lambda t: _alpha_dropout(t, p, training, mask_shape, False))
    if p == 1:
        return input * 0
    keep = Tensor._make(astype(_keep_mask(mask_shape, p, input._data), input._data.dtype))
    a = ((1 - p) * (1 + p * _SELU_SATURATION**2)) ** -0.5
    shift = (keep - 1) * (a * _SELU_SATURATION) + a * _SELU_SATURATION * p
    return input * (keep * a) + shift


def alpha_dropout(input: Tensor, p: float = 0.5, training: bool = False, inplace: bool = False) -> Tensor:
    """Alpha dropout: dropped entries take SELU's negative saturation value and the result
    is rescaled and shifted to keep zero mean and unit variance (self-normalising nets)."""
    return _alpha_dropout(input, p, training, input._data.shape, inplace)


def feature_alpha_dropout(
    input: Tensor, p: float = 0.5, training: bool = False, inplace: bool = False
) -> Tensor:
    """:func:`alpha_dropout` of whole channels of ``(N, C, *)`` input."""
    shape = input._data.shape
    return _alpha_dropout(input, p, training, shape[:2] + (1,) * (len(shape) - 2), inplace)
