"""The eigen-decomposition of a general (non-symmetric) square matrix, ``A V = V diag(L)``,
with complex eigenvalues and eigenvectors as ``torch.linalg.eig`` returns them (LAPACK's
geev through NumPy: each eigenvector of unit 2-norm), and PyTorch's gradient.
"""

from __future__ import annotations

import numpy as np

from .._dtype import scalar_type_name
from .._tensor import Tensor
from ..autograd.function import Function
from ..autograd.grad_mode import recording
from ..kernels.threads import lapack
from .linalg_decomp import Solve
from .linalg_low_precision import refuse_low_precision

__all__ = ["Eig", "check_eig_input"]

_COMPLEX = {np.dtype(np.float32): np.complex64, np.dtype(np.float64): np.complex128}


def check_eig_input(name: str, A: Tensor) -> None:
    """``A`` must be a batch of square float32/float64/complex matrices."""
    if not isinstance(A, Tensor):
        raise TypeError(f"{name}(): argument 'input' must be Tensor, not {type(A).__name__}")
    dt = A._data.dtype
    refuse_low_precision(name, dt)
    if dt not in (np.float32, np.float64, np.complex64, np.complex128):
        raise RuntimeError(
            f"{name}: Expected a floating point or complex tensor as input. Got {scalar_type_name(dt)}"
        )
    if A._data.ndim < 2:
        raise RuntimeError(f"{name}: The input tensor A must have at least 2 dimensions.")
    m, n = A._data.shape[-2:]
    if m != n:
        raise RuntimeError(f"{name}: A must be batches of square matrices, but they are {m} by {n} matrices")


class Eig(Function):
    """Eigenvalues ``L`` and unit-norm eigenvectors ``V`` (both complex).

    Backward (PyTorch's): ``gA = V^-H (diag(gL) + (V^H gV - V^H V Re diag(V^H gV)) / conj(E)) V^H``
    with ``E_ij = L_j - L_i`` off the diagonal. The eigenvectors are defined up to a phase
    ``e^{i phi}``; a loss that depends on that phase has no gradient, and backward raises.
    Recorded (``create_graph=True``), the backward recomputes ``L`` and ``V`` through ``Eig``
    itself and solves with ``linalg.solve``'s op, so that it differentiates again.
    """

    _raw = True
    _node_name, _profiled_as = "LinalgEigBackward0", "aten::linalg_eig"

    @staticmethod
    def forward(ctx, a):
        x = a._data
        if not np.isfinite(x).all():
            raise RuntimeError("linalg.eig: input tensor should not contain infs or NaNs.")
        w, v = lapack(np.linalg.eig, x)
        cdt = _COMPLEX.get(x.dtype, x.dtype)
        w, v = w.astype(cdt, copy=False), v.astype(cdt, copy=False)
        if ctx.needs_input_grad:
            ctx.w, ctx.v, ctx.a = w, v, a
        return w, v

    @staticmethod
    def backward(ctx, gL, gV):
        recorded = recording()
        L, V = Eig.apply(ctx.a) if recorded else (Tensor._make(ctx.w), Tensor._make(ctx.v))
        Vh = V.mH
        n = ctx.w.shape[-1]
        eye = Tensor._make(np.eye(n, dtype=bool))
        if gV is not None:
            VhgV = Vh @ gV
            diag = VhgV.diagonal(0, -2, -1)
            if np.abs(diag._data.imag).max(initial=0) > 1e-2 * (1 + np.abs(diag._data).max(initial=0)):
                raise RuntimeError(
                    "linalg_eig_backward: The eigenvectors in the complex case are specified up to "
                    "multiplication by e^{i phi}. The specified loss function depends on this quantity, "
                    "so it is ill-defined."
                )
            inner = VhgV - Vh @ (V * diag.real.unsqueeze(-2))
            Lc = L.conj()
            E = (Lc.unsqueeze(-2) - Lc.unsqueeze(-1)).masked_fill(eye, 1)
            inner = (inner / E).masked_fill(eye, 0)
        else:
            inner = Tensor._make(np.zeros(ctx.v.shape, ctx.v.dtype))
        if gL is not None:
            inner = inner + gL.unsqueeze(-1) * eye.to(inner.dtype)
        if recorded:
            return Solve.apply(Vh, inner @ Vh, True)
        rhs = (inner @ Vh)._data
        return Tensor._make(lapack(np.linalg.solve, ctx.v.conj().swapaxes(-1, -2), rhs))
