"""``torch.version``: what this build is. ``__version__`` is disttorch's own version;
``cuda``, ``hip`` and ``xpu`` are None (no GPU toolkit), as on a CPU build of PyTorch."""

from __future__ import annotations

from . import __version__  # disttorch's own version (one definition, in the package)

__all__ = ["__version__", "cuda", "debug", "git_version", "hip", "xpu"]

cuda: str | None = None
hip: str | None = None
xpu: str | None = None
debug = False
git_version = "Unknown"
