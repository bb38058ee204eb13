"""``torch.backends.cpu``: the CPU's vector capability, as PyTorch names it."""

from __future__ import annotations

from ..kernels import cpu_features

__all__ = ["get_cpu_capability"]


def get_cpu_capability() -> str:
    """``"AVX512"``, ``"AVX2"`` or ``"DEFAULT"`` (x86), from what NumPy detected on this CPU."""
    if cpu_features.has("AVX512F", "AVX512BW", "AVX512VL", "AVX512DQ"):
        return "AVX512"
    if cpu_features.has("AVX2"):
        return "AVX2"
    return "DEFAULT"
