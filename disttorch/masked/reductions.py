"""The masked reductions and normalisations of ``torch.masked``.

Each fills the masked-out elements (``mask`` False) with the operation's identity (0 for a
sum, 1 for a product, -inf for a maximum, ...) and runs the ordinary op, so gradients flow
to the kept elements only. ``mask=None`` keeps every element.
"""

from __future__ import annotations

import builtins
from typing import Any

import numpy as np

from .. import _creation, _dtype
from .._tensor import Tensor
from ..ops import comparison, elementwise, reduction

__all__ = [
    "amax",
    "amin",
    "argmax",
    "argmin",
    "cumprod",
    "cumsum",
    "log_softmax",
    "logsumexp",
    "mean",
    "norm",
    "prod",
    "softmax",
    "softmin",
    "std",
    "sum",
    "var",
]


def _mask(input: Tensor, mask: Tensor | None) -> Tensor:
    if mask is None:
        return _creation.ones(*input.shape, dtype=_dtype.bool)
    if not isinstance(mask, Tensor) or mask.dtype != _dtype.bool:
        raise ValueError(
            f"masked: mask must be a bool Tensor, got "
            f"{mask.dtype if isinstance(mask, Tensor) else type(mask).__name__}"
        )
    try:
        np.broadcast_shapes(tuple(mask.shape), tuple(input.shape))
    except ValueError:
        raise ValueError(
            f"masked: mask of shape {tuple(mask.shape)} does not broadcast to the input's "
            f"shape {tuple(input.shape)}"
        ) from None
    return mask.expand(*input.shape) if tuple(mask.shape) != tuple(input.shape) else mask


def _filled(input: Tensor, mask: Tensor | None, fill: float, dtype: Any = None) -> tuple[Tensor, Tensor]:
    m = _mask(input, mask)
    x = input.to(dtype) if dtype is not None else input
    return elementwise.where(m, x, _creation.full((), fill, dtype=x.dtype)), m


def _dims(dim: Any) -> Any:
    return () if dim is None else dim


def sum(
    input: Tensor, dim: Any = None, *, keepdim: bool = False, dtype: Any = None, mask: Tensor | None = None
) -> Tensor:
    """Sum of the kept elements over ``dim`` (all dims when None)."""
    x, _ = _filled(input, mask, 0.0, dtype)
    return reduction.sum(x, _dims(dim), keepdim=keepdim)


def prod(
    input: Tensor, dim: Any = None, *, keepdim: bool = False, dtype: Any = None, mask: Tensor | None = None
) -> Tensor:
    """Product of the kept elements over ``dim`` (all dims when None)."""
    x, _ = _filled(input, mask, 1.0, dtype)
    if dim is None:
        return reduction.prod(x.reshape(-1), 0)
    return reduction.prod(x, dim, keepdim=keepdim)


def amax(
    input: Tensor, dim: Any = None, *, keepdim: bool = False, dtype: Any = None, mask: Tensor | None = None
) -> Tensor:
    """Maximum of the kept elements (-inf where none is kept)."""
    x, _ = _filled(input, mask, -np.inf, dtype)
    return reduction.amax(x, _dims(dim), keepdim=keepdim)


def amin(
    input: Tensor, dim: Any = None, *, keepdim: bool = False, dtype: Any = None, mask: Tensor | None = None
) -> Tensor:
    """Minimum of the kept elements (inf where none is kept)."""
    x, _ = _filled(input, mask, np.inf, dtype)
    return reduction.amin(x, _dims(dim), keepdim=keepdim)


def argmax(
    input: Tensor,
    dim: int | None = None,
    *,
    keepdim: bool = False,
    dtype: Any = None,
    mask: Tensor | None = None,
) -> Tensor:
    """Index of the largest kept element along ``dim``."""
    x, _ = _filled(input, mask, -np.inf, dtype)
    return comparison.argmax(x, dim, keepdim)


def argmin(
    input: Tensor,
    dim: int | None = None,
    *,
    keepdim: bool = False,
    dtype: Any = None,
    mask: Tensor | None = None,
) -> Tensor:
    """Index of the smallest kept element along ``dim``."""
    x, _ = _filled(input, mask, np.inf, dtype)
    return comparison.argmin(x, dim, keepdim)


def _count(m: Tensor, dim: Any, keepdim: bool, dtype: Any) -> Tensor:
    return reduction.sum(m.to(dtype), _dims(dim), keepdim=keepdim)


def mean(
    input: Tensor, dim: Any = None, *, keepdim: bool = False, dtype: Any = None, mask: Tensor | None = None
) -> Tensor:
    """Mean of the kept elements (nan where none is kept)."""
    x, m = _filled(input, mask, 0.0, dtype)
    return reduction.sum(x, _dims(dim), keepdim=keepdim) / _count(m, dim, keepdim, x.dtype)


def var(
    input: Tensor,
    dim: Any = None,
    unbiased: bool | None = None,
    *,
    correction: float | None = None,
    keepdim: bool = False,
    dtype: Any = None,
    mask: Tensor | None = None,
) -> Tensor:
    """Variance of the kept elements, divided by ``count - correction`` (default correction 1)."""
    corr = correction if correction is not None else (0 if unbiased is False else 1)
    x, m = _filled(input, mask, 0.0, dtype)
    n = _count(m, dim, True, x.dtype)
    centred = elementwise.where(m, x - reduction.sum(x, _dims(dim), keepdim=True) / n, 0.0)
    out = reduction.sum(centred * centred, _dims(dim), keepdim=True) / (n - corr).clamp(min=0)
    return out if keepdim else _squeeze(out, dim, input.dim())


def std(
    input: Tensor,
    dim: Any = None,
    unbiased: bool | None = None,
    *,
    correction: float | None = None,
    keepdim: bool = False,
    dtype: Any = None,
    mask: Tensor | None = None,
) -> Tensor:
    """Standard deviation of the kept elements (the square root of ``var``)."""
    return var(input, dim, unbiased, correction=correction, keepdim=keepdim, dtype=dtype, mask=mask).sqrt()


def _squeeze(t: Tensor, dim: Any, ndim: int) -> Tensor:
    dims = range(ndim) if dim is None else ([dim] if isinstance(dim, int) else list(dim))
    return t.reshape(
        *[s for i, s in enumerate(t.shape) if i not in {d % builtins.max(ndim, 1) for d in dims}]
    )


def norm(
    input: Tensor,
    ord: float = 2.0,
    dim: Any = None,
    *,
    keepdim: bool = False,
    dtype: Any = None,
    mask: Tensor | None = None,
) -> Tensor:
    """The ``ord``-norm of the kept elements (``inf``: largest magnitude)."""
    x, _ = _filled(input, mask, 0.0, dtype)
    if ord == np.inf:
        return reduction.amax(x.abs(), _dims(dim), keepdim=keepdim)
    return reduction.sum(x.abs() ** ord, _dims(dim), keepdim=keepdim) ** (1.0 / ord)


def logsumexp(
    input: Tensor, dim: Any = None, *, keepdim: bool = False, dtype: Any = None, mask: Tensor | None = None
) -> Tensor:
    """``log(sum(exp(x)))`` over the kept elements."""
    x, _ = _filled(input, mask, -np.inf, dtype)
    return reduction.logsumexp(x, tuple(range(x.dim())) if dim is None else dim, keepdim=keepdim)


def softmax(input: Tensor, dim: int, *, dtype: Any = None, mask: Tensor | None = None) -> Tensor:
    """Softmax over ``dim`` of the kept elements; masked-out elements get 0."""
    x, _ = _filled(input, mask, -np.inf, dtype)
    return reduction.softmax(x, dim)


def log_softmax(input: Tensor, dim: int, *, dtype: Any = None, mask: Tensor | None = None) -> Tensor:
    """Log-softmax over ``dim`` of the kept elements; masked-out elements get -inf."""
    x, _ = _filled(input, mask, -np.inf, dtype)
    return reduction.log_softmax(x, dim)


def softmin(input: Tensor, dim: int, *, dtype: Any = None, mask: Tensor | None = None) -> Tensor:
    """``softmax(-input)`` over the kept elements."""
    x, _ = _filled(-input, mask, -np.inf, dtype)
    return reduction.softmax(x, dim)


def cumsum(input: Tensor, dim: int, *, dtype: Any = None, mask: Tensor | None = None) -> Tensor:
    """Running sum along ``dim`` in which masked-out elements count as 0."""
    x, _ = _filled(input, mask, 0.0, dtype)
    return reduction.cumsum(x, dim)


def cumprod(input: Tensor, dim: int, *, dtype: Any = None, mask: Tensor | None = None) -> Tensor:
    """Running product along ``dim`` in which masked-out elements count as 1."""
    x, _ = _filled(input, mask, 1.0, dtype)
    return reduction.cumprod(x, dim)
