"""``ReduceOp``: how a reduction combines the values of all ranks.

Each op maps to a NumPy ufunc applied as ``ufunc(acc, incoming, out=acc)`` by the
algorithms. ``AVG`` is carried out as ``SUM`` followed by a division by the group size (in
the process group, floating-point tensors only). For ``bool`` tensors ``SUM``/``MAX`` are a
logical or and ``PRODUCT``/``MIN`` a logical and, as in PyTorch.
"""

from __future__ import annotations

import enum
import warnings

import numpy as np

from .._dtype import FLOAT_KINDS, scalar_type_name

__all__ = ["ReduceOp", "reduce_op", "supports_complex"]


class ReduceOp(enum.Enum):
    """Reduction operations for :func:`all_reduce`, :func:`reduce` and the reduce-scatters.

    Usable as ``dist.ReduceOp.SUM`` like PyTorch's. ``BAND``/``BOR``/``BXOR`` apply to
    integer and bool tensors only, ``AVG`` to floating-point and complex ones, and complex
    tensors take only ``SUM`` and ``AVG`` (see :meth:`ufunc`).
    """

    SUM = 0
    AVG = 1
    PRODUCT = 2
    MIN = 3
    MAX = 4
    BAND = 5
    BOR = 6
    BXOR = 7

    def __repr__(self) -> str:
        return f"<RedOpType.{self.name}: {self.value}>"

    def __str__(self) -> str:
        return f"RedOpType.{self.name}"

    def ufunc(self, dtype: np.dtype, collective: str = "all_reduce") -> np.ufunc:
        """The ufunc that combines two arrays of ``dtype`` for this op (``AVG`` sums).

        Which op applies to which dtype follows PyTorch with gloo, as do the error types:

        - complex: ``SUM`` and ``AVG`` only (complex numbers are unordered, and PyTorch
          refuses ``PRODUCT`` too): ``ValueError`` from ``all_reduce`` and ``RuntimeError``
          from ``reduce`` and the reduce-scatters, as PyTorch raises them;
        - floating point: every op but the bitwise ones (``RuntimeError``);
        - integers and bool: every op but ``AVG`` (``RuntimeError``; PyTorch fails casting
          the mean back to the integer dtype).

        Args:
            dtype: the tensor's dtype.
            collective: the calling collective's name, for the message.
        """
        dtype = np.dtype(dtype)
        if dtype.kind == "c" and self not in (ReduceOp.SUM, ReduceOp.AVG):
            raise (ValueError if collective == "all_reduce" else RuntimeError)(
                f"{collective} does not support ReduceOp.{self.name} on complex tensors ({dtype}): "
                "only SUM and AVG are defined for them; reduce the real and imaginary parts "
                "(torch.view_as_real) if that is what you mean"
            )
        if self is ReduceOp.AVG and dtype.kind not in FLOAT_KINDS + "c":
            raise RuntimeError(
                f"result type Float can't be cast to the desired output type {scalar_type_name(dtype)}: "
                f"ReduceOp.AVG needs a floating-point tensor, got {dtype}; "
                "use ReduceOp.SUM and divide, or convert to a float dtype"
            )
        if self in (ReduceOp.BAND, ReduceOp.BOR, ReduceOp.BXOR) and dtype.kind not in "biu":
            raise RuntimeError(f"Cannot use ReduceOp.{self.name} with non-integral dtype {dtype}")
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


class _reduce_op:
    """PyTorch's deprecated ``dist.reduce_op``: ``reduce_op.SUM`` is ``ReduceOp.SUM``, with a
    ``FutureWarning`` on every attribute read, as PyTorch warns."""

    def __getattr__(self, name: str) -> ReduceOp:
        warnings.warn(
            "`torch.distributed.reduce_op` is deprecated, please use `torch.distributed.ReduceOp` instead",
            FutureWarning,
            stacklevel=2,
        )
        if name == "__members__":
            return ReduceOp.__members__
        try:
            return ReduceOp[name]
        except KeyError:
            raise AttributeError(f"'_reduce_op' object has no attribute '{name}'") from None


#: ``dist.reduce_op``, the deprecated name of :class:`ReduceOp`
reduce_op = _reduce_op()


def supports_complex(reduce_op: ReduceOp) -> bool:
    """Whether ``reduce_op`` may reduce complex tensors: not MAX, MIN, PRODUCT or the bitwise
    ops (complex numbers have no order, and PyTorch refuses their product too)."""
    return reduce_op not in (
        ReduceOp.MAX,
        ReduceOp.MIN,
        ReduceOp.PRODUCT,
        ReduceOp.BAND,
        ReduceOp.BOR,
        ReduceOp.BXOR,
    )
