"""``nn.utils.parametrizations``: ``weight_norm``, ``spectral_norm`` and ``orthogonal`` as
parametrizations (see :mod:`disttorch.nn.utils.parametrize`), with PyTorch's state-dict
layout: ``parametrizations.weight.original0/original1`` (weight norm: g and v),
``parametrizations.weight.original`` plus ``parametrizations.weight.0._u/_v`` (spectral
norm), ``parametrizations.weight.original`` plus ``...0.base`` (orthogonal).

The orthogonal maps are composed from differentiable tensor ops: the matrix exponential
by scaling and squaring of a Taylor polynomial, the Cayley map through a linear solve
whose backward is the solve's adjoint, and a product of Householder reflections.
"""

from __future__ import annotations

import math

import numpy as np

from ... import _random
from ..._tensor import Tensor
from ...autograd.function import Function
from ...ops import shape as _shape
from ..functional.normalize import normalize
from ..modules.conv import ConvTranspose1d, ConvTranspose2d, ConvTranspose3d
from ..modules.module import Module
from . import parametrize
from ._norms import as_matrix, norm_except_dim, weight_norm_value

__all__ = ["orthogonal", "spectral_norm", "weight_norm"]


# ---------------------------------------------------------------------- weight norm
class _WeightNorm(Module):
    def __init__(self, dim: int | None = 0) -> None:
        super().__init__()
        self.dim = -1 if dim is None else dim

    def forward(self, weight_g: Tensor, weight_v: Tensor) -> Tensor:
        return weight_norm_value(weight_g, weight_v, self.dim)

    def right_inverse(self, weight: Tensor) -> tuple:
        return norm_except_dim(weight, self.dim), weight


def weight_norm(module: Module, name: str = "weight", dim: int | None = 0) -> Module:
    """Reparametrize ``module.<name>`` as ``g * v / ||v||`` (norm over every dim but
    ``dim``; None: the whole tensor). ``g`` and ``v`` are
    ``module.parametrizations.<name>.original0`` and ``original1``."""
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):  # (PyTorch's register_parametrization says it)
        raise ValueError(  # noqa: TRY004
            f"Module '{module}' does not have a parameter, a buffer, or a parametrized element with name '{name}'"
        )
    if dim is not None and dim < -1:
        dim += weight.ndim
    parametrize.register_parametrization(module, name, _WeightNorm(dim), unsafe=True)
    return module


# ---------------------------------------------------------------------- spectral norm
class _SpectralNorm(Module):
    def __init__(self, weight: Tensor, n_power_iterations: int = 1, dim: int = 0, eps: float = 1e-12) -> None:
        super().__init__()
        ndim = weight.ndim
        if dim >= ndim or dim < -ndim:
            raise IndexError(
                f"Dimension out of range (expected to be in range of [-{ndim}, {ndim - 1}] but got {dim})"
            )
        if n_power_iterations <= 0:
            raise ValueError(
                f"Expected n_power_iterations to be positive, but got n_power_iterations={n_power_iterations}"
            )
        self.dim = dim if dim >= 0 else dim + ndim
        self.eps, self.n_power_iterations = eps, n_power_iterations
        if ndim > 1:
            mat = as_matrix(weight, self.dim)._data
            h, w = mat.shape
            engine = _random._gen(None)  # PyTorch: new_empty(h).normal_(0, 1), then w
            self.register_buffer("_u", self._unit(_random._normal_array(engine, (h,), mat.dtype, 0.0, 1.0)))
            self.register_buffer("_v", self._unit(_random._normal_array(engine, (w,), mat.dtype, 0.0, 1.0)))
            self._power_method(mat, 15)

    def _unit(self, a: np.ndarray) -> Tensor:
        return Tensor._make(a / max(float(np.linalg.norm(a)), self.eps))

    def _power_method(self, mat: np.ndarray, n: int) -> None:
        for _ in range(n):  # in place: the buffers are module state
            self._u._data[...] = self._unit(mat @ self._v._data)._data
            self._v._data[...] = self._unit(mat.T @ self._u._data)._data
        self._u._bump_version()
        self._v._bump_version()

    def forward(self, weight: Tensor) -> Tensor:
        if weight.ndim == 1:
            return normalize(weight, dim=0, eps=self.eps)
        mat = as_matrix(weight, self.dim)
        if self.training:
            self._power_method(mat._data, self.n_power_iterations)
        u, v = self._u.clone(), self._v.clone()
        sigma = (u * mat.matmul(v)).sum()
        return weight / sigma

    def right_inverse(self, value: Tensor) -> Tensor:
        return value


def spectral_norm(
    module: Module,
    name: str = "weight",
    n_power_iterations: int = 1,
    eps: float = 1e-12,
    dim: int | None = None,
) -> Module:
    """Divide ``module.<name>`` by its largest singular value, estimated by power iteration
    (``n_power_iterations`` steps per training forward; 15 at registration). ``dim``
    defaults to 0, or 1 for transposed convolutions."""
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")  # noqa: TRY004
    if dim is None:
        dim = 1 if isinstance(module, (ConvTranspose1d, ConvTranspose2d, ConvTranspose3d)) else 0
    parametrize.register_parametrization(module, name, _SpectralNorm(weight, n_power_iterations, dim, eps))
    return module


# ---------------------------------------------------------------------- orthogonal
class _Solve(Function):
    """``X = A^-1 B`` for square ``A``; backward ``gB = A^-T g``, ``gA = -gB X^T``."""

    _raw = True

    @staticmethod
    def forward(ctx, a, b):
        x = np.linalg.solve(a._data, b._data)
        ctx.a, ctx.x = a._data, x
        return x

    @staticmethod
    def backward(ctx, g):
        gb = np.linalg.solve(np.swapaxes(ctx.a, -1, -2), g._data)
        return Tensor._make(-gb @ np.swapaxes(ctx.x, -1, -2)), Tensor._make(gb)


def _eye(n: int, like: Tensor) -> Tensor:
    return Tensor._make(np.eye(n, dtype=like._data.dtype))


def _matrix_exp(a: Tensor) -> Tensor:
    """``exp(A)``: scale by ``2^-s`` until the 1-norm is below 1/2, Taylor to degree 18,
    square ``s`` times (differentiable through the tensor ops)."""
    norm = float(np.abs(a._data).sum(axis=-2).max()) if a._data.size else 0.0
    s = max(0, math.ceil(math.log2(norm / 0.5))) if norm > 0.5 else 0
    x = a / (2**s)
    eye = _eye(a.shape[-1], a)
    result, term = eye, eye
    for k in range(1, 19):
        term = term.matmul(x) / k
        result = result + term
    for _ in range(s):
        result = result.matmul(result)
    return result


def _householder_product(a: Tensor, tau: Tensor) -> Tensor:
    """The first ``k`` columns of ``H_0 ... H_{k-1}``, ``H_i = I - tau_i v_i v_i^T`` with
    ``v_i`` the i-th column of ``a`` below the diagonal and 1 on it."""
    n, k = a.shape[-2], a.shape[-1]
    q = Tensor._make(np.eye(n, k, dtype=a._data.dtype))
    unit = np.eye(n, k, dtype=a._data.dtype)
    for i in reversed(range(k)):
        v = a[..., :, i] + Tensor._make(unit[:, i])
        q = q - (tau[..., i].unsqueeze(-1).unsqueeze(-1) * v.unsqueeze(-1)) * v.unsqueeze(-2).matmul(q)
    return q


def _make_orthogonal(a: np.ndarray) -> np.ndarray:
    q, r = np.linalg.qr(a)
    return q * np.sign(np.diagonal(r, axis1=-2, axis2=-1))[..., None, :]


class _Orthogonal(Module):
    def __init__(self, weight: Tensor, orthogonal_map: str, *, use_trivialization: bool = True) -> None:
        super().__init__()
        self.shape = tuple(weight.shape)
        self.orthogonal_map = orthogonal_map
        if use_trivialization:
            self.register_buffer("base", None)

    def forward(self, x: Tensor) -> Tensor:
        n, k = x.shape[-2], x.shape[-1]
        transposed = n < k
        if transposed:
            x = x.transpose(-2, -1)
            n, k = k, n
        if self.orthogonal_map in ("matrix_exp", "cayley"):
            x = x.tril()
            if n != k:
                x = _shape.cat([x, Tensor._make(np.zeros(tuple(x.shape[:-1]) + (n - k,), x._data.dtype))], -1)
            a = x - x.transpose(-2, -1)
            if self.orthogonal_map == "matrix_exp":
                q = _matrix_exp(a)
            else:
                eye = _eye(n, a)
                q = _Solve.apply(eye - a * 0.5, eye + a * 0.5)
            if n != k:
                q = q[..., :k]
        else:
            a = x.tril(-1)
            tau = 2.0 / (1.0 + (a * a).sum(-2))
            q = _householder_product(a, tau)
            signs = np.trunc(np.diagonal(x._data, axis1=-2, axis2=-1))
            q = q * Tensor._make(signs[..., None, :].astype(q._data.dtype))
        if self.__dict__["_buffers"].get("base") is not None:
            q = self.base.matmul(q)
        if transposed:
            q = q.transpose(-2, -1)
        return q

    def right_inverse(self, q: Tensor) -> Tensor:
        if tuple(q.shape) != self.shape:
            raise ValueError(
                f"Expected a matrix or batch of matrices of shape {self.shape}. "
                f"Got a tensor of shape {tuple(q.shape)}."
            )
        q_init = q
        arr = q._data
        n, k = arr.shape[-2], arr.shape[-1]
        if n < k:
            arr = np.swapaxes(arr, -1, -2)
            n, k = k, n
        if "base" not in self._buffers:
            raise NotImplementedError(
                "assigning to an orthogonal parametrization with "
                "use_trivialization=False is not supported by disttorch"
            )
        if n == k:
            gram = np.swapaxes(arr, -1, -2) @ arr
            ortho = np.allclose(gram, np.eye(k), atol=10.0 * n * np.finfo(arr.dtype).eps)
            base = arr.copy() if ortho else _make_orthogonal(arr)
        else:
            extra = _random._normal_array(
                _random._gen(None), arr.shape[:-2] + (n, n - k), arr.dtype, 0.0, 1.0
            )
            base = _make_orthogonal(np.concatenate([arr, extra], axis=-1))
        self.base = Tensor._make(base)
        neg_id = np.zeros(q_init._data.shape, dtype=arr.dtype)
        diag = np.arange(min(neg_id.shape[-2:]))
        neg_id[..., diag, diag] = -1.0
        return Tensor._make(neg_id)


def orthogonal(
    module: Module,
    name: str = "weight",
    orthogonal_map: str | None = None,
    *,
    use_trivialization: bool = True,
) -> Module:
    """Constrain the matrix (or batch of matrices) ``module.<name>`` to be orthogonal
    (semi-orthogonal when not square) through ``orthogonal_map``: ``'matrix_exp'``,
    ``'cayley'`` or ``'householder'`` (default: matrix_exp for square, householder
    otherwise). With ``use_trivialization`` (default) the map starts at the current
    weight, made orthogonal, kept as the buffer ``base``."""
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")  # noqa: TRY004
    if weight.ndim < 2:
        raise ValueError(f"Expected a matrix or batch of matrices. Got a tensor of {weight.ndim} dimensions.")
    if orthogonal_map is None:
        orthogonal_map = "matrix_exp" if weight.shape[-2] == weight.shape[-1] else "householder"
    if orthogonal_map not in ("matrix_exp", "cayley", "householder"):
        raise ValueError(
            f'orthogonal_map has to be one of "matrix_exp", "cayley", "householder". Got: {orthogonal_map}'
        )
    orth = _Orthogonal(weight, orthogonal_map, use_trivialization=use_trivialization)
    parametrize.register_parametrization(module, name, orth, unsafe=True)
    return module
