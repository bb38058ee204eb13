"""Helpers shared by the distributions: broadcasting parameters, probabilities and logits,
``lazy_property``, clamping probabilities away from 0 and 1."""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import update_wrapper
from numbers import Number
from typing import Any

import numpy as np

import disttorch as _dt

from .._dtype import get_default_dtype
from .._tensor import Size, Tensor
from ..ops.special import lgamma

__all__ = [
    "broadcast_all",
    "broadcast_shape",
    "clamp_probs",
    "euler_constant",
    "expand_to",
    "lazy_property",
    "logits_to_probs",
    "probs_to_logits",
    "tril_matrix_to_vec",
    "vec_to_tril_matrix",
]

euler_constant = 0.57721566490153286060


def broadcast_shape(*shapes: Any) -> tuple:
    """The broadcast of ``shapes`` (a RuntimeError naming them when incompatible)."""
    try:
        return tuple(np.broadcast_shapes(*[tuple(s) for s in shapes]))
    except ValueError:
        raise RuntimeError(f"shapes {[tuple(s) for s in shapes]} cannot be broadcast together") from None


def expand_to(t: Tensor, shape: Any) -> Tensor:
    """``t.expand(shape)`` (a differentiable view)."""
    shape = tuple(shape)
    return t if tuple(t.shape) == shape else t.expand(*shape)


def broadcast_all(*values: Any) -> tuple:
    """Tensors of one broadcast shape from tensors and numbers (numbers take the dtype of the
    tensors, else the default dtype)."""
    if not all(isinstance(v, (Tensor, Number)) for v in values):
        raise ValueError("Input arguments must all be instances of numbers.Number or Tensor.")
    tensors = [v for v in values if isinstance(v, Tensor)]
    dtype = tensors[0].dtype if tensors else get_default_dtype()
    if not dtype.is_floating_point:
        dtype = get_default_dtype()
    values = [v if isinstance(v, Tensor) else _dt.tensor(float(v), dtype=dtype) for v in values]
    shape = broadcast_shape(*[v.shape for v in values])
    return tuple(expand_to(v, shape) for v in values)


def _batch(*values: Any) -> Size | None:
    """``Size()`` when every parameter is a Python number (a scalar distribution), else None."""
    return Size() if all(isinstance(v, Number) for v in values) else None


def _uniform(shape: Any, like: Tensor) -> Tensor:
    return _dt.rand(*shape, dtype=like.dtype)


def _one_of(probs: Any, logits: Any) -> None:
    if (probs is None) == (logits is None):
        raise ValueError("Either `probs` or `logits` must be specified, but not both.")


def _sample_like(arr: np.ndarray, like: Tensor) -> Tensor:
    return Tensor._make(np.asarray(arr).astype(like._data.dtype, copy=False))


def _temperature(t: Any, like: Tensor | None = None) -> Tensor:
    if isinstance(t, Tensor):
        return t
    return _dt.tensor(float(t), dtype=like.dtype if like is not None else None)


def _mvlgamma(a: Tensor, p: int) -> Tensor:
    """The multivariate log-gamma ``log Gamma_p(a)``."""
    terms = sum(lgamma(a - 0.5 * j) for j in range(p))
    return terms + p * (p - 1) / 4 * math.log(math.pi)


def _finfo(t: Tensor) -> np.finfo:
    return np.finfo(t._data.dtype if t._data.dtype.kind == "f" else get_default_dtype().numpy)


def clamp_probs(probs: Tensor) -> Tensor:
    """``probs`` clamped to ``[eps, 1 - eps]``."""
    eps = float(_finfo(probs).eps)
    return probs.clamp(min=eps, max=1 - eps)


def logits_to_probs(logits: Tensor, is_binary: bool = False) -> Tensor:
    """``sigmoid(logits)`` (binary) or ``softmax(logits, -1)``."""
    return logits.sigmoid() if is_binary else logits.softmax(-1)


def probs_to_logits(probs: Tensor, is_binary: bool = False) -> Tensor:
    """``log(p) - log1p(-p)`` (binary) or ``log(p)`` of clamped probabilities."""
    p = clamp_probs(probs)
    return p.log() - (-p).log1p() if is_binary else p.log()


class lazy_property:
    """A property computed on first access and then stored on the instance."""

    def __init__(self, wrapped: Callable) -> None:
        self.wrapped = wrapped
        update_wrapper(self, wrapped)

    def __get__(self, instance: Any, obj_type: Any = None) -> Any:
        if instance is None:
            return self
        value = self.wrapped(instance)
        setattr(instance, self.wrapped.__name__, value)
        return value


def tril_matrix_to_vec(mat: Tensor, diag: int = 0) -> Tensor:
    """The lower triangle (from diagonal ``diag``) of the last two dims as a vector."""
    n = mat.shape[-1]
    rows, cols = np.tril_indices(n, k=diag)
    return mat[..., _dt.tensor(rows), _dt.tensor(cols)]


def vec_to_tril_matrix(vec: Tensor, diag: int = 0) -> Tensor:
    """The inverse of ``tril_matrix_to_vec``."""
    m = vec.shape[-1]
    n = round((-(1 + 2 * diag) + ((1 + 2 * diag) ** 2 + 8 * m + 8 * abs(diag) * (diag + 1)) ** 0.5) / 2)
    rows, cols = np.tril_indices(n, k=diag)
    if len(rows) != m:
        raise ValueError(f"a vector of {m} entries is not the lower triangle of a square matrix")
    index = np.full(n * n, m, dtype=np.int64)
    index[rows * n + cols] = np.arange(m)
    padded = _dt.cat([vec, _dt.zeros(*vec.shape[:-1], 1, dtype=vec.dtype)], dim=-1)
    return padded[..., _dt.tensor(index)].reshape(*vec.shape[:-1], n, n)
