"""``torch._grouped_mm`` (``F.grouped_mm``): one matrix product per group, the groups cut by
``offs`` (int32 ends, non-decreasing) out of the 2-D operand; Mixture-of-Experts layers
multiply each expert's tokens by its weight this way.

=========================  ======================  ===========================================
``mat_a``                  ``mat_b``               result
=========================  ======================  ===========================================
``(M, K)``, rows cut       ``(G, K, N)``           ``(M, N)``: rows ``offs[i-1]:offs[i]`` @ ``b[i]``
``(G, M, K)``              ``(G, K, N)``           ``(G, M, N)``: ``bmm`` (no ``offs``)
``(M, K)``, columns cut    ``(K, N)``, rows cut    ``(G, M, N)``: ``a[:, cut] @ b[cut]``
``(G, M, K)``              ``(K, N)``, columns cut ``(M, N)``: ``a[i] @ b[:, cut]`` per column block
=========================  ======================  ===========================================

The groups are sliced and multiplied with the ordinary ops, so the gradient is theirs. Rows
or columns past ``offs[-1]`` are zeros (PyTorch leaves them unwritten). The checks are
PyTorch's CPU kernel's, in its order and words: float32, bfloat16 or float16 operands, 2-D or
3-D, one of the two dense strides of each matrix 1 and the other a multiple of 16 bytes, no
``bias``, ``out_dtype`` that of ``mat_a``; offsets that decrease or pass the cut dimension
(undefined in PyTorch) are an error here.
"""

from __future__ import annotations

from .._dtype import bfloat16, dtype, float16, float32, int32, scalar_type_name
from .._tensor import Tensor
from .shape import cat, stack

__all__ = ["_grouped_mm"]

_DTYPES = (float32, bfloat16, float16)
_ALIGNMENT = 16


def _check_strides(mat: Tensor) -> None:
    """PyTorch's layout rule: row- or column-major matrices whose leading stride is 16-byte aligned."""
    strides, itemsize = mat.stride(), mat.element_size()
    if strides[-1] == 1:
        aligned = strides[-2] * itemsize % _ALIGNMENT == 0
    elif strides[-2] == 1:
        aligned = strides[-1] * itemsize % _ALIGNMENT == 0
    else:
        raise RuntimeError(
            f"Invalid strides/sizes, got {list(strides)} for strides and {list(mat.shape)} for sizes"
        )
    if not aligned:
        raise RuntimeError("strides should be multiple of 16 bytes")


def _validate(
    mat_a: Tensor, mat_b: Tensor, offs: Tensor | None, bias: Tensor | None, out_dtype: dtype | None
) -> None:
    for name, mat in (("mat_a", mat_a), ("mat_b", mat_b)):
        if mat.dtype not in _DTYPES:
            kind = scalar_type_name(mat.dtype)
            raise RuntimeError(f"Expected {name} to be Float32, BFloat16 or Float16 matrix, got {kind}")
    for name, mat in (("mat_a", mat_a), ("mat_b", mat_b)):
        if mat.dim() not in (2, 3):
            raise RuntimeError(f"{name} has to be 2 or 3d")
    two_d = mat_a.dim() == 2 or mat_b.dim() == 2
    if not (mat_a.dim() == 2 and mat_b.dim() == 2) and mat_a.shape[-1] != mat_b.shape[-2]:
        raise RuntimeError("contraction dimension of mat_a and mat_b must match")
    if (offs is not None) != two_d:
        raise RuntimeError(
            "Have to provide offsets if there is a 2d matrix, or no offset if both matrices are 3d"
        )
    if offs is not None:
        if offs.dim() != 1:
            raise RuntimeError("offs has to be 1D")
        if offs.dtype != int32:
            raise RuntimeError("Offsets have to be int32")
    _check_strides(mat_a)
    _check_strides(mat_b)
    if bias is not None:
        raise RuntimeError("Bias not supported yet")
    if out_dtype is not None and out_dtype != mat_a.dtype:
        raise RuntimeError("Grouped gemm output dtype must match `mat_a` dtype")
    if mat_a.dtype != mat_b.dtype:
        raise RuntimeError(
            f"expected m1 and m2 to have the same dtype, but got: {mat_a.dtype} != {mat_b.dtype}"
        )


def _cuts(offs: Tensor, groups: int | None, size: int) -> list[tuple[int, int]]:
    """``(start, end)`` of each group along a dimension of ``size``."""
    ends = [int(e) for e in offs.tolist()]
    if groups is not None and len(ends) != groups:
        raise RuntimeError("matrix batch sizes have to match")
    starts = [0, *ends[:-1]]
    if any(e < s for s, e in zip(starts, ends)) or (ends and ends[-1] > size):
        raise RuntimeError(f"offs must be non-decreasing and at most {size} (the cut dimension), got {ends}")
    return list(zip(starts, ends))


def _grouped_mm(
    mat_a: Tensor,
    mat_b: Tensor,
    offs: Tensor | None = None,
    bias: Tensor | None = None,
    out_dtype: dtype | None = None,
) -> Tensor:
    """Grouped matrix products (see the module docstring for the four layouts)."""
    _validate(mat_a, mat_b, offs, bias, out_dtype)
    if offs is None:
        if mat_a.shape[0] != mat_b.shape[0]:
            raise RuntimeError("batched dimension has to match")
        return mat_a @ mat_b
    if mat_a.dim() == 2 and mat_b.dim() == 3:
        cuts = _cuts(offs, mat_b.shape[0], mat_a.shape[0])
        rest = mat_a.new_zeros(mat_a.shape[0] - cuts[-1][1], mat_b.shape[-1])
        return cat([mat_a[s:e] @ mat_b[i] for i, (s, e) in enumerate(cuts)] + [rest])
    if mat_a.dim() == 3:
        cuts = _cuts(offs, mat_a.shape[0], mat_b.shape[-1])
        rest = mat_a.new_zeros(mat_a.shape[1], mat_b.shape[-1] - cuts[-1][1])
        return cat([mat_a[i] @ mat_b[:, s:e] for i, (s, e) in enumerate(cuts)] + [rest], dim=1)
    cuts = _cuts(offs, None, min(mat_a.shape[1], mat_b.shape[0]))
    return stack([mat_a[:, s:e] @ mat_b[s:e] for s, e in cuts])
