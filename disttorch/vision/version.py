"""``torchvision.version``: what this build is. ``__version__`` answers torchvision 0.28, the
release paired with PyTorch 2.13, labelled with disttorch's version; ``cuda`` is None (no
GPU toolkit), as on a CPU build."""

from __future__ import annotations

from disttorch import __version__ as _own_version
from disttorch.as_torch._finder import TORCHVISION_API_VERSION, alias_version

__all__ = ["__version__", "cuda", "git_version"]

__version__ = alias_version(_own_version, TORCHVISION_API_VERSION)
git_version = "Unknown"
cuda: str | None = None
