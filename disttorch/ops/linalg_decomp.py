"""The matrix decompositions and inverses of ``disttorch.linalg`` as Functions: inv, solve,
solve_triangular, det, slogdet, eigh, svd, qr, cholesky, matrix_exp.

Forward runs NumPy's LAPACK routines over the batch dims; backward applies PyTorch's
formulas (``FunctionsManual.cpp``) on the saved arrays. Those backwards are computed in
NumPy, as ``autograd.fused_backward`` nodes: a second derivative through a decomposition
raises (the composite ops of ``disttorch.linalg`` have them), and forward-mode AD (the
double-backward trick) goes through them with their forward rules here (svd: reduced or
square; qr: reduced, tall or square).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._tensor import Tensor
from ..autograd import grad_mode
from ..autograd.function import Function
from ..autograd.fused_backward import fused_backward
from ..kernels.lu import lu_factor_np
from ..kernels.threads import lapack
from .shape import cat, stack


class _LinAlgError(RuntimeError):
    """Raised when a matrix is singular or not positive-definite (``torch.linalg.LinAlgError``,
    named ``_LinAlgError`` as PyTorch's, which is ``torch._C._LinAlgError``)."""


LinAlgError = _LinAlgError


def _T(x: np.ndarray) -> np.ndarray:
    return np.swapaxes(x, -1, -2)


def _H(x: np.ndarray) -> np.ndarray:
    """The conjugate transpose (the transpose of a real matrix): complex gradients of
    holomorphic matrix functions use it where real ones use the transpose."""
    return np.swapaxes(np.conj(x) if x.dtype.kind == "c" else x, -1, -2)


def _c(x: np.ndarray) -> Tensor:
    return Tensor._make(np.ascontiguousarray(x))


def _fused(name: str, jvp=None, recorded=None):
    """Run a NumPy ``backward(ctx, *grads)`` as an ``autograd.fused_backward`` node that
    depends on the op's inputs (``ctx.inputs``); ``jvp(ctx, *tangents)`` is the op's forward
    rule (a tensor per output), ``recorded(ctx, *grads)`` the backward in differentiable tensor
    ops (second and higher derivatives; NotImplemented where it has none)."""

    def deco(np_backward):
        def backward(ctx, *grads):
            def run(*arrays):
                out = np_backward(ctx, *(Tensor._make(a) if a is not None else None for a in arrays))
                out = out if isinstance(out, tuple) else (out,)
                return tuple(o._data if o is not None else None for o in out)

            def in_tensor_ops(*gs):
                out = recorded(ctx, *gs)
                return out if out is NotImplemented or isinstance(out, tuple) else (out,)

            rule = (lambda *tangents: jvp(ctx, *tangents)) if jvp is not None else None
            out = fused_backward(name, run, grads, ctx.inputs, rule, recorded=recorded and in_tensor_ops)
            return out if len(out) > 1 else out[0]

        return backward

    return deco


def _sum_terms(*terms):
    """The sum of the terms that are not None (None if all are)."""
    present = [t for t in terms if t is not None]
    if not present:
        return None
    out = present[0]
    for t in present[1:]:
        out = out + t
    return out


def _trace(x: Tensor) -> Tensor:
    return x.diagonal(0, -2, -1).sum(-1)


def _inv_jvp(ctx, ta):
    X = Inv.apply(ctx.inputs[0])
    return -(X @ ta @ X)


def _solve_jvp(ctx, ta, tb, *_):
    A, B = ctx.inputs
    X = Solve.apply(A, B, ctx.left)
    rhs = _sum_terms(tb, None if ta is None else -(ta @ X if ctx.left else X @ ta))
    return None if rhs is None else Solve.apply(A, rhs, ctx.left)


def _solve_triangular_jvp(ctx, ta, tb, *_):
    A, B = ctx.inputs
    upper, left, unit = ctx.spec
    X = SolveTriangular.apply(A, B, upper, left, unit)
    if ta is not None:
        ta = ta.triu(1 if unit else 0) if upper else ta.tril(-1 if unit else 0)
    rhs = _sum_terms(tb, None if ta is None else -(ta @ X if left else X @ ta))
    return None if rhs is None else SolveTriangular.apply(A, rhs, upper, left, unit)


def _det_jvp(ctx, ta):
    A = ctx.inputs[0]
    return Det.apply(A) * _trace(Solve.apply(A, ta, True))


def _slogdet_jvp(ctx, ta):
    return None, _trace(Solve.apply(ctx.inputs[0], ta, True))


def _eigh_jvp(ctx, ta, *_):
    w, v = Eigh.apply(ctx.inputs[0], ctx.uplo)
    m = v.mT @ ta @ v
    n = w.shape[-1]
    eye = Tensor._make(np.eye(n, dtype=w._data.dtype))
    gap = w.unsqueeze(-2) - w.unsqueeze(-1) + eye  # E_ij = w_j - w_i, 1 on the diagonal
    return m.diagonal(0, -2, -1), v @ (m / gap * (1 - eye))


def _cholesky_jvp(ctx, ta, *_):
    low = Cholesky.apply(ctx.inputs[0], False)
    sym = (ta + ta.mT) / 2  # the backward is symmetrised: this is its adjoint
    p = SolveTriangular.apply(low, sym, False, True, False)  # L^{-1} dA
    x = SolveTriangular.apply(low, p.mT, False, True, False).mT  # L^{-1} dA L^{-T}
    eye = Tensor._make(np.eye(low.shape[-1], dtype=low._data.dtype))
    dl = low @ (x.tril(-1) + x * eye * 0.5)
    return dl.mT if ctx.upper else dl


def _svd_jvp(ctx, ta, *_):
    """``dS = diag(dP)``, ``dU = U (F o (dP S + S dP^T)) + (I - U U^T) dA V S^{-1}`` and its
    twin for ``V``, with ``dP = U^T dA V`` and ``F_ij = 1 / (s_j^2 - s_i^2)``."""
    a = ctx.inputs[0]
    m, n = a.shape[-2:]
    if ctx.full and m != n:
        raise RuntimeError(
            "forward mode through linalg.svd with full_matrices=True is defined for square matrices only; "
            "use full_matrices=False"
        )
    u, s, vh = SVD.apply(a, False)
    v = vh.mT
    k = s.shape[-1]
    eye = Tensor._make(np.eye(k, dtype=s._data.dtype))
    s2 = s * s
    f = (1 - eye) / (s2.unsqueeze(-2) - s2.unsqueeze(-1) + eye)
    row, col = s.unsqueeze(-2), s.unsqueeze(-1)  # X * row = X diag(s); col * X = diag(s) X
    dp = u.mT @ ta @ v
    du = u @ (f * (dp * row + col * dp.mT))
    dv = v @ (f * (col * dp + dp.mT * row))
    if m > k:
        du = du + (ta @ v - u @ dp) / row
    if n > k:
        dv = dv + (ta.mT @ u - v @ dp.mT) / row
    return du, dp.diagonal(0, -2, -1), dv.mT


def _qr_jvp(ctx, ta, *_):
    """With ``X = Q^T dA R^{-1}`` and ``W = tril(X, -1)``: ``dR = (X - W + W^T) R`` and
    ``dQ = dA R^{-1} - Q (X - W + W^T)`` (reduced QR of a tall or square matrix)."""
    a = ctx.inputs[0]
    m, n = a.shape[-2:]
    if m < n or (ctx.mode == "complete" and m > n):
        raise RuntimeError(
            "forward mode through linalg.qr is defined for tall or square matrices with mode='reduced' only"
        )
    q, r = QR.apply(a, ctx.mode)
    dar = SolveTriangular.apply(r, ta, True, False, False)  # dA R^{-1}
    x = q.mT @ dar
    w = x.tril(-1)
    upper = x - w + w.mT
    return dar - q @ upper, upper @ r


def _block_exp(a: Tensor, b: Tensor) -> Tensor:
    """The upper-right block of ``exp([[a, b], [0, a]])``: the derivative of ``exp`` at ``a``
    in the direction ``b`` (and at ``a^H``, the adjoint applied to ``b``)."""
    n = a.shape[-1]
    big = a.new_zeros(tuple(a.shape[:-2]) + (2 * n, 2 * n))
    big[..., :n, :n] = a
    big[..., n:, n:] = a
    big[..., :n, n:] = b
    return MatrixExp.apply(big)[..., :n, n:]


def _matrix_exp_jvp(ctx, ta):
    return _block_exp(ctx.inputs[0], ta)


# ---------------------------------------------------------------------- recorded backwards
# The backwards above in differentiable tensor ops of the op's inputs (recomputing the op's
# results through the op itself), for a recorded pass: second and higher derivatives.
def _eye_like(x: Tensor) -> Tensor:
    return Tensor._make(np.eye(x.shape[-1], dtype=x._data.dtype))


def _inv_recorded(ctx, g):
    it = Inv.apply(ctx.inputs[0]).mH
    return -(it @ g @ it)


def _solve_recorded(ctx, g, *_):
    a, b = ctx.inputs
    x = Solve.apply(a, b, ctx.left)
    gb = Solve.apply(a.mH, g, ctx.left)
    ga = -(gb @ x.mH) if ctx.left else -(x.mH @ gb)
    return ga, gb, None


def _solve_triangular_recorded(ctx, g, *_):
    a, b = ctx.inputs
    upper, left, unit = ctx.spec
    x = SolveTriangular.apply(a, b, upper, left, unit)
    gb = SolveTriangular.apply(a.mH, g, not upper, left, unit)
    ga = -(gb @ x.mH) if left else -(x.mH @ gb)
    ga = ga.triu(1 if unit else 0) if upper else ga.tril(-1 if unit else 0)
    return ga, gb, None, None, None


def _det_recorded(ctx, g):
    """``g conj(det A) A^{-H}``; with a singular matrix in the batch, PyTorch's adjugate from the
    SVD for every matrix, ``g conj(det U det Vh) U diag(prod_{j != i} s_j) Vh``."""
    a = ctx.inputs[0]
    if np.all(ctx.det):
        return (g * Det.apply(a).conj()).unsqueeze(-1).unsqueeze(-1) * Inv.apply(a).mH
    u, s, vh = SVD.apply(a, False)
    n = s.shape[-1]
    others = [s[..., [j for j in range(n) if j != i]].prod(-1) for i in range(n)]
    prods = Tensor._make(np.ones(s.shape, s._data.dtype)) if n == 1 else stack(others, -1)
    alpha = (g * (Det.apply(u) * Det.apply(vh)).conj()).unsqueeze(-1)
    return (u * (prods * alpha).unsqueeze(-2)) @ vh


def _slogdet_recorded(ctx, gsign, glog):
    return glog.unsqueeze(-1).unsqueeze(-1) * Inv.apply(ctx.inputs[0]).mH


def _cholesky_recorded(ctx, g, *_):
    low = Cholesky.apply(ctx.inputs[0], False)
    gl = g.mT if ctx.upper else g
    phi = (low.mH @ gl).tril()
    phi = phi - 0.5 * _eye_like(low) * phi
    tmp = SolveTriangular.apply(low.mH, phi, True, True, False)  # L^{-H} Phi
    ga = SolveTriangular.apply(low.mH, tmp.mH, True, True, False).mH  # (L^{-H} Phi) L^{-1}
    return 0.5 * (ga + ga.mH), None


def _eigh_recorded(ctx, gw, gv):
    w, v = Eigh.apply(ctx.inputs[0], ctx.uplo)
    eye = _eye_like(v)
    inner = None
    if gv is not None:
        gap = w.unsqueeze(-2) - w.unsqueeze(-1) + eye  # E_ij = w_j - w_i, 1 on the diagonal
        vhgv = v.mH @ gv
        if v._data.dtype.kind == "c":  # the phases' check of the fused backward
            _eigh_backward_complex(ctx.w, ctx.v, None, Tensor._make(gv._data))
        vhgv = 0.5 * (vhgv - vhgv.mH)  # PyTorch's projection onto the skew matrices (real too)
        inner = vhgv / gap * (1 - eye)
    if gw is not None:
        diag = gw.unsqueeze(-1) * eye
        inner = diag if inner is None else inner + diag
    return v @ inner @ v.mH, None


def _svd_recorded(ctx, gu, gs, gvh):
    """PyTorch's svd_backward, as the fused one above, of the node's own outputs (as PyTorch's
    formula reads them: a second derivative reaches the node through U and Vh as a whole, which
    is what the phase check of a complex SVD needs)."""
    u, s, vh = (Tensor._make(x, ctx, i) for i, x in enumerate(ctx.outputs))
    m, n, k = u.shape[-2], vh.shape[-1], s.shape[-1]
    u, vh = u[..., :k], vh[..., :k, :]
    gu = gu[..., :k] if gu is not None else None
    gvh = gvh[..., :k, :] if gvh is not None else None
    is_complex = ctx.u.dtype.kind == "c"
    if is_complex:  # svdvals: U and Vh get (materialised) zero gradients
        gu = None if gu is None or (not gu.requires_grad and not gu._data.any()) else gu
        gvh = None if gvh is None or (not gvh.requires_grad and not gvh._data.any()) else gvh
    if gu is None and gvh is None:
        return (u * gs.unsqueeze(-2)) @ vh, None
    if ctx.full and ((gu is not None and m > k) or (gvh is not None and n > k)):
        return NotImplemented  # (the fused node raises PyTorch's error)
    v, gv = vh.mH, (gvh.mH if gvh is not None else None)
    eye = _eye_like(s)
    s2 = s * s
    gap = s2.unsqueeze(-2) - s2.unsqueeze(-1) + eye
    row, col = s.unsqueeze(-2), s.unsqueeze(-1)

    def skew(x):
        return x - x.mH

    uhgu = skew(u.mH @ gu) if gu is not None else None
    vhgv = skew(v.mH @ gv) if gv is not None else None
    if is_complex:
        _check_svd_phase(*(None if x is None else x._data for x in (uhgu, vhgv)))
    if uhgu is not None and vhgv is not None:
        ret = (uhgu * row + col * vhgv) / gap
    elif uhgu is not None:
        ret = uhgu / gap * row
    else:
        ret = col * (vhgv / gap)
    if gs is not None:
        ret = ret + gs.unsqueeze(-1) * eye
    if is_complex and uhgu is not None:  # the phase term
        ret = ret + (uhgu.diagonal(0, -2, -1) / (2 * s)).unsqueeze(-1) * eye
    if m > k and gu is not None:
        gus = gu / row
        ga = (u @ ret + gus - u @ (u.mH @ gus)) @ vh
    elif n > k and gv is not None:
        gvs = gv / row
        ga = u @ (ret @ vh + gvs.mH - (gvs.mH @ v) @ vh)
    else:
        ga = u @ ret @ vh
    return ga, None


def _qr_recorded(ctx, gq, gr):
    """PyTorch's QR backward in tensor ops: for a tall or square matrix
    ``[gQ + Q copyltu(M)] R^{-H}``; for a wide one ``A = [X | Y]`` (``X = Q U`` square), that of
    ``X`` with ``gQ + Y gV^H`` and ``Q gV`` for ``Y``, as the fused backward."""
    q, r = QR.apply(ctx.inputs[0], ctx.mode)
    m, n = q.shape[-2], r.shape[-1]
    if (ctx.mode == "complete" and m > n) or q._data.dtype.kind == "c":
        return NotImplemented
    if m >= n:
        return _qr_tall_recorded(q, r, gq, gr), None
    u, v = r[..., :, :m], r[..., :, m:]
    gu = gr[..., :, :m] if gr is not None else None
    gv = gr[..., :, m:] if gr is not None else None
    if gv is not None:
        gq = (q @ v) @ gv.mT if gq is None else gq + (q @ v) @ gv.mT
    gx = _qr_tall_recorded(q, u, gq, gu)
    gy = q @ gv if gv is not None else Tensor._make(np.zeros(v.shape[:-2] + (m, n - m), q._data.dtype))
    return cat([gx, gy], -1), None


def _qr_tall_recorded(q: Tensor, r: Tensor, gq: Tensor | None, gr: Tensor | None) -> Tensor:
    if gq is not None and gr is not None:
        mm = r @ gr.mT - gq.mT @ q
    else:
        mm = -(gq.mT @ q) if gq is not None else r @ gr.mT
    low = mm.tril(-1)
    mm = low + low.mT + mm.diagonal(0, -2, -1).unsqueeze(-2) * _eye_like(mm)
    b = q @ mm
    if gq is not None:
        b = b + gq
    return SolveTriangular.apply(r, b.mT, True, True, False).mT  # b R^{-T}


def _matrix_exp_recorded(ctx, g):
    return _block_exp(ctx.inputs[0].mH, g)


def _batch_prefix(x: np.ndarray, i: int) -> str:
    return f"(Batch element {i}): " if x.ndim > 2 else ""


def tri_solve(a: np.ndarray, b: np.ndarray, upper: bool, unit: bool = False) -> np.ndarray:
    """Solve ``a @ x = b`` for a triangular ``a`` (only its upper/lower part is read)."""
    t = np.triu(a) if upper else np.tril(a)
    if unit:
        n = a.shape[-1]
        t = t * (1 - np.eye(n, dtype=a.dtype)) + np.eye(n, dtype=a.dtype)
    return lapack(np.linalg.solve, t, b)


def _inverse(name: str, x: np.ndarray) -> np.ndarray:
    try:
        return lapack(np.linalg.inv, x)
    except np.linalg.LinAlgError:
        raise _singular(name, x) from None


def _singular(name: str, x: np.ndarray) -> LinAlgError:
    """PyTorch's message for a singular matrix: the first zero pivot of its LU factorisation."""
    lu, _ = lu_factor_np(x)
    diag = np.diagonal(lu, axis1=-2, axis2=-1).reshape(-1, x.shape[-1])
    b, j = np.argwhere(diag == 0)[0] if (diag == 0).any() else (0, x.shape[-1] - 1)
    pre = f"(Batch element {b}): " if x.ndim > 2 else ""
    return LinAlgError(
        f"{name}: {pre}The diagonal element {j + 1} is zero, the inversion could "
        "not be completed because the input matrix is singular."
    )


def _solver_failed(a: np.ndarray) -> LinAlgError:
    """PyTorch's message for ``linalg.solve`` of a singular matrix, naming the first singular
    one of a batch."""
    batch = a.reshape(-1, *a.shape[-2:])
    first = next((i for i, m in enumerate(batch) if np.linalg.matrix_rank(m) < m.shape[-1]), 0)
    pre = f"(Batch element {first}): " if a.ndim > 2 else ""
    return LinAlgError(f"torch.linalg.solve: {pre}The solver failed because the input matrix is singular.")


class Inv(Function):
    """``A^{-1}``; gradient ``-A^{-H} g A^{-H}``."""

    _raw = True
    _node_name, _profiled_as = "LinalgInvExBackward0", "aten::linalg_inv_ex"

    @staticmethod
    def forward(ctx, a):
        inv = _inverse("linalg.inv", a._data)
        ctx.inv, ctx.inputs = inv, (a,)
        return inv

    @staticmethod
    @_fused("linalg.inv", _inv_jvp, _inv_recorded)
    def backward(ctx, g):
        it = _H(ctx.inv)
        return _c(-(it @ g._data @ it))


class Solve(Function):
    """``X = A^{-1} B`` (``B`` a batch of matrices); gradients ``gB = A^{-H} g`` and
    ``gA = -gB X^H``."""

    _raw = True
    _node_name, _profiled_as = "LinalgSolveExBackward0", "aten::linalg_solve"

    @staticmethod
    def forward(ctx, a, b, left):
        A, B = a._data, b._data
        ctx.inputs = (a, b)
        if not left:  # X A = B  <=>  A^T X^T = B^T
            A, B = _T(A), _T(B)
        try:
            x = lapack(np.linalg.solve, A, B)
        except np.linalg.LinAlgError:
            raise _solver_failed(A) from None
        ctx.A, ctx.x, ctx.left = A, x, left
        return x if left else _T(x)

    @staticmethod
    @_fused("linalg.solve", _solve_jvp, _solve_recorded)
    def backward(ctx, g):
        gd = g._data if ctx.left else _T(g._data)
        gb = lapack(np.linalg.solve, _H(ctx.A), gd)
        ga = -gb @ _H(ctx.x)
        if not ctx.left:
            ga, gb = _T(ga), _T(gb)
        return _c(ga), _c(gb), None


class SolveTriangular(Function):
    """``X`` with ``A X = B`` (``left``) or ``X A = B`` for a triangular ``A``."""

    _raw = True

    @staticmethod
    def forward(ctx, a, b, upper, left, unit):
        A, B = a._data, b._data
        ctx.inputs, ctx.spec = (a, b), (upper, left, unit)
        if not left:
            A, B, upper = _T(A), _T(B), not upper
        x = tri_solve(A, B, upper, unit)
        ctx.args = (A, x, upper, left, unit)
        return x if left else _T(x)

    @staticmethod
    @_fused("linalg.solve_triangular", _solve_triangular_jvp, _solve_triangular_recorded)
    def backward(ctx, g):
        A, x, upper, left, unit = ctx.args
        gd = g._data if left else _T(g._data)
        gb = tri_solve(_T(A), gd, not upper, unit)
        ga = -gb @ _T(x)
        ga = np.triu(ga, 1 if unit else 0) if upper else np.tril(ga, -1 if unit else 0)
        if not left:
            ga, gb = _T(ga), _T(gb)
        return _c(ga), _c(gb), None, None, None


class Det(Function):
    """``det(A)``; gradient ``g conj(det(A)) A^{-H}`` (0 at a singular ``A``; the adjugate via
    the SVD there when the gradient is itself differentiable, as PyTorch)."""

    _raw = True
    _node_name, _profiled_as = "LinalgDetBackward0", "aten::linalg_det"

    @staticmethod
    def forward(ctx, a):
        x = a._data
        d = lapack(np.linalg.det, x)
        ctx.x, ctx.det, ctx.inputs = x, d, (a,)
        return np.asarray(d, dtype=x.dtype)

    @staticmethod
    @_fused("linalg.det", _det_jvp, _det_recorded)
    def backward(ctx, g):
        x, d = ctx.x, ctx.det
        gd = (g._data * np.conj(d))[..., None, None]
        with np.errstate(all="ignore"):
            cof = lapack(np.linalg.pinv, x)  # equals inv(x) where x is invertible
        out = gd * _H(cof)
        sing = d == 0
        if np.any(sing) and grad_mode._state[0]:  # adjugate from the SVD: det(U) det(V) prod_{j != i} s_j
            # (only for a differentiable gradient, as PyTorch: its first-order gradient solves
            # with the LU factors for g conj(det) = 0 and so is 0 at a singular matrix)
            u, s, vh = lapack(np.linalg.svd, x)
            prod = np.stack([np.prod(np.delete(s, i, axis=-1), axis=-1) for i in range(s.shape[-1])], -1)
            sign = np.conj(lapack(np.linalg.det, u) * lapack(np.linalg.det, vh))
            adjt = (u * (prod * sign[..., None])[..., None, :]) @ vh
            out = np.where(sing[..., None, None], g._data[..., None, None] * adjt, out)
        return _c(out.astype(x.dtype, copy=False))


class Slogdet(Function):
    """``(sign, log|det A|)``; the gradient of the log-determinant is ``g A^{-H}``."""

    _raw = True
    _node_name, _profiled_as = "LinalgSlogdetBackward0", "aten::linalg_slogdet"

    @staticmethod
    def forward(ctx, a):
        x = a._data
        sign, logabs = lapack(np.linalg.slogdet, x)
        ctx.x, ctx.inputs = x, (a,)
        sign = np.asarray(sign, dtype=x.dtype)
        ctx.mark_non_differentiable(sign)
        return sign, np.asarray(logabs, dtype=x.real.dtype)

    @staticmethod
    @_fused("linalg.slogdet", _slogdet_jvp, _slogdet_recorded)
    def backward(ctx, gsign, glog):
        return _c(glog._data[..., None, None] * _H(_inverse("linalg.slogdet", ctx.x)))


class Eigh(Function):
    """Eigenvalues (ascending) and orthonormal eigenvectors of a symmetric matrix.

    Backward (PyTorch's): ``V (diag(gL) + skew(V^T gV) / E) V^T`` with ``E_ij = L_j - L_i`` and
    ``skew(X) = (X - X^T) / 2``, so the gradient of a symmetric input is symmetric."""

    _raw = True
    _node_name, _profiled_as = "LinalgEighBackward0", "aten::linalg_eigh"

    @staticmethod
    def forward(ctx, a, uplo):
        w, v = lapack(np.linalg.eigh, a._data, UPLO=uplo)
        ctx.w, ctx.v, ctx.inputs, ctx.uplo = w, v, (a,), uplo
        return w, v

    @staticmethod
    @_fused("linalg.eigh", _eigh_jvp, _eigh_recorded)
    def backward(ctx, gw, gv):
        w, v = ctx.w, ctx.v
        if v.dtype.kind == "c":
            return _c(_eigh_backward_complex(w, v, gw, gv)), None
        inner = np.zeros(v.shape, dtype=v.dtype)
        if gv is not None:
            e = w[..., None, :] - w[..., :, None]
            n = w.shape[-1]
            e[..., np.arange(n), np.arange(n)] = 1
            vtgv = _T(v) @ gv._data
            inner = 0.5 * (vtgv - _T(vtgv)) / e
            inner[..., np.arange(n), np.arange(n)] = 0
        if gw is not None:
            inner = inner + gw._data[..., None] * np.eye(w.shape[-1], dtype=v.dtype)
        return _c(v @ inner @ _T(v)), None


def _eigh_backward_complex(w: np.ndarray, v: np.ndarray, gw: Any, gv: Any) -> np.ndarray:
    """PyTorch's eigh backward for Hermitian ``A``: ``V (diag(gL) + skew(V^H gV) / E) V^H``
    with ``skew(X) = (X - X^H) / 2``; a loss that depends on the eigenvectors' phases raises."""
    n = w.shape[-1]
    inner = np.zeros(v.shape, dtype=v.dtype)
    if gv is not None:
        vhgv = _H(v) @ gv._data
        diag = np.diagonal(vhgv, axis1=-2, axis2=-1)
        if np.abs(diag.imag).max(initial=0) > 1e-2 * (1 + np.abs(diag).max(initial=0)):
            raise RuntimeError(
                "linalg_eigh_backward: The eigenvectors in the complex case are specified up to "
                "multiplication by e^{i phi}. The specified loss function depends on this quantity, "
                "so it is ill-defined."
            )
        e = w[..., None, :] - w[..., :, None]
        e[..., np.arange(n), np.arange(n)] = 1
        inner = 0.5 * (vhgv - _H(vhgv)) / e
        inner[..., np.arange(n), np.arange(n)] = 0
    if gw is not None:
        inner = inner + gw._data[..., None] * np.eye(n, dtype=v.dtype)
    return v @ inner @ _H(v)


_SVD_FULL = (
    "The derivative of linalg.svd depends on the full U and Vh "
    "only through their first k columns when full_matrices=True; "
    "use full_matrices=False"
)


def _check_svd_phase(uhgu: Any, vhgv: Any) -> None:
    """PyTorch's check that a loss of a complex SVD does not depend on the singular vectors'
    phases (``Im diag(U^H gU) = -Im diag(V^H gV)``), given ``skew(U^H gU)``, ``skew(V^H gV)``
    (arrays, or None for an output without a gradient)."""
    im_u = 0 if uhgu is None else np.diagonal(uhgu, axis1=-2, axis2=-1).imag
    im_v = 0 if vhgv is None else np.diagonal(vhgv, axis1=-2, axis2=-1).imag
    if not np.allclose(im_u, -im_v, rtol=1e-2, atol=1e-2):
        raise RuntimeError(
            "svd_backward: The singular vectors in the complex case are specified up to multiplication "
            "by e^{i phi}. The specified loss function depends on this phase term, making it ill-defined."
        )


class SVD(Function):
    """Reduced SVD ``A = U diag(S) Vh``; PyTorch's ``svd_backward``."""

    _raw = True
    _node_name, _profiled_as = "LinalgSvdBackward0", "aten::linalg_svd"

    @staticmethod
    def forward(ctx, a, full_matrices):
        u, s, vh = lapack(np.linalg.svd, a._data, full_matrices=full_matrices)
        k = s.shape[-1]
        ctx.u, ctx.s, ctx.vh, ctx.inputs = u[..., :k], s, vh[..., :k, :], (a,)
        ctx.full, ctx.outputs = full_matrices, (u, s, vh)
        return u, s, vh

    @staticmethod
    @_fused("linalg.svd", _svd_jvp, _svd_recorded)
    def backward(ctx, gu, gs, gvh):
        u, s, vh = ctx.u, ctx.s, ctx.vh
        m, n, k = u.shape[-2], vh.shape[-1], s.shape[-1]
        if gu is not None:
            gu = gu._data[..., :k]
        if gvh is not None:
            gvh = gvh._data[..., :k, :]
        if u.dtype.kind == "c":  # svdvals: U and Vh get (materialised) zero gradients
            gu = gu if gu is not None and gu.any() else None
            gvh = gvh if gvh is not None and gvh.any() else None
        if gu is None and gvh is None:
            return _c((u * gs._data[..., None, :]) @ vh), None
        if ctx.full and ((gu is not None and m > k) or (gvh is not None and n > k)):
            raise NotImplementedError(_SVD_FULL)
        v, gv = _H(vh), (_H(gvh) if gvh is not None else None)

        def skew(x):
            return x - _H(x)

        uhgu = skew(_H(u) @ gu) if gu is not None else None
        vhgv = skew(_H(v) @ gv) if gv is not None else None
        if u.dtype.kind == "c":
            _check_svd_phase(uhgu, vhgv)
        s2 = s * s
        e = s2[..., None, :] - s2[..., :, None]
        e[..., np.arange(k), np.arange(k)] = 1
        if uhgu is not None and vhgv is not None:
            ret = (uhgu * s[..., None, :] + s[..., :, None] * vhgv) / e
        elif uhgu is not None:
            ret = uhgu / e * s[..., None, :]
        else:
            ret = s[..., :, None] * (vhgv / e)
        if gs is not None:
            ret = ret + gs._data[..., None] * np.eye(k, dtype=u.dtype)
        if u.dtype.kind == "c" and uhgu is not None:  # the phase term
            idx = np.arange(k)
            ret[..., idx, idx] += np.diagonal(uhgu, axis1=-2, axis2=-1) / (2 * s)
        if m > k and gu is not None:
            ga = u @ ret
            gus = gu / s[..., None, :]
            ga = (ga + gus - u @ (_H(u) @ gus)) @ vh
        elif n > k and gv is not None:
            ga = ret @ vh
            gvs = gv / s[..., None, :]
            ga = u @ (ga + _H(gvs) - (_H(gvs) @ v) @ vh)
        else:
            ga = u @ ret @ vh
        return _c(ga), None


def _qr_backward_tall(
    q: np.ndarray, r: np.ndarray, gq: np.ndarray | None, gr: np.ndarray | None
) -> np.ndarray:
    """PyTorch's QR backward for ``m >= n``: ``[gQ + Q copyltu(M)] R^{-T}``."""
    if gq is not None and gr is not None:
        m = r @ _T(gr) - _T(gq) @ q
    elif gq is not None:
        m = -_T(gq) @ q
    else:
        m = r @ _T(gr)
    low = np.tril(m, -1)
    m = low + _T(low) + np.eye(m.shape[-1], dtype=m.dtype) * np.diagonal(m, axis1=-2, axis2=-1)[..., None, :]
    b = q @ m
    if gq is not None:
        b = b + gq
    return _T(tri_solve(r, _T(b), upper=True))  # b R^{-T}


class QR(Function):
    """``A = QR`` (modes 'reduced' and 'complete'); gradients for 'reduced' and for square or
    wide 'complete' results."""

    _raw = True
    _node_name, _profiled_as = "LinalgQrBackward0", "aten::linalg_qr"

    @staticmethod
    def forward(ctx, a, mode):
        q, r = lapack(np.linalg.qr, a._data, mode="complete" if mode == "complete" else "reduced")
        ctx.q, ctx.r, ctx.mode, ctx.inputs = q, r, mode, (a,)
        return q, r

    @staticmethod
    @_fused("linalg.qr", _qr_jvp, _qr_recorded)
    def backward(ctx, gq, gr):
        q, r = ctx.q, ctx.r
        m, n = q.shape[-2], r.shape[-1]
        if ctx.mode == "complete" and m > n:
            raise NotImplementedError(
                "The derivative of linalg.qr depends on Q, which is not "
                "computed when mode='r'; with mode='complete' it is only "
                "defined when nrows <= ncols"
            )
        gq = gq._data if gq is not None else None
        gr = gr._data if gr is not None else None
        if m >= n:
            return _c(_qr_backward_tall(q, r, gq, gr)), None
        # wide: A = [X | Y], X = Q U, Y = Q V with U = R[:, :m] square, V = R[:, m:]
        u, v = r[..., :, :m], r[..., :, m:]
        gu = gr[..., :, :m] if gr is not None else None
        gv = gr[..., :, m:] if gr is not None else None
        y = q @ v
        gq_x = gq if gq is not None else np.zeros_like(q)
        if gv is not None:
            gq_x = gq_x + y @ _T(gv)
        gx = _qr_backward_tall(q, u, gq_x, gu)
        gy = q @ gv if gv is not None else np.zeros(y.shape, dtype=q.dtype)
        return _c(np.concatenate([gx, gy], axis=-1)), None


class Cholesky(Function):
    """``A = L L^T``; backward ``L^{-T} Phi(L^T gL) L^{-1}`` symmetrised (Phi: lower
    triangle with the diagonal halved)."""

    _raw = True

    @staticmethod
    def forward(ctx, a, upper):
        x = a._data
        try:
            low = lapack(np.linalg.cholesky, x)
        except np.linalg.LinAlgError:
            raise _not_pd("linalg.cholesky", x) from None
        ctx.low, ctx.inputs = low, (a,)
        ctx.upper = upper
        return _T(low).copy() if upper else low

    @staticmethod
    @_fused("linalg.cholesky", _cholesky_jvp, _cholesky_recorded)
    def backward(ctx, g):
        low = ctx.low
        gl = _T(g._data) if ctx.upper else g._data
        phi = np.tril(_T(low) @ gl)
        phi = phi - 0.5 * np.eye(low.shape[-1], dtype=low.dtype) * phi
        tmp = tri_solve(_T(low), phi, upper=True)  # L^{-T} Phi
        ga = _T(tri_solve(_T(low), _T(tmp), upper=True))  # (L^{-T} Phi) L^{-1}
        return _c(0.5 * (ga + _T(ga))), None


def _not_pd(name: str, x: np.ndarray) -> LinAlgError:
    """PyTorch's message naming the first leading minor that is not positive-definite."""
    flat = x.reshape((-1,) + x.shape[-2:])
    for b, mat in enumerate(flat):
        for order in range(1, mat.shape[-1] + 1):
            try:
                lapack(np.linalg.cholesky, mat[:order, :order])
            except np.linalg.LinAlgError:
                pre = f"(Batch element {b}): " if x.ndim > 2 else ""
                return LinAlgError(
                    f"{name}: {pre}The factorization could not be completed because "
                    f"the input is not positive-definite (the leading minor of order "
                    f"{order} is not positive-definite)."
                )
    return LinAlgError(f"{name}: the input is not positive-definite")


# ---------------------------------------------------------------------- matrix exponential
_PADE13 = (
    64764752532480000.0,
    32382376266240000.0,
    7771770303897600.0,
    1187353796428800.0,
    129060195264000.0,
    10559470521600.0,
    670442572800.0,
    33522128640.0,
    1323241920.0,
    40840800.0,
    960960.0,
    16380.0,
    182.0,
    1.0,
)


def expm_np(a: np.ndarray) -> np.ndarray:
    """Matrix exponential of a batch: Padé(13) with scaling and squaring (Higham 2005)."""
    n = a.shape[-1]
    eye = np.eye(n, dtype=a.dtype)
    norm = np.abs(a).sum(-2).max(-1) if a.size else np.zeros(a.shape[:-2])
    s = np.maximum(0, np.ceil(np.log2(np.maximum(norm, 1e-300) / 5.371920351148152))).astype(int)
    a = a / (2.0**s)[..., None, None]
    b = _PADE13
    a2 = a @ a
    a4 = a2 @ a2
    a6 = a4 @ a2
    u = a @ (a6 @ (b[13] * a6 + b[11] * a4 + b[9] * a2) + b[7] * a6 + b[5] * a4 + b[3] * a2 + b[1] * eye)
    v = a6 @ (b[12] * a6 + b[10] * a4 + b[8] * a2) + b[6] * a6 + b[4] * a4 + b[2] * a2 + b[0] * eye
    r = lapack(np.linalg.solve, v - u, v + u)
    for k in range(int(s.max()) if s.size else 0):
        sq = r @ r
        r = np.where((s > k)[..., None, None], sq, r)
    return r


class MatrixExp(Function):
    """``exp(A)``; the gradient is the upper-right block of ``exp([[A^H, g], [0, A^H]])``
    (``A^T`` for real ``A``). Computed in double precision (complex128 for complex ``A``)."""

    _raw = True
    _node_name, _profiled_as = "LinalgMatrixExpBackward0", "aten::linalg_matrix_exp"

    @staticmethod
    def forward(ctx, a):
        x = a._data
        ctx.x, ctx.inputs = x, (a,)
        wide = np.complex128 if x.dtype.kind == "c" else np.float64
        return expm_np(x.astype(wide)).astype(x.dtype) if x.dtype != wide else expm_np(x)

    @staticmethod
    @_fused("linalg.matrix_exp", _matrix_exp_jvp, _matrix_exp_recorded)
    def backward(ctx, g):
        x = ctx.x
        n = x.shape[-1]
        big = np.zeros(
            x.shape[:-2] + (2 * n, 2 * n), dtype=np.complex128 if x.dtype.kind == "c" else np.float64
        )
        big[..., :n, :n] = big[..., n:, n:] = _H(x)
        big[..., :n, n:] = g._data
        return _c(expm_np(big)[..., :n, n:].astype(x.dtype))
