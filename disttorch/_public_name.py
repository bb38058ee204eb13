"""The package name reprs print: ``torch`` while disttorch stands in for PyTorch (the
``import torch`` alias, ``disttorch.as_torch``), ``disttorch`` otherwise. Under the alias a
program that prints ``x.dtype`` or ``x.shape``, or edits ``str(dtype)`` (``.replace("torch.",
"")``, as accelerate and transformers do), sees what it would see with PyTorch."""

from __future__ import annotations

import sys

__all__ = ["package_name"]


def package_name() -> str:
    """``"torch"`` when ``sys.modules["torch"]`` is disttorch, else ``"disttorch"``."""
    return "torch" if sys.modules.get("torch") is sys.modules.get("disttorch") else "disttorch"
