"""Products of a 2-D sparse COO matrix and a dense one that give sparse results:
``hspmm`` (a hybrid COO tensor of the product's rows), ``smm`` and ``sspaddmm`` (COO
tensors holding every column of those rows, after ``input``'s own entries).

The rows are those where the sparse matrix has entries, in increasing order; their
product is :class:`~disttorch.ops.sparse.SpMM`'s, so gradients reach the sparse values and
the dense matrix (PyTorch has no derivative for these three ops: its backward raises).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._tensor import Tensor
from .dtype_rules import require_same_scalar_type
from .shape import cat
from .sparse import SparseTensor, SpMM
from .sparse_base import SparseBase

__all__ = ["hspmm", "smm", "sspaddmm"]

TENSOR_METHODS = ("smm", "sspaddmm")


def _check_operands(name: str, mat1: Any, mat2: Any, sparse_arg: int) -> None:
    """PyTorch's checks: ``mat1`` a sparse COO matrix (two sparse dims, no dense ones),
    ``mat2`` a dense matrix of as many rows as ``mat1`` has columns, of ``mat1``'s dtype."""
    if not isinstance(mat1, SparseTensor):
        if name == "hspmm":
            raise NotImplementedError(
                "Could not run 'aten::hspmm' with arguments from the 'CPU' backend: mat1 must be a "
                "sparse COO tensor (use .to_sparse())"
            )
        raise RuntimeError("tensor.sspaddmm(...) can only be called on sparse tensors")
    if mat1.sparse_dim() != 2 or mat1.dense_dim():
        raise RuntimeError(
            f"{name}: Argument #{sparse_arg}: matrices expected, got {mat1.sparse_dim()}D tensor"
        )
    if not isinstance(mat2, Tensor) or isinstance(mat2, SparseBase) or mat2.dim() != 2:
        got = f"{mat2.dim()}D tensor" if isinstance(mat2, Tensor) else type(mat2).__name__
        raise RuntimeError(f"{name}: Argument #{sparse_arg + 1}: dense matrix expected, got {got}")
    if mat2.shape[0] != mat1.shape[1]:
        raise RuntimeError(
            f"{name}: Argument #{sparse_arg + 1}: Expected dim 0 size {mat1.shape[1]}, got {mat2.shape[0]}"
        )
    require_same_scalar_type(mat1._sp_values, mat2)


def _product_rows(mat1: SparseTensor, mat2: Tensor) -> tuple[np.ndarray, Tensor]:
    """The rows of ``mat1`` that hold entries (increasing) and those rows of ``mat1 @ mat2``."""
    rows = np.unique(mat1._sp_indices[0])
    product = SpMM.apply(mat1._sp_values, mat2, mat1._sp_indices, mat1._sp_shape)
    return rows, product[Tensor._make(rows)]


def hspmm(mat1: Tensor, mat2: Tensor) -> SparseTensor:
    """``mat1 @ mat2`` of a sparse COO matrix and a dense one, as a hybrid COO tensor (one
    sparse dim, one dense dim): the product's rows where ``mat1`` has entries."""
    _check_operands("hspmm", mat1, mat2, 2)
    rows, values = _product_rows(mat1, mat2)
    return SparseTensor._build(rows[None], values, (mat1.shape[0], mat2.shape[1]), False)


def sspaddmm(input: Tensor, mat1: Tensor, mat2: Tensor, *, beta: Any = 1, alpha: Any = 1) -> SparseTensor:
    """``beta * input + alpha * (mat1 @ mat2)`` as a sparse COO tensor: ``input``'s entries
    (scaled by ``beta``, not coalesced) followed by every column of the product's rows where
    the sparse ``mat1`` has entries (scaled by ``alpha``)."""
    if not isinstance(input, SparseTensor):
        raise RuntimeError("sspaddmm: input must be a sparse COO tensor (use .to_sparse())")
    _check_operands("sspaddmm", mat1, mat2, 2)
    n, p = mat1.shape[0], mat2.shape[1]
    for dim, want in ((0, n), (1, p)):
        if input.dim() != 2 or input.shape[dim] != want:
            got = input.shape[dim] if input.dim() > dim else None
            raise RuntimeError(f"sspaddmm: Argument #1: Expected dim {dim} size {want}, got {got}")
    rows, product = _product_rows(mat1, mat2)
    grid = np.stack([np.repeat(rows, p), np.tile(np.arange(p), len(rows))])
    values = cat([input._sp_values * beta, (product * alpha).reshape(-1)])
    return SparseTensor._build(np.concatenate([input._sp_indices, grid], axis=1), values, (n, p), False)


def smm(input: Tensor, mat2: Tensor) -> SparseTensor:
    """``input @ mat2`` of a sparse COO matrix and a dense one, as a sparse COO tensor holding
    every column of the rows where ``input`` has entries."""
    _check_operands("smm", input, mat2, 1)
    values = input._sp_values
    empty = SparseTensor._build(
        np.zeros((2, 0), np.int64), values.new_zeros(0), (input.shape[0], mat2.shape[1]), True
    )
    return sspaddmm(empty, input, mat2, beta=0)
