"""The package name reprs print: ``torch`` while disttorch stands in for PyTorch (the
``import torch`` alias, ``disttorch.as_torch``), ``disttorch`` otherwise. Under the alias a
program that prints ``x.dtype`` or ``x.shape``, or edits ``str(dtype)`` (``.replace("torch.",
"")``, as accelerate and transformers do), sees what it would see with PyTorch."""

from __future__ import annotations

import sys

__all__ = ["name_top_level_classes", "package_name"]


def package_name() -> str:
    """``"torch"`` when ``sys.modules["torch"]`` is disttorch, else ``"disttorch"``."""
    return "torch" if sys.modules.get("torch") is sys.modules.get("disttorch") else "disttorch"


#: the classes PyTorch defines in ``torch`` itself (``type(x)`` prints ``<class 'torch.Tensor'>``)
TOP_LEVEL_CLASSES = ("Tensor", "Size", "device", "dtype")


def name_top_level_classes(package: str) -> None:
    """Make ``package`` (``"disttorch"``, or ``"torch"`` when the alias comes on) the
    ``__module__`` of :data:`TOP_LEVEL_CLASSES`, so their reprs name the package as PyTorch's
    do, not disttorch's private module."""
    top = sys.modules["disttorch"]
    for name in TOP_LEVEL_CLASSES:
        getattr(top, name).__module__ = package
