"""``torch.gradient``: partial derivatives of sampled values by finite differences.

Second-order central differences inside; first- or second-order one-sided differences at
the two ends (``edge_order``); uniform spacing (a number per dimension) or sample
coordinates (a 1-D tensor per dimension, possibly uneven). The result is built from slices
of ``input`` and tensor arithmetic, so it is differentiable with respect to ``input``.
"""

from __future__ import annotations

from numbers import Number
from typing import Any, Sequence

import numpy as np

from .. import _dtype
from .._tensor import Tensor
from ._helpers import wrap_dim
from .shape import cat

__all__ = ["gradient"]

TENSOR_METHODS = ()


def _dims(dim: Any, ndim: int) -> list:
    dims = list(range(ndim)) if dim is None else [dim] if isinstance(dim, (int, np.integer)) else list(dim)
    dims = [wrap_dim(int(d), ndim) for d in dims]
    for d in dims:
        if dims.count(d) > 1:
            raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
    return dims


def _spacings(spacing: Any, dim: Any, dims: list, ndim: int) -> list:
    """One entry per differentiated dim: a number (uniform step) or a 1-D float64 array of
    coordinates."""
    if isinstance(spacing, Tensor):
        raise TypeError(
            "gradient(): argument 'spacing' must be a number or a tuple of numbers or of 1-D tensors, "
            "not a Tensor (wrap the coordinates in a tuple: spacing=(coords,))"
        )
    if isinstance(spacing, (Number, np.number)) and not isinstance(spacing, bool):
        return [spacing] * len(dims)
    if not isinstance(spacing, Sequence):
        raise TypeError(
            f"gradient(): argument 'spacing' must be a number or a tuple, not {type(spacing).__name__}"
        )
    if len(spacing) != len(dims):
        if dim is None:
            raise RuntimeError(
                "torch.gradient expected spacing to be unspecified, a scalar, or a list of length equal "
                f"to 'self.dim() = {ndim}', since dim argument was not given, but got a list of length "
                f"{len(spacing)}"
            )
        raise RuntimeError(
            "torch.gradient expected spacing to be unspecified, a scalar or it's spacing and dim "
            f"arguments to have the same length, but got a spacing argument of length {len(spacing)} "
            f"and a dim argument of length {len(dims)}."
        )
    if 0 < sum(isinstance(s, Tensor) for s in spacing) < len(spacing):
        raise TypeError("gradient(): spacing must hold only numbers or only 1-D tensors, not both")
    out = []
    for s in spacing:
        if isinstance(s, Tensor):
            if s._data.ndim != 1:
                raise RuntimeError(
                    "torch.gradient expected each element of spacing to have one dimension, but got an "
                    f"element with {s._data.ndim} dimensions!"
                )
            out.append(s._data)
        else:
            out.append(s)
    return out


def _part(x: Tensor, d: int, start: int, stop: int | None) -> Tensor:
    return x[(slice(None),) * d + (slice(start, stop),)]


def _along(coef: np.ndarray, d: int, ndim: int, dt: np.dtype) -> Tensor:
    """Coefficients laid along dim ``d`` (broadcasting over the others)."""
    shape = [1] * ndim
    shape[d] = coef.size
    return Tensor._make(coef.reshape(shape).astype(dt, copy=False))


def _uniform(x: Tensor, d: int, h: Any, edge_order: int) -> Tensor:
    inner = (_part(x, d, 2, None) - _part(x, d, 0, -2)) / (2 * h)
    f0, f1, fn, fm = _part(x, d, 0, 1), _part(x, d, 1, 2), _part(x, d, -1, None), _part(x, d, -2, -1)
    if edge_order == 1:
        first, last = (f1 - f0) / h, (fn - fm) / h
    else:
        f2, fl = _part(x, d, 2, 3), _part(x, d, -3, -2)
        first = (-1.5 * f0 + 2.0 * f1 - 0.5 * f2) / h
        last = (0.5 * fl - 2.0 * fm + 1.5 * fn) / h
    return cat([first, inner, last], d)


def _coordinates(x: Tensor, d: int, coords: np.ndarray, edge_order: int) -> Tensor:
    if coords.size != x._data.shape[d]:
        raise RuntimeError(
            f"torch.gradient expected each tensor in spacing to have as many elements as the dimension "
            f"it describes: {coords.size} coordinates for dimension {d} of size {x._data.shape[d]}"
        )
    dt = np.result_type(x._data.dtype, coords.dtype) if coords.dtype.kind == "f" else x._data.dtype
    h = np.diff(coords.astype(np.float64))
    nd = x._data.ndim
    h1, h2 = h[:-1], h[1:]
    a, b, c = -h2 / (h1 * (h1 + h2)), (h2 - h1) / (h1 * h2), h1 / (h2 * (h1 + h2))
    inner = (
        _part(x, d, 0, -2) * _along(a, d, nd, dt)
        + _part(x, d, 1, -1) * _along(b, d, nd, dt)
        + _part(x, d, 2, None) * _along(c, d, nd, dt)
    )
    if edge_order == 1:
        ends = [((0, 1, -1.0 / h[0]), (1, 2, 1.0 / h[0])), ((-2, -1, -1.0 / h[-1]), (-1, None, 1.0 / h[-1]))]
    else:
        p, q = h[0], h[1]
        r, s = h[-2], h[-1]
        ends = [
            ((0, 1, -(2 * p + q) / (p * (p + q))), (1, 2, (p + q) / (p * q)), (2, 3, -p / (q * (p + q)))),
            (
                (-3, -2, s / (r * (r + s))),
                (-2, -1, -(r + s) / (r * s)),
                (-1, None, (2 * s + r) / (s * (r + s))),
            ),
        ]
    first, last = (
        sum(_part(x, d, lo, hi) * _along(np.asarray(w), d, nd, dt) for lo, hi, w in end) for end in ends
    )
    return cat([first, inner, last], d)


def gradient(
    input: Tensor, *, spacing: Any = 1, dim: int | Sequence[int] | None = None, edge_order: int = 1
) -> tuple:
    r"""Estimate the partial derivatives of the function sampled by ``input`` along each
    dimension in ``dim`` (all by default), as PyTorch's ``torch.gradient`` (and NumPy's).

    Args:
        input (Tensor): the sampled values.
        spacing (number, tuple of numbers or tuple of 1-D Tensors): a uniform step for every
            dimension, one step per dimension, or the sample coordinates of each dimension.
            Default: 1.
        dim (int or tuple of ints, optional): the dimensions to differentiate along.
        edge_order (int): 1 or 2, the order of accuracy at the boundaries. Default: 1.

    Returns:
        A tuple with one tensor (``input``'s shape) per differentiated dimension; integer
        inputs give the default floating dtype.
    """
    if not isinstance(input, Tensor):
        raise TypeError(f"gradient(): argument 'input' must be Tensor, not {type(input).__name__}")
    if edge_order not in (1, 2):
        raise RuntimeError("torch.gradient only supports edge_order=1 and edge_order=2.")
    x = input
    kind = x._data.dtype.kind
    if kind == "b":
        raise RuntimeError(
            "torch.gradient does not support bool tensors: convert the input to a number dtype"
        )
    if kind in "iu":
        x = x.to(_dtype.get_default_dtype())
    ndim = x._data.ndim
    dims = _dims(dim, ndim)
    steps = _spacings(spacing, dim, dims, ndim)
    for d in dims:
        if x._data.shape[d] < edge_order + 1:
            raise RuntimeError("torch.gradient expected each dimension size to be at least edge_order+1")
    return tuple(
        _coordinates(x, d, s, edge_order) if isinstance(s, np.ndarray) else _uniform(x, d, s, edge_order)
        for d, s in zip(dims, steps)
    )
