"""``torch.version``: what this build is. ``__version__`` is disttorch's own version;
``cuda``, ``hip`` and ``xpu`` are None (no GPU toolkit), as on a CPU build of PyTorch."""
from __future__ import annotations

__all__ = ["__version__", "cuda", "debug", "git_version", "hip", "xpu"]

__version__ = "0.1.0"
cuda: str | None = None
hip: str | None = None
xpu: str | None = None
debug = False
git_version = "Unknown"
