"""``torch.version``: what this build is. ``__version__`` is the package's: disttorch's own
version, or under the ``import torch`` alias the PyTorch API version it stands in for
(``2.13.0+disttorch.0.1.0``); ``cuda``, ``hip`` and ``xpu`` are None (no GPU toolkit), as on
a CPU build of PyTorch."""

from __future__ import annotations

__all__ = ["__version__", "cuda", "debug", "git_version", "hip", "xpu"]  # noqa: F822 (__version__: __getattr__)

cuda: str | None = None
hip: str | None = None
xpu: str | None = None
debug = False
git_version = "Unknown"


def __getattr__(name: str) -> object:
    """``__version__`` is read from the package each time (the alias may relabel it)."""
    if name == "__version__":
        import disttorch

        return disttorch.__version__
    raise AttributeError(f"module 'disttorch.version' has no attribute '{name}'")
