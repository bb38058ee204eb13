"""The name the running program imports this package by: ``disttorch``, or ``torch`` when
the ``import torch`` alias is on (``disttorch.as_torch``), so that reprs read as that
program expects (``torch.float32``, ``torch.Size([2, 3])``, ``torch.return_types.max``).

Only printed text follows it; module and class names (what pickles record) stay
``disttorch``'s.
"""

from __future__ import annotations

__all__ = ["qualified", "use_torch_name"]

_NAME = ["disttorch"]


def qualified(name: str) -> str:
    """``name`` inside the package as the running program spells it: ``torch.float32``."""
    return f"{_NAME[0]}.{name}"


def use_torch_name() -> None:
    """Print names as ``torch.<name>`` from now on (the alias calls this)."""
    _NAME[0] = "torch"
