"""LAPACK's Householder representation of QR: ``geqrf``, ``orgqr`` and ``ormqr``.

``geqrf`` factors ``A = QR`` with ``Q = H_1 ... H_k``, ``H_i = I - tau_i v_i v_i^T``, storing
``R`` on and above the diagonal and the ``v_i`` (unit first entry implied) below it, as
LAPACK's ``?geqrf`` does (NumPy's ``qr(mode="raw")``; batched). ``orgqr`` (=
``linalg.householder_product``) forms the first ``n`` columns of ``Q``; ``ormqr`` multiplies a
matrix by ``Q`` or ``Q^T`` from either side without forming ``Q``. Both apply the reflectors
one at a time with tensor ops, vectorised over the batch, so they are differentiable w.r.t.
every input (as in PyTorch); ``geqrf`` has no derivative (nor has it in PyTorch).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._tensor import Tensor
from ..autograd.autocast_state import autocast_op
from ..autograd.function import Function
from ._helpers import _return_type, scalar_type_name
from .linalg_low_precision import refuse_low_precision

__all__ = ["geqrf", "orgqr", "ormqr"]  # top-level names (householder_product is in torch.linalg)

TENSOR_METHODS = ("geqrf", "orgqr", "ormqr")

GeqrfResult = _return_type("geqrf", ("a", "tau"))


def _check(name: str, arg: str, t: Any, min_dim: int) -> None:
    if not isinstance(t, Tensor):
        raise TypeError(f"{name}(): argument '{arg}' must be Tensor, not {type(t).__name__}")
    refuse_low_precision(name, t._data.dtype)
    if t._data.dtype.kind != "f" or t._data.dtype == np.float16:
        raise RuntimeError(
            f"{name}: Expected a floating point or complex tensor as {arg}. Got {scalar_type_name(t._data.dtype)}"
        )
    if t._data.ndim < min_dim:
        raise RuntimeError(f"{name}: {arg} must have at least {min_dim} dimensions.")


def _same_dtype(name: str, a: Tensor, arg: str, b: Tensor) -> None:
    if a.dtype != b.dtype:
        raise RuntimeError(
            f"{name}: Expected input and {arg} to have the same dtype, but input has dtype {a.dtype} and "
            f"{arg} has dtype {b.dtype}"
        )


def _check_geqrf_input(input: Tensor) -> None:
    if not isinstance(input, Tensor):
        raise TypeError(f"geqrf(): argument 'input' must be Tensor, not {type(input).__name__}")
    if input._data.dtype.kind != "f" or input._data.dtype == np.float16:
        raise NotImplementedError(
            f"\"geqrf_cpu\" not implemented for '{scalar_type_name(input._data.dtype)}'"
        )


class Geqrf(Function):
    """``geqrf``: LAPACK's Householder QR (no derivative, as in PyTorch)."""

    _raw = True

    @staticmethod
    def forward(ctx, a):
        h, tau = np.linalg.qr(a._data, mode="raw")  # h is the transpose of LAPACK's output
        return np.ascontiguousarray(np.swapaxes(h, -1, -2)).astype(a._data.dtype), tau.astype(a._data.dtype)

    @staticmethod
    def backward(ctx, ga, gtau):
        raise NotImplementedError("the derivative for 'geqrf' is not implemented.")


def geqrf(input: Tensor, *, out: Any = None) -> GeqrfResult:
    """QR decomposition of ``input`` (``(*, m, n)``) in LAPACK's Householder form:
    ``(a, tau)``, ``R`` in ``a``'s upper triangle, the reflectors below it (see the module)."""
    _check_geqrf_input(input)
    _check("torch.geqrf", "input", input, 2)
    a, tau = Geqrf.apply(input)
    return GeqrfResult(a, tau)


def apply_householder(
    A: Tensor, tau: Tensor, C: Tensor, left: bool = True, transpose: bool = False
) -> Tensor:
    """``Q @ C`` (``Q^T @ C`` with ``transpose``; ``C @ Q`` / ``C @ Q^T`` when not ``left``)
    for ``Q = H_1 ... H_k`` given by the reflectors in ``A``'s columns below the diagonal and
    ``tau`` (``k = tau.shape[-1]``); differentiable, vectorised over the batch."""
    m, k = A.shape[-2], tau.shape[-1]
    dt = A._data.dtype
    below = Tensor._make(np.tril(np.ones((m, k), dtype=dt), -1))
    unit = Tensor._make(np.eye(m, k, dtype=dt))
    vs = A[..., :, :k] * below + unit
    # left: Q C = H_1 (... (H_k C)) applies H_k first; Q^T C = H_k ... H_1 C applies H_1 first
    order = range(k - 1, -1, -1) if left != transpose else range(k)
    for i in order:
        v = vs[..., :, i : i + 1]
        t = tau[..., i : i + 1].unsqueeze(-1)
        C = C - t * (v @ (v.mT @ C)) if left else C - t * ((C @ v) @ v.mT)
    return C


def householder_product(A: Tensor, tau: Tensor, *, out: Any = None) -> Tensor:
    """The first ``n`` columns of ``H_1 ... H_k`` with ``H_i = I - tau_i v_i v_i^T`` and
    ``v_i`` column ``i`` of ``A`` below the diagonal (unit diagonal) — the ``Q`` that
    ``geqrf`` encodes. Differentiable."""
    _check("torch.linalg.householder_product", "A", A, 2)
    _check("torch.linalg.householder_product", "tau", tau, 1)
    m, n = A.shape[-2:]
    k = tau.shape[-1]
    if n > m:
        raise RuntimeError(
            "torch.linalg.householder_product: input.shape[-2] must be greater than "
            "or equal to input.shape[-1]"
        )
    if k > n:
        raise RuntimeError(
            "torch.linalg.householder_product: input.shape[-1] must be greater than or equal to tau.shape[-1]"
        )
    eye = Tensor._make(np.broadcast_to(np.eye(m, n, dtype=A._data.dtype), A._data.shape[:-2] + (m, n)).copy())
    return apply_householder(A, tau, eye)


@autocast_op("fp32")
def orgqr(input: Tensor, tau: Tensor) -> Tensor:
    """The first ``n`` columns of ``Q`` from ``geqrf``'s ``(input, tau)``:
    ``torch.linalg.householder_product``. Differentiable."""
    return householder_product(input, tau)


@autocast_op("fp32")
def ormqr(
    input: Tensor, tau: Tensor, other: Tensor, left: bool = True, transpose: bool = False, *, out: Any = None
) -> Tensor:
    """``Q @ other`` for the ``Q`` of ``geqrf``'s ``(input, tau)`` (``op(Q) = Q^T`` with
    ``transpose``; ``other @ op(Q)`` when ``left=False``), without forming ``Q``.
    Differentiable w.r.t. all three tensors."""
    name = "torch.ormqr"
    _check(name, "input", input, 2)
    _check(name, "tau", tau, 1)
    _check(name, "other", other, 2)
    _same_dtype(name, input, "other", other)
    _same_dtype(name, input, "tau", tau)
    side = -2 if left else -1
    if other.shape[side] != input.shape[-2]:
        raise RuntimeError(f"{name}: other.shape[{side}] must be equal to input.shape[-2]")
    if tau.shape[-1] > min(input.shape[-2:]):
        raise RuntimeError(f"{name}: tau.shape[-1] must be less than or equal to min(input.shape[-2:])")
    if other._data.ndim != input._data.ndim:
        raise RuntimeError(
            f"{name}: Expected other to have the same number of dimensions as input, but got other.ndim equal "
            f"to {other._data.ndim} and input.ndim is equal to {input._data.ndim}"
        )
    if (
        tau._data.ndim != input._data.ndim - 1
        or input.shape[:-2] != tau.shape[:-1]
        or input.shape[:-2] != other.shape[:-2]
    ):
        raise RuntimeError(
            f"{name}: Expected batch dimensions of input, tau and other to be equal, got input "
            f"{tuple(input.shape)}, tau {tuple(tau.shape)} and other {tuple(other.shape)}"
        )
    return apply_householder(input, tau, other, left=left, transpose=transpose)
