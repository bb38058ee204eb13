"""Gradient clipping: ``clip_grad_norm_`` (rescale all gradients so their joint norm is at
most ``max_norm``; returns that norm), ``clip_grad_value_``, ``get_total_norm`` and
``clip_grads_with_norm_``. Gradients are changed in place, outside any graph."""

from __future__ import annotations

import math
import warnings
from typing import Iterable

import numpy as np

from ..._tensor import Tensor
from ...kernels.reductions import lane_norms

__all__ = ["clip_grad_norm_", "clip_grad_norm", "clip_grad_value_", "get_total_norm", "clip_grads_with_norm_"]


def _as_list(tensors: Tensor | Iterable[Tensor]) -> list:
    return [tensors] if isinstance(tensors, Tensor) else list(tensors)


def _grads(parameters: Tensor | Iterable[Tensor]) -> list:
    """The gradients, a DTensor parameter's as a DTensor (``.grad``)."""
    return [
        p.grad if hasattr(p, "_joint_norm") else p._grad for p in _as_list(parameters) if p._grad is not None
    ]


def _norm(t: Tensor, norm_type: float) -> float:
    """The ``norm_type``-norm of ``t``."""
    a = _values(t, coalesce=True)
    if math.isinf(norm_type):
        return float(np.abs(a).max()) if a.size else 0.0
    return float(np.linalg.norm(a.reshape(-1).astype(np.float64, copy=False), norm_type))


def _in_lanes(t: Tensor, dtype: np.dtype) -> bool:
    """Whether ``t``'s 2-norm is PyTorch's vectorised kernel's (``kernels.reductions.lane_norms``):
    a dense, C-contiguous float32/float64 tensor of ``dtype``."""
    if t.is_sparse:
        return False
    a = t._data
    return a.dtype == dtype and a.dtype in (np.float32, np.float64) and a.flags.c_contiguous


def _values(t: Tensor, coalesce: bool = False) -> np.ndarray:
    """The array holding ``t``'s entries: a sparse tensor's stored values (summed over
    repeated indices when ``coalesce``), else its data."""
    if t.is_sparse:
        return (t.coalesce() if coalesce else t)._values()._data
    return t._data


def _float_dtype(dtype: np.dtype) -> np.dtype:
    """``dtype`` when it is a floating type (bfloat16 included), else float64."""
    dtype = np.dtype(dtype)
    return dtype if dtype.kind == "f" or "float" in dtype.name else np.dtype(np.float64)


def _rounded(x: float, dtype: np.dtype) -> float:
    """``x`` rounded to ``dtype`` as a tensor of that dtype holds it (a float dtype's)."""
    return float(np.asarray(x, dtype=np.float64).astype(_float_dtype(dtype)))


def get_total_norm(
    tensors: Tensor | Iterable[Tensor],
    norm_type: float = 2.0,
    error_if_nonfinite: bool = False,
    foreach: bool | None = None,
) -> Tensor:
    """The ``norm_type``-norm of all ``tensors`` together (as if concatenated); of DTensors
    (FSDP's and tensor parallelism's gradients), the norm of the whole tensors, as a
    DTensor replicated over the first one's mesh (as PyTorch's)."""
    tensors = _as_list(tensors)
    norm_type = float(norm_type)
    if not tensors:
        return Tensor._make(np.zeros((), dtype=np.float32))
    dtype = _values(tensors[0]).dtype
    pieces = [t for t in tensors if hasattr(t, "_joint_norm")]  # DTensors: the wholes' norm, jointly
    if norm_type == 2.0 and not pieces and all(_in_lanes(t, dtype) for t in tensors):
        # PyTorch's steps: each tensor's norm (foreach_norm), then the norm of those norms,
        # both by its vectorised kernel and in the gradients' dtype
        per = [lane_norms(t._data.reshape(1, -1))[0] for t in tensors]
        total = float(lane_norms(np.array(per, dtype=dtype).reshape(1, -1))[0])
    else:
        per = [_norm(t, norm_type) for t in tensors if not hasattr(t, "_joint_norm")]
        if pieces:
            per.append(pieces[0]._joint_norm(pieces, norm_type))
        # PyTorch's per-tensor norms (foreach_norm) are tensors of the gradients' dtype: a
        # bfloat16/float16 gradient's norm is rounded to 16 bits before the norm of the norms
        per = [_rounded(n, dtype) for n in per]
        total = max(per) if math.isinf(norm_type) else float(np.linalg.norm(np.asarray(per), norm_type))
    if error_if_nonfinite and not math.isfinite(total):
        raise RuntimeError(
            f"The total norm of order {norm_type} for gradients from `parameters` is "
            f"non-finite, so it cannot be clipped. To disable this error and scale "
            f"the gradients by the non-finite norm anyway, set "
            f"`error_if_nonfinite=False`"
        )
    whole = next((t for t in tensors if hasattr(t, "_replicated_scalar")), None)
    if whole is not None:
        return whole._replicated_scalar(np.asarray(total, dtype=dtype))
    return Tensor._make(np.asarray(total, dtype=dtype))


def clip_grads_with_norm_(
    parameters: Tensor | Iterable[Tensor], max_norm: float, total_norm: Tensor, foreach: bool | None = None
) -> None:
    """Scale gradients by ``min(1, max_norm / (total_norm + 1e-6))``."""
    # as PyTorch's tensor arithmetic: max_norm / (total_norm + 1e-6) in the norm's dtype (a
    # 16-bit norm's steps through float32, each rounded back to 16 bits), clamped at 1; a
    # number divided by a tensor is the tensor's reciprocal times the number (Tensor.__rtruediv__)
    data = getattr(total_norm, "_data", None)
    dtype = _float_dtype(data.dtype if isinstance(data, np.ndarray) else np.float64)
    step = np.dtype(np.float32) if dtype.itemsize < 4 else dtype
    shifted = np.asarray(np.asarray(float(total_norm), step) + step.type(1e-6)).astype(dtype)
    recip = np.asarray(step.type(1) / np.asarray(shifted, step)).astype(dtype)
    coef = min(float(np.asarray(np.asarray(recip, step) * step.type(max_norm)).astype(dtype)), 1.0)
    for g in _grads(parameters):
        arr = _values(g)
        arr *= arr.dtype.type(coef)
        g._bump_version()


def clip_grad_norm_(
    parameters: Tensor | Iterable[Tensor],
    max_norm: float,
    norm_type: float = 2.0,
    error_if_nonfinite: bool = False,
    foreach: bool | None = None,
) -> Tensor:
    """Rescale the gradients of ``parameters`` in place so that their joint
    ``norm_type``-norm is at most ``max_norm``.

    Returns:
        The total norm of the gradients before clipping (a 0-d tensor).
    """
    parameters = _as_list(parameters)
    total = get_total_norm(_grads(parameters), norm_type, error_if_nonfinite)
    clip_grads_with_norm_(parameters, max_norm, total)
    return total


def clip_grad_value_(
    parameters: Tensor | Iterable[Tensor], clip_value: float, foreach: bool | None = None
) -> None:
    """Clamp every gradient entry of ``parameters`` to ``[-clip_value, clip_value]``. A
    ``Partial`` DTensor gradient (a sequence-parallel norm weight's) is refused, as
    PyTorch's in-place clamp refuses it, before any gradient changes. No gradient at all (every
    ``.grad`` None, or no parameters) is a RuntimeError, as PyTorch's grouping of the gradients
    raises it."""
    clip_value = float(clip_value)
    grads = _grads(parameters)
    if not grads:
        raise RuntimeError(
            "Expected !nested_tensorlist[0].empty() to be true, but got false. "
            "(clip_grad_value_ was given no parameter with a gradient: call it after backward())"
        )
    for g in grads:
        layout = g._partial_placements() if hasattr(g, "_partial_placements") else None
        if layout is not None:
            from ...distributed.tensor._partial_inplace import refuse_on_partial

            refuse_on_partial("aten.clamp_.default" if foreach is False else "aten.clamp_min.default", layout)
    for g in grads:
        arr = _values(g)
        np.clip(arr, -clip_value, clip_value, out=arr)
        g._bump_version()


def clip_grad_norm(
    parameters: Tensor | Iterable[Tensor],
    max_norm: float,
    norm_type: float = 2.0,
    error_if_nonfinite: bool = False,
    foreach: bool | None = None,
) -> Tensor:
    """Deprecated: use :func:`clip_grad_norm_`."""
    warnings.warn(
        "`torch.nn.utils.clip_grad_norm` is now deprecated in favor of `torch.nn.utils.clip_grad_norm_`.",
        FutureWarning,
        stacklevel=2,
    )
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)
