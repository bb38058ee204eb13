"""``torch.cuda`` on a CPU-only build: no CUDA device is ever available; ``cuda.amp``
holds the (deprecated) CUDA spellings of autocast and GradScaler."""
from __future__ import annotations

from . import amp

__all__ = ["amp", "is_available"]


def is_available() -> bool:
    """False: disttorch computes on the CPU only (as PyTorch's CPU build answers)."""
    return False
