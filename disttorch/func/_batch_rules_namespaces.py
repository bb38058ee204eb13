"""``vmap``'s batching rules for ``torch.linalg``, ``torch.special`` and ``torch.fft``, keyed
``"linalg.<name>"`` (and so on): a function of those namespaces finds only its own rules (the
names repeat ``torch``'s with other signatures: ``linalg.norm``, ``linalg.diagonal``), except
``special``'s, whose other functions are ``torch``'s under the same name.

The matrix functions take any leading dims, so they run on the value as it is; ``solve``
pads its operands' batch dims to a common rank and makes a vector right-hand side a matrix;
the norms and transforms shift their dims past the batch (``None`` meaning all, or the last
``len(s)``, of the logical dims)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .._tensor import Tensor
from ._batch_pointwise import pad_to, pointwise
from ._batch_rules_nn import _batched_only, _bind
from ._batch_rules_shape import _ALL, _on_matrices, _real_dims, dim_op
from ._batched import Level, level_of, wrap, wrap_result

__all__ = ["NAMESPACE_RULES"]


def _with_dims(func: Callable, level: Level, args: tuple, kwargs: dict, dims_of: Callable) -> Any:
    """``func`` on the value of its first (only batched) argument, its ``dim`` argument given
    by ``dims_of(bound arguments, logical rank)`` and shifted past the batch."""
    b = _bind(func, args, kwargs)
    if b is None:
        return NotImplemented
    first = next(iter(b))
    x = b[first]
    if level_of(x) is not level or not _batched_only(level, b, first):
        return NotImplemented
    rank = len(x.shape)
    dim = dims_of(b, rank)
    if dim is NotImplemented:
        return NotImplemented
    b[first], b["dim"] = x._bt_value, _real_dims(dim, rank)
    return wrap_result(func(**b), level)


def _norm_dims(b: dict, rank: int) -> Any:
    """``linalg.norm``: no ``dim`` is all dims for no ``ord``, else those of a vector or matrix."""
    if b["dim"] is not None:
        return b["dim"]
    if rank not in (1, 2):
        return NotImplemented
    return tuple(range(rank)) if b["ord"] is None else (-1,) if rank == 1 else (-2, -1)


def _fftn_dims(b: dict, rank: int) -> Any:
    """``fftn`` and kin: no ``dim`` is every dim, or the last ``len(s)``."""
    if b["dim"] is not None:
        return b["dim"]
    return tuple(range(rank - len(b["s"]), rank)) if b.get("s") is not None else tuple(range(rank))


def _shift_dims(b: dict, rank: int) -> Any:
    """``fftshift``/``ifftshift``: no ``dim`` is every dim."""
    return tuple(range(rank)) if b["dim"] is None else b["dim"]


def _norm(func: Callable, level: Level, args: tuple, kwargs: dict) -> Any:
    out = _with_dims(func, level, args, kwargs, _norm_dims)
    if out is NotImplemented and level_of(args[0]) is level and len(args[0].shape) > 2:
        b = _bind(func, args, kwargs)  # no dim, no ord, any rank: the 2-norm of the flattened values
        if b is not None and b["dim"] is None and b["ord"] is None and _batched_only(level, b, next(iter(b))):
            v = args[0]._bt_value.reshape(level.size, -1)
            out = func(v, dim=1, keepdim=b["keepdim"], dtype=b.get("dtype"))
            return wrap(out.reshape(level.size, *(1,) * len(args[0].shape)) if b["keepdim"] else out, level)
    return out


def _solve(func: Callable, level: Level, args: tuple, kwargs: dict) -> Any:
    """``linalg.solve(A, B, *, left)``: a vector ``B`` (1-D, or A's shape without its last dim)
    made a column, the batched values padded after their batch dim to a common rank."""
    if len(args) != 2 or set(kwargs) - {"left"}:
        return NotImplemented
    a, b = args
    if len(a.shape) < 2:
        return NotImplemented
    vector = len(b.shape) == 1 or (len(b.shape) == len(a.shape) - 1 and tuple(b.shape) == tuple(a.shape[:-1]))
    if vector and not kwargs.get("left", True):
        return NotImplemented
    rank = max(len(a.shape), len(b.shape) + vector)
    av = pad_to(a, rank) if level_of(a) is level else a
    if level_of(b) is level:
        bv = b._bt_value.unsqueeze(-1) if vector else b._bt_value
        short = rank - len(b.shape) - vector
        bv = bv.reshape((level.size,) + (1,) * short + tuple(bv.shape[1:])) if short > 0 else bv
    else:
        bv = b.unsqueeze(-1) if vector else b
    out = func(av, bv, **kwargs)
    return wrap(out.squeeze(-1) if vector else out, level)


def _matrix_pair(func: Callable, level: Level, args: tuple, kwargs: dict) -> Any:
    """A function of two stacks of matrices whose leading dims broadcast (``solve_triangular``,
    ``lstsq``): on both values expanded to the batch and padded to a common rank. Each result
    holds the batch in front, but an empty one (``lstsq``'s residuals and singular values for
    some drivers), one empty tensor per sample."""
    if len(args) != 2 or "out" in kwargs:
        return NotImplemented
    a, b = args
    if len(a.shape) < 2 or len(b.shape) < 2:
        return NotImplemented
    rank = max(len(a.shape), len(b.shape))
    values = [
        pad_to(t, rank) if level_of(t) is level else t.expand(level.size, *(1,) * (rank - t.dim()), *t.shape)
        for t in (a, b)
    ]
    out = func(*values, **kwargs)
    if isinstance(out, Tensor):
        return wrap(out, level)
    fields = [f if f.dim() and f.shape[0] == level.size else f.new_empty((level.size, *f.shape)) for f in out]
    return wrap_result(type(out)._make(fields) if hasattr(out, "_make") else tuple(fields), level)


#: special's pointwise functions that torch does not hold under the same name
_SPECIAL_POINTWISE = (
    "airy_ai bessel_j0 bessel_j1 bessel_y0 bessel_y1 entr erfcx expit gammainc gammaincc gammaln i0e "
    "i1 i1e log_ndtr modified_bessel_i0 modified_bessel_i1 modified_bessel_k0 modified_bessel_k1 ndtr "
    "ndtri psi scaled_modified_bessel_k0 scaled_modified_bessel_k1 spherical_bessel_j0 xlog1py zeta "
    "chebyshev_polynomial_t chebyshev_polynomial_u chebyshev_polynomial_v chebyshev_polynomial_w "
    "hermite_polynomial_h hermite_polynomial_he laguerre_polynomial_l legendre_polynomial_p "
    "shifted_chebyshev_polynomial_t shifted_chebyshev_polynomial_u shifted_chebyshev_polynomial_v "
    "shifted_chebyshev_polynomial_w"
).split()


def _table() -> dict[str, Callable]:
    rules: dict[str, Callable] = {}
    for name in (
        "det slogdet inv inv_ex matrix_exp matrix_power cholesky cholesky_ex eigh eigvalsh eig eigvals "
        "svd svdvals qr pinv lu lu_factor lu_factor_ex"
    ).split():
        rules["linalg." + name] = _on_matrices
    rules["linalg.solve"] = _solve
    rules["linalg.solve_triangular"] = rules["linalg.lstsq"] = _matrix_pair
    rules["linalg.vector_norm"] = dim_op((2, "dim", _ALL))
    rules["linalg.matrix_norm"] = dim_op((2, "dim", (-2, -1)))
    rules["linalg.norm"] = _norm
    rules["linalg.matmul"] = lambda func, level, args, kwargs: (
        args[0] @ args[1] if len(args) == 2 and not kwargs else NotImplemented
    )
    for name in _SPECIAL_POINTWISE:
        rules["special." + name] = pointwise
    for name in "fft ifft rfft irfft hfft ihfft".split():
        rules["fft." + name] = dim_op((2, "dim", -1))
    for name in "fft2 ifft2 rfft2 irfft2 hfft2 ihfft2".split():
        rules["fft." + name] = dim_op((2, "dim", (-2, -1)))
    for name in "fftn ifftn rfftn irfftn hfftn ihfftn".split():
        rules["fft." + name] = lambda func, level, args, kwargs: _with_dims(
            func, level, args, kwargs, _fftn_dims
        )
    for name in "fftshift ifftshift".split():
        rules["fft." + name] = lambda func, level, args, kwargs: _with_dims(
            func, level, args, kwargs, _shift_dims
        )
    return rules


NAMESPACE_RULES = _table()
