"""The NumPy array type under tensors on the ``meta`` device."""

from __future__ import annotations

import numpy as np

__all__ = ["MetaArray"]


class MetaArray(np.ndarray):
    """The array under a tensor on the ``meta`` device: it has a shape, a dtype and strides,
    and zeros that nothing reads (``item``, ``tolist``, ``numpy`` raise: PyTorch's meta tensors
    have no data). NumPy keeps the subclass through views and ufuncs, and ``Function.apply``
    marks what an op computes from a meta input as meta, so ops give meta results. The zeros
    are allocated lazily by the OS; an op on meta tensors still computes (on zeros), so it
    costs what the same op on the CPU costs."""
