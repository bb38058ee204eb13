"""``torch.torch_version``: ``TorchVersion``, a version string that compares as a version
(``torch.__version__ >= "2.1"``, ``>= (2, 1)``)."""

from __future__ import annotations

import re
from typing import Any

__all__ = ["TorchVersion", "internal_version"]  # noqa: F822 (internal_version: __getattr__)


def _parts(v: Any) -> tuple:
    if isinstance(v, (tuple, list)):
        return tuple(int(x) for x in v)
    m = re.match(r"^\s*v?(\d+(?:\.\d+)*)", str(v))
    if m is None:
        raise ValueError(f"Invalid version: {v!r} (expected something like '2.1.0' or (2, 1))")
    return tuple(int(x) for x in m.group(1).split("."))


class TorchVersion(str):
    """A ``str`` whose comparisons with strings and tuples compare release numbers
    (``"2.10" > "2.9"``); local suffixes (``+cpu``) are ignored in comparisons."""

    def _cmp(self, other: Any) -> tuple[tuple, tuple]:
        a, b = _parts(self), _parts(other)
        width = max(len(a), len(b))
        return a + (0,) * (width - len(a)), b + (0,) * (width - len(b))

    def __lt__(self, other: Any) -> bool:
        a, b = self._cmp(other)
        return a < b

    def __le__(self, other: Any) -> bool:
        a, b = self._cmp(other)
        return a <= b

    def __gt__(self, other: Any) -> bool:
        a, b = self._cmp(other)
        return a > b

    def __ge__(self, other: Any) -> bool:
        a, b = self._cmp(other)
        return a >= b

    def __eq__(self, other: Any) -> bool:
        if isinstance(other, str) and str.__eq__(self, other):
            return True
        try:
            a, b = self._cmp(other)
        except (ValueError, TypeError):
            return False
        return a == b

    __hash__ = str.__hash__


def __getattr__(name: str) -> object:
    """``internal_version``: the package's ``__version__`` as a ``TorchVersion`` (read each
    time: the ``import torch`` alias relabels it)."""
    if name == "internal_version":
        import disttorch

        return TorchVersion(disttorch.__version__)
    raise AttributeError(f"module 'disttorch.torch_version' has no attribute '{name}'")
