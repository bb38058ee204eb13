"""Shared plumbing for the fused layer ops of ``nn.functional`` (convolution, pooling,
normalisation, attention): the once-differentiable NumPy backward node, dtype checks, and
the sliding-window helpers that convolution and pooling are built on.

These ops compute their backward in NumPy from what forward saved (im2col columns,
argmax indices, normalised activations), which is much faster than composing the
gradient from many small tensor ops. ``numpy_backward`` runs such a backward as a graph
node of its own: in an ordinary ``backward()`` it costs one call; under
``create_graph=True`` it records a node that refuses a second differentiation with a
clear error, instead of silently returning gradients that do not depend on the inputs.
"""
from __future__ import annotations

from typing import Callable

import numpy as np
from numpy.lib.stride_tricks import as_strided

from ..._tensor import Tensor
from ...autograd.function import Function

__all__ = ["numpy_backward", "dtype_name", "check_same_dtype", "column_sum", "windows",
           "window_range", "window_slices", "pad_spatial", "crop_index"]


class _NumpyBackward(Function):
    """Node for a fused op's NumPy backward (once differentiable)."""

    _raw = True

    @staticmethod
    def forward(ctx, fn, name, grad, *depends_on):
        ctx.op_name = name
        return fn(grad._data)

    @staticmethod
    def backward(ctx, *grads):
        raise RuntimeError(f"double backward through {ctx.op_name} is not supported: its "
                           f"backward is a fused NumPy kernel (differentiate it once)")


def numpy_backward(name: str, fn: Callable[[np.ndarray], tuple], grad: Tensor,
                   *depends_on: Tensor | None) -> tuple:
    """Call ``fn(grad_array)`` (returning one array or None per forward input) and wrap the
    results as tensors. ``depends_on`` lists the saved tensors the gradients are functions
    of (weights, inputs): under ``create_graph`` the results then require grad, and
    differentiating them raises an error naming ``name``."""
    return _NumpyBackward.apply(fn, name, grad, *depends_on)


_SCALAR_NAMES = {"float16": "Half", "float32": "Float", "float64": "Double", "bfloat16": "BFloat16"}


def dtype_name(a: np.ndarray) -> str:
    """PyTorch's scalar-type name of an array's dtype (``Float``, ``Double``, ``Half``...)."""
    return _SCALAR_NAMES.get(a.dtype.name, a.dtype.name.capitalize())


def check_same_dtype(x: np.ndarray, other: np.ndarray, what: str) -> None:
    """Raise PyTorch's message when ``other`` (weight, bias, ...) differs in dtype from ``x``."""
    if other.dtype != x.dtype:
        raise RuntimeError(f"expected scalar type {dtype_name(x)} but found {dtype_name(other)} "
                           f"(input is {x.dtype}, {what} is {other.dtype})")


def column_sum(a: np.ndarray) -> np.ndarray:
    """Sum over the rows of ``a`` ``(R, D)``: a vector-matrix product (BLAS, one read of
    ``a``), several times faster than ``a.sum(0)``, whose NumPy loop strides across rows."""
    return np.ones(a.shape[0], dtype=a.dtype) @ a


# ---------------------------------------------------------------------- sliding windows
def windows(xp: np.ndarray, kernel: tuple, stride: tuple, dilation: tuple,
            out: tuple) -> np.ndarray:
    """A read-only strided view of the windows of ``xp`` ``(N, C, *spatial)``:
    ``(N, C, *kernel, *out)``, no copy. Kernel axes step by ``dilation``, output axes by
    ``stride``."""
    s = xp.strides
    k_strides = tuple(a * b for a, b in zip(s[2:], dilation))
    o_strides = tuple(a * b for a, b in zip(s[2:], stride))
    return as_strided(xp, xp.shape[:2] + kernel + out, s[:2] + k_strides + o_strides,
                      writeable=False)


def window_range(offset: int, stride: int, dilation: int, out: int) -> slice:
    """Along one spatial dim: the positions holding kernel element ``offset`` of each of
    the ``out`` windows."""
    start = offset * dilation
    return slice(start, start + stride * (out - 1) + 1, stride)


def window_slices(offset: tuple, stride: tuple, dilation: tuple, out: tuple) -> tuple:
    """Index of ``xp`` ``(N, C, *spatial)`` selecting, for every output position, the input
    element at kernel ``offset``: shape ``(N, C, *out)``. Adding into these slices for every
    offset is the adjoint of the window view (col2im)."""
    return (slice(None), slice(None)) + tuple(
        window_range(k, st, dil, o) for k, st, dil, o in zip(offset, stride, dilation, out))


def pad_spatial(x: np.ndarray, pads: tuple, value: float = 0.0) -> np.ndarray:
    """``x`` ``(N, C, *spatial)`` padded with ``value`` by ``pads`` ``((lo, hi), ...)``
    (``x`` itself when there is no padding)."""
    if not any(lo or hi for lo, hi in pads):
        return x
    shape = x.shape[:2] + tuple(s + lo + hi for s, (lo, hi) in zip(x.shape[2:], pads))
    xp = np.full(shape, value, dtype=x.dtype)
    xp[crop_index(x.shape[2:], pads)] = x
    return xp


def crop_index(inner: tuple, pads: tuple) -> tuple:
    """Index of the unpadded region (spatial size ``inner``) inside a padded array."""
    return (slice(None), slice(None)) + tuple(slice(lo, lo + s) for s, (lo, _) in zip(inner, pads))
