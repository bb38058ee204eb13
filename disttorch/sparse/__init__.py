"""``disttorch.sparse``: operations on sparse tensors (``torch.sparse``).

Sparse tensors themselves are made by ``disttorch.sparse_coo_tensor`` /
``Tensor.to_sparse()`` (COO, :class:`~disttorch.ops.sparse.SparseTensor`) and
``disttorch.sparse_csr_tensor`` / ``sparse_csc_tensor`` / ``sparse_bsr_tensor`` /
``sparse_bsc_tensor`` / ``Tensor.to_sparse_csr()``... (compressed layouts,
:class:`~disttorch.ops.sparse_compressed.SparseCompressedTensor`).

Semi-structured (2:4) sparsity (``to_sparse_semi_structured``) is a CUDA-only feature of
PyTorch and is not provided (see ``disttorch._coverage``).
"""

from __future__ import annotations

import functools
from typing import Any

from .._tensor import Tensor
from ..ops.sparse import INVARIANT_CHECKS, SparseTensor, _sparse_sum, spmm
from ..ops.sparse_extras import mm_reduce, sampled_addmm, spdiags, spsolve
from ..ops.sparse_softmax import log_softmax, softmax

__all__ = [
    "addmm",
    "as_sparse_gradcheck",
    "check_sparse_tensor_invariants",
    "log_softmax",
    "mm",
    "sampled_addmm",
    "softmax",
    "spdiags",
    "spmm",
    "spsolve",
    "sum",
]


def mm(mat1: Tensor, mat2: Tensor, reduce: str = "sum") -> Tensor:
    """Product of a sparse matrix ``mat1`` (COO, CSR, CSC, BSR, BSC) with a dense (or sparse)
    ``mat2``; gradients flow to the dense operand and to ``mat1``'s values. ``reduce``
    (``"sum"``, ``"mean"``, ``"amax"``, ``"amin"``; other than ``"sum"`` for a CSR ``mat1``
    only, as PyTorch) combines the products of each row."""
    if reduce != "sum":
        return mm_reduce(mat1, mat2, reduce)
    return mat1 @ mat2


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
    """Context manager/decorator, and ``enable``/``disable``/``is_enabled``: PyTorch's global
    setting for the sparse constructors (off until the program chooses; choosing silences the
    constructors' warning). disttorch's constructors check the invariants either way."""

    def __init__(self, enable: bool = True) -> None:
        self.state, self.saved = enable, False

    @staticmethod
    def is_enabled() -> bool:
        return INVARIANT_CHECKS[0]

    @staticmethod
    def enable() -> None:
        INVARIANT_CHECKS[:] = [True, True]

    @staticmethod
    def disable() -> None:
        INVARIANT_CHECKS[:] = [False, True]

    def __enter__(self) -> check_sparse_tensor_invariants:
        self.saved = INVARIANT_CHECKS[0]
        INVARIANT_CHECKS[:] = [self.state, True]
        return self

    def __exit__(self, *exc: object) -> None:
        INVARIANT_CHECKS[:] = [self.saved, True]

    def __call__(self, fn: Any) -> Any:
        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with check_sparse_tensor_invariants(self.state):
                return fn(*args, **kwargs)

        return wrapper
