"""PyTorch's refusal to write a result into memory that an input partly shares
(``x[1:].add_(x[:-1])``, ``torch.add(a, b, out=a_shifted)``): the result would depend on the
order elements are visited in. As PyTorch's ``assert_no_partial_overlap``, two dense arrays
whose address ranges meet, but do not coincide element for element, are refused; the same
memory seen the same way (``x.add_(x)``) is allowed, and so is anything not dense (a strided
slice: too hard to tell, PyTorch lets it pass). Costs nothing for operands of unrelated
memory (different NumPy owners)."""

from __future__ import annotations

from typing import Any, Iterable

import numpy as np

from .._memory_format import is_dense
from .._tensor import Tensor

__all__ = ["PARTIAL_OVERLAP_MSG", "refuse_out_overlap", "refuse_partial_overlap"]

#: the ``out=`` functions PyTorch writes without the check (reductions, matrix products)
_UNCHECKED_OUT = frozenset(
    """
    sum nansum mean nanmean prod amax amin max min aminmax argmax argmin all any logsumexp norm
    std var std_mean var_mean median nanmedian mode count_nonzero mm matmul bmm addmm addbmm
    baddbmm addmv addr dot vdot mv inner chain_matmul tril triu mvlgamma softmax log_softmax
    linalg_vector_norm linalg_matrix_norm linalg_norm
    """.split()
)

PARTIAL_OVERLAP_MSG = (
    "unsupported operation: some elements of the input tensor and the written-to tensor refer to a "
    "single memory location. Please clone() the tensor before performing the operation."
)


def _partial(out: np.ndarray, other: np.ndarray) -> bool:
    if other.size == 0 or out.size == 0 or not (is_dense(out) and is_dense(other)):
        return False
    begin_out = out.__array_interface__["data"][0] + sum(
        s * (n - 1) for s, n in zip(out.strides, out.shape) if s < 0
    )
    begin_other = other.__array_interface__["data"][0] + sum(
        s * (n - 1) for s, n in zip(other.strides, other.shape) if s < 0
    )
    end_out, end_other = begin_out + out.nbytes, begin_other + other.nbytes
    if begin_out == begin_other and end_out == end_other:
        return out.strides != other.strides or out.shape != other.shape
    return begin_out < end_other and begin_other < end_out


def refuse_partial_overlap(out: np.ndarray, operands: Iterable[Any]) -> None:
    """PyTorch's RuntimeError when an operand (a Tensor, others are skipped) partly shares
    ``out``'s memory."""
    owner = out.base
    if owner is None:
        owner = out
    for t in operands:
        if isinstance(t, Tensor):
            other = t._data
            base = other.base
            if (
                (base is owner or (base is None and other is owner))
                and other is not out
                and type(other) is np.ndarray
                and type(out) is np.ndarray
                and _partial(out, other)
            ):
                raise RuntimeError(PARTIAL_OVERLAP_MSG)


def refuse_out_overlap(name: str, out: Any, args: tuple, kwargs: dict) -> None:
    """The check for ``torch.<name>(*args, out=out, **kwargs)``: each output (a tensor or a
    tuple of them) against every tensor argument, those inside a list argument too (``cat``)."""
    if name in _UNCHECKED_OUT:
        return
    operands = [a for a in (*args, *kwargs.values()) if isinstance(a, Tensor)]
    for a in (*args, *kwargs.values()):
        if isinstance(a, (list, tuple)):
            operands.extend(t for t in a if isinstance(t, Tensor))
    for o in out if isinstance(out, (list, tuple)) else (out,):
        if isinstance(o, Tensor) and type(o._data) is np.ndarray:
            refuse_partial_overlap(o._data, operands)
