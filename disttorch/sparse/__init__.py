"""``disttorch.sparse``: operations on sparse COO tensors (``torch.sparse``).

Sparse tensors themselves (:class:`~disttorch.ops.sparse.SparseTensor`) are made by
``disttorch.sparse_coo_tensor`` or ``Tensor.to_sparse()``.
"""

from __future__ import annotations

from typing import Any

from .._tensor import Tensor
from ..ops.sparse import SparseTensor, _sparse_mm, _sparse_sum, spmm

__all__ = ["addmm", "as_sparse_gradcheck", "check_sparse_tensor_invariants", "mm", "spmm", "sum"]


def mm(mat1: Tensor, mat2: Tensor, reduce: str = "sum") -> Tensor:
    """Product of a sparse COO matrix ``mat1`` with a dense (or sparse) ``mat2``; gradients
    flow to the dense operand and to ``mat1``'s values."""
    if reduce != "sum":
        raise NotImplementedError(f"sparse.mm: reduce={reduce!r} is not supported, only 'sum'")
    if not isinstance(mat1, SparseTensor):
        return mat1.mm(mat2)
    return _sparse_mm(mat1, mat2)


def addmm(mat: Tensor, mat1: Tensor, mat2: Tensor, *, beta: float = 1, alpha: float = 1) -> Tensor:
    """``beta * mat + alpha * (mat1 @ mat2)`` with a sparse ``mat1``."""
    return mat * beta + mm(mat1, mat2) * alpha


def sum(input: Tensor, dim: Any = None, dtype: Any = None) -> Tensor:
    """Sum of a sparse tensor: all elements (a dense 0-dim tensor) or over ``dim``."""
    if not isinstance(input, SparseTensor):
        return input.sum() if dim is None else input.sum(dim)
    return _sparse_sum(input, dim, dtype)


def as_sparse_gradcheck(gradcheck: Any) -> Any:
    """Sparse tensors' gradients are checked through their values: returns ``gradcheck``."""
    return gradcheck


class check_sparse_tensor_invariants:
    """Context manager/decorator accepted for compatibility: ``sparse_coo_tensor`` always
    checks that indices are non-negative and within ``size``."""

    def __init__(self, enable: bool = True) -> None:
        self.enable = enable

    @staticmethod
    def is_enabled() -> bool:
        return True

    @staticmethod
    def enable() -> None:
        pass

    @staticmethod
    def disable() -> None:
        pass

    def __enter__(self) -> check_sparse_tensor_invariants:
        return self

    def __exit__(self, *exc: object) -> None:
        pass

    def __call__(self, fn: Any) -> Any:
        return fn
