"""``torch.backends.cpu``: the CPU's vector capability, as PyTorch names it."""

from __future__ import annotations

__all__ = ["get_cpu_capability"]


def get_cpu_capability() -> str:
    """``"AVX512"``, ``"AVX2"`` or ``"DEFAULT"`` (x86), from what NumPy detected on this CPU."""
    try:
        from numpy._core._multiarray_umath import __cpu_features__ as feats
    except ImportError:  # NumPy 1.x
        from numpy.core._multiarray_umath import __cpu_features__ as feats
    if all(feats.get(f) for f in ("AVX512F", "AVX512BW", "AVX512VL", "AVX512DQ")):
        return "AVX512"
    if feats.get("AVX2"):
        return "AVX2"
    return "DEFAULT"
