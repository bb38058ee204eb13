"""``torch._dynamo.eval_frame``: ``OptimizedModule`` and ``is_dynamo_supported``."""

from __future__ import annotations

from ..compiler import OptimizedModule

__all__ = ["OptimizedModule", "is_dynamo_supported"]


def is_dynamo_supported() -> bool:
    """True: ``torch.compile`` can be called on this platform (here it runs the model eagerly)."""
    return True
