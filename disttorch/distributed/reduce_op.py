"""``ReduceOp``: how a reduction combines the values of all ranks.

Each op maps to a NumPy ufunc applied as ``ufunc(acc, incoming, out=acc)`` by the
algorithms. ``AVG`` is carried out as ``SUM`` followed by a division by the group size (in
the process group, floating-point tensors only). For ``bool`` tensors ``SUM``/``MAX`` are a
logical or and ``PRODUCT``/``MIN`` a logical and, as in PyTorch.
"""

from __future__ import annotations

import enum

import numpy as np

__all__ = ["ReduceOp"]


class ReduceOp(enum.Enum):
    """Reduction operations for :func:`all_reduce`, :func:`reduce` and the reduce-scatters.

    Usable as ``dist.ReduceOp.SUM`` like PyTorch's. ``BAND``/``BOR``/``BXOR`` apply to
    integer and bool tensors only.
    """

    SUM = 0
    AVG = 1
    PRODUCT = 2
    MIN = 3
    MAX = 4
    BAND = 5
    BOR = 6
    BXOR = 7

    def ufunc(self, dtype: np.dtype) -> np.ufunc:
        """The ufunc that combines two arrays of ``dtype`` for this op (``AVG`` sums).

        Raises:
            TypeError: the op is not defined for ``dtype`` (``AVG`` on integers or bool,
                bitwise ops on floating point).
        """
        dtype = np.dtype(dtype)
        if self is ReduceOp.AVG and dtype.kind not in "fc":
            raise TypeError(
                f"ReduceOp.AVG needs a floating-point tensor, got {dtype}; "
                "use ReduceOp.SUM and divide, or convert to a float dtype"
            )
        if self in (ReduceOp.BAND, ReduceOp.BOR, ReduceOp.BXOR) and dtype.kind not in "biu":
            raise TypeError(f"ReduceOp.{self.name} needs an integer or bool tensor, got {dtype}")
        if dtype.kind == "b":
            return _BOOL_UFUNCS[self]
        return _UFUNCS[self]


#: PyTorch's ``ReduceOp.RedOpType``, the type of ``ReduceOp.SUM`` & co: here the enum itself
ReduceOp.RedOpType = ReduceOp  # type: ignore[attr-defined]

_UFUNCS = {
    ReduceOp.SUM: np.add,
    ReduceOp.AVG: np.add,
    ReduceOp.PRODUCT: np.multiply,
    ReduceOp.MIN: np.minimum,
    ReduceOp.MAX: np.maximum,
    ReduceOp.BAND: np.bitwise_and,
    ReduceOp.BOR: np.bitwise_or,
    ReduceOp.BXOR: np.bitwise_xor,
}
_BOOL_UFUNCS = {
    ReduceOp.SUM: np.logical_or,
    ReduceOp.PRODUCT: np.logical_and,
    ReduceOp.MIN: np.logical_and,
    ReduceOp.MAX: np.logical_or,
    ReduceOp.BAND: np.logical_and,
    ReduceOp.BOR: np.logical_or,
    ReduceOp.BXOR: np.logical_xor,
}
