"""What this CPU can do, as NumPy detected it at import (``AVX512F``, ``AVX512VNNI``, ...).

PyTorch's CPU build picks kernels by these features at run time, and some pick other
roundings: fbgemm's int8 products (VNNI or not), oneDNN's native float16 convolution
(AVX512-FP16 or not). disttorch reads the same features to answer as PyTorch does on the
same machine.
"""

from __future__ import annotations

import functools

__all__ = ["float_lanes", "has"]


@functools.cache
def _features() -> dict[str, bool]:
    try:
        from numpy._core._multiarray_umath import __cpu_features__ as features
    except ImportError:  # NumPy 1.x
        from numpy.core._multiarray_umath import __cpu_features__ as features
    return dict(features)


def has(*names: str) -> bool:
    """Whether this CPU has every one of the features ``names`` (NumPy's names)."""
    features = _features()
    return all(features.get(name, False) for name in names)


def float_lanes() -> int:
    """The float32 lanes of PyTorch's CPU vectors (``Vectorized<float>::size()``) on this CPU:
    16 where its AVX512 kernels run (AVX512F+BW+VL+DQ, as :mod:`disttorch.backends.cpu`
    answers), else 8 (its AVX2 kernels, and the 256-bit default vectors)."""
    return 16 if has("AVX512F", "AVX512BW", "AVX512VL", "AVX512DQ") else 8
