"""``finfo`` and ``iinfo``: the numerical limits of floating and integer dtypes, as
``torch.finfo`` / ``torch.iinfo`` report them (bfloat16 included, via ml_dtypes)."""

from __future__ import annotations

import math

import numpy as np

from . import _dtype

__all__ = ["finfo", "iinfo"]


class finfo:
    """Limits of a floating dtype: ``bits``, ``eps``, ``max``, ``min``, ``tiny``
    (= ``smallest_normal``), ``resolution`` and ``dtype`` (its name).

    ``finfo()`` describes the default dtype (float32 unless changed).
    """

    bits: int
    eps: float
    max: float
    min: float
    tiny: float
    smallest_normal: float
    resolution: float
    dtype: str

    def __init__(self, type: _dtype.dtype | None = None) -> None:
        d = _dtype.get_default_dtype() if type is None else type
        if isinstance(d, _dtype.dtype) and d.is_complex:  # a complex type: its real parts' limits
            d = d.to_real()
        if not isinstance(d, _dtype.dtype) or not d.is_floating_point:
            raise TypeError(
                f"disttorch.finfo() requires a floating point input type. Use disttorch.iinfo to handle '{d}'"
            )
        if isinstance(d, _dtype._MlDtype):  # bfloat16, float8: ml_dtypes knows their limits
            import ml_dtypes

            info = ml_dtypes.finfo(d.numpy)
        else:
            info = np.finfo(d.numpy)
        self.bits = d.itemsize * 8
        # PyTorch's c10 reports 2**-3 for float8_e5m2fnuz, where ml_dtypes says 2**-2
        self.eps = 0.125 if d.name == "float8_e5m2fnuz" else float(info.eps)
        self.max = float(info.max)
        self.min = float(info.min)
        self.tiny = self.smallest_normal = float(info.smallest_normal)
        self.resolution = 10.0 ** -int(-math.log10(self.eps))  # as PyTorch: a power of ten
        self.dtype = d.name

    def __eq__(self, other: object) -> bool:
        return isinstance(other, finfo) and other.dtype == self.dtype

    def __hash__(self) -> int:
        return hash(("finfo", self.dtype))

    def __repr__(self) -> str:
        return (
            f"finfo(resolution={self.resolution:g}, min={self.min:g}, max={self.max:g}, "
            f"eps={self.eps:g}, smallest_normal={self.smallest_normal:g}, tiny={self.tiny:g}, "
            f"dtype={self.dtype})"
        )


class iinfo:
    """Limits of an integer dtype: ``bits``, ``max``, ``min`` and ``dtype`` (its name)."""

    bits: int
    max: int
    min: int
    dtype: str

    def __init__(self, type: _dtype.dtype) -> None:
        if type is _dtype.bool:
            raise TypeError("disttorch.bool is not supported by disttorch.iinfo")
        if not isinstance(type, _dtype.dtype) or type.is_floating_point:
            raise TypeError(
                f"disttorch.iinfo() requires an integer input type. Use disttorch.finfo to handle '{type}'"
            )
        info = np.iinfo(type.numpy)
        self.bits, self.max, self.min, self.dtype = info.bits, int(info.max), int(info.min), type.name

    def __eq__(self, other: object) -> bool:
        return isinstance(other, iinfo) and other.dtype == self.dtype

    def __hash__(self) -> int:
        return hash(("iinfo", self.dtype))

    def __repr__(self) -> str:
        return f"iinfo(min={self.min:g}, max={self.max:g}, dtype={self.dtype})"
