"""The rest of ``torch.sparse``: ``sampled_addmm`` (a dense product sampled at a CSR
pattern), ``spdiags`` (a matrix from diagonals), ``spsolve`` and ``mm`` with a ``reduce``
other than the sum.

They are written with differentiable tensor ops over index arrays (plus one Function, the
max/min per row segment), so gradients reach every tensor argument.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._layout import sparse_coo, sparse_csc, sparse_csr
from .._tensor import Tensor
from ..autograd.function import Function
from .sparse import SampledDot, SparseTensor, _check_mm, _segment_sum
from .sparse_base import SparseBase
from .sparse_compressed import _KIND, SparseCompressedTensor, _convert, _kind

__all__ = ["mm_reduce", "sampled_addmm", "spdiags", "spsolve"]


def sampled_addmm(
    input: Tensor,
    mat1: Tensor,
    mat2: Tensor,
    *,
    beta: float = 1.0,
    alpha: float = 1.0,
    out: Tensor | None = None,
) -> SparseCompressedTensor:
    """``beta * input + alpha * (mat1 @ mat2)`` at the positions ``input`` (sparse CSR, possibly
    batched) specifies; the result has ``input``'s pattern. Only the sampled entries of the
    product are computed. Gradients flow to ``mat1``, ``mat2`` and ``input``'s values."""
    if out is not None:
        raise RuntimeError("sampled_addmm: out= is not supported; use the returned tensor")
    if not isinstance(input, SparseCompressedTensor) or input.layout is not sparse_csr:
        if not isinstance(input, SparseBase):
            raise NotImplementedError(
                "sampled_addmm: input must be a sparse CSR tensor, got a Strided (dense) tensor; "
                "convert with .to_sparse_csr()"
            )
        raise RuntimeError(
            f"sampled_addmm: Expected result to have sparse csr layout, but got {_kind(input)}"
        )
    for name, m in (("mat1", mat1), ("mat2", mat2)):
        if not isinstance(m, Tensor) or isinstance(m, SparseBase) or m.dim() < 2:
            raise RuntimeError(f"sampled_addmm: Expected {name} to be a dense matrix (at least 2-D)")
    if mat1.dtype != mat2.dtype:
        raise RuntimeError(
            f"sampled_addmm: Expected mat1 and mat2 to have the same dtype, but got "
            f"{mat1.dtype.scalar_name} and {mat2.dtype.scalar_name}"
        )
    if mat1.shape[-1] != mat2.shape[-2]:
        raise RuntimeError(
            f"sampled_addmm: mat1 and mat2 shapes cannot be multiplied ({mat1.shape[-2]}x{mat1.shape[-1]} "
            f"and {mat2.shape[-2]}x{mat2.shape[-1]})"
        )
    nb = input._nb
    if input.dense_dim():
        raise RuntimeError("sampled_addmm: input must not have dense dimensions")
    batch = list(input.shape[:nb])
    for name, m in (("mat1", mat1), ("mat2", mat2)):
        if list(m.shape[:-2]) != batch:
            raise RuntimeError(
                f"sampled_addmm: Expected self and {name} to have the same batch size, but got "
                f"{batch} and {list(m.shape[:-2])}"
            )
    nr, nc = input.shape[nb], input.shape[nb + 1]
    if mat1.shape[-2] != nr:
        raise RuntimeError("sampled_addmm: self.shape[-2] must match mat1.shape[-2]")
    if mat2.shape[-1] != nc:
        raise RuntimeError("sampled_addmm: self.shape[-1] must match mat2.shape[-1]")
    b, r, c = input._block_coords()
    k = mat1.shape[-1]
    nbatch = int(np.prod(batch, dtype=np.int64))
    m1 = mat1.reshape(nbatch * nr, k)  # batches stacked: row b * nr + r
    m2t = mat2.reshape(nbatch, k, nc).transpose(1, 2).reshape(nbatch * nc, k)  # column b * nc + c
    sampled = SampledDot.apply(m1, m2t, b * nr + r, b * nc + c).reshape(tuple(input._sp_values.shape))
    vals = input._sp_values
    values = sampled * alpha if beta == 0 else vals * beta + sampled * alpha
    return input._with_values(values)


def spdiags(diagonals: Tensor, offsets: Tensor, shape: Any, layout: Any = None) -> Tensor:
    """A 2-D sparse matrix of ``shape`` with row ``i`` of ``diagonals`` on diagonal
    ``offsets[i]`` (0 the main diagonal, > 0 above, < 0 below): element ``(j - offsets[i], j)``
    is ``diagonals[i, j]``, as in SciPy. ``layout`` is ``sparse_coo`` (default), ``sparse_csr``
    or ``sparse_csc``. Gradients flow to ``diagonals``."""
    shape = tuple(int(n) for n in shape)
    if len(shape) != 2:
        raise RuntimeError("Output shape must be 2d")
    if layout not in (None, sparse_coo, sparse_csr, sparse_csc):
        raise RuntimeError(
            f"Only output layouts (Sparse, SparseCsc, SparseCsr) are supported, got {_KIND.get(layout, layout)}"
        )
    if diagonals.dim() not in (1, 2):
        raise RuntimeError("Diagonals must be vector or matrix")
    off = offsets._data if isinstance(offsets, Tensor) else np.asarray(offsets)
    if off.ndim > 1:
        raise RuntimeError("Offsets must be scalar or vector")
    if off.dtype != np.int64:
        raise RuntimeError(f"Offset Tensor must have dtype Long but got {offsets.dtype.scalar_name}")
    diags = diagonals.reshape(1, -1) if diagonals.dim() == 1 else diagonals
    off = off.reshape(-1)
    if diags.shape[0] != off.size:
        raise RuntimeError(
            f"Number of diagonals ({diags.shape[0]}) does not match the number of offsets ({off.size})"
        )
    if np.unique(off).size != off.size:
        raise RuntimeError("Offset tensor contains duplicate values")
    nrows, ncols = shape
    width = min(diags.shape[1], ncols)
    d, j = np.meshgrid(np.arange(off.size), np.arange(width), indexing="ij")
    rows = j - off[:, None]
    keep = (rows >= 0) & (rows < nrows)
    d, j, rows = d[keep], j[keep], rows[keep]
    values = diags[Tensor._make(d), Tensor._make(j)]
    coo = SparseTensor._build(np.stack([rows, j]).reshape(2, -1), values, shape, off.size <= 1)
    return coo if layout in (None, sparse_coo) else _convert(coo, layout, None, None)


def spsolve(input: Tensor, other: Tensor, *, left: bool = True) -> Tensor:
    """Solve ``input @ X = other`` for a sparse CSR ``input``. As PyTorch's CPU build (which
    has no sparse direct solver), this raises ``NotImplementedError``; use
    ``disttorch.linalg.solve(input.to_dense(), other)``."""
    backend = "CPU" if not isinstance(input, SparseBase) else f"{_kind(input)}CPU"
    raise NotImplementedError(
        f"Could not run 'aten::_spsolve' with arguments from the '{backend}' backend: PyTorch's CPU build "
        "has no sparse solver. Use disttorch.linalg.solve(input.to_dense(), other) instead."
    )


class SegmentExtreme(Function):
    """Max (``amax``) or min (``amin``) of the rows of ``x`` that share a segment id, ``n``
    segments (an empty segment gives 0). The gradient goes to the rows that attain the
    extreme, shared equally among ties."""

    _raw = True

    @staticmethod
    def forward(ctx, x, segment, n, op):
        a = x._data
        fill = -np.inf if op == "amax" else np.inf
        out = np.full((n,) + a.shape[1:], fill, dtype=a.dtype)
        (np.maximum if op == "amax" else np.minimum).at(out, segment, a)
        hit = a == out[segment]
        ties = np.zeros(out.shape, dtype=a.dtype)
        np.add.at(ties, segment, hit.astype(a.dtype))
        ctx.weight = hit / np.maximum(ties, 1)[segment]
        ctx.segment = segment
        out[ties == 0] = 0
        return out

    @staticmethod
    def backward(ctx, g):
        return g[ctx.segment] * Tensor._make(ctx.weight), None, None, None


_REDUCTIONS = ("sum", "mean", "amax", "amin")


def mm_reduce(mat1: SparseCompressedTensor, mat2: Tensor, reduce: str) -> Tensor:
    """``out[i] = reduce_k(mat1[i, k] * mat2[k])`` over the specified ``k`` of row ``i`` of a
    2-D CSR ``mat1`` (``reduce`` is ``sum``, ``mean``, ``amax`` or ``amin``; a row with no
    specified element gives 0). Gradients flow to both operands."""
    if reduce not in _REDUCTIONS:
        raise RuntimeError(f"sparse_mm_reduce: reduce type of {reduce} has not been enabled.")
    if reduce == "sum":
        return mat1 @ mat2
    if not isinstance(mat1, SparseCompressedTensor) or mat1.layout is not sparse_csr:
        raise NotImplementedError(
            f"sparse.mm: reduce={reduce!r} is supported for a sparse CSR mat1 only, got {_kind(mat1)}"
        )
    if mat1.dim() != 2 or mat1.dense_dim() or not isinstance(mat2, Tensor) or mat2.dim() != 2:
        raise RuntimeError("sparse.mm: reduce needs a 2-D CSR mat1 and a 2-D dense mat2")
    _check_mm(mat1._sp_shape, tuple(mat2.shape))
    _, rows, cols = mat1._block_coords()
    m = mat1.shape[0]
    prod = mat1._sp_values.unsqueeze(1) * mat2[Tensor._make(cols)]
    if reduce in ("amax", "amin"):
        return SegmentExtreme.apply(prod, rows, m, reduce)
    total = _segment_sum(prod, rows, m)
    count = np.maximum(np.bincount(rows, minlength=m), 1).astype(total._data.dtype)
    return total / Tensor._make(count[:, None])
