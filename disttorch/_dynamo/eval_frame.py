"""``torch._dynamo.eval_frame``: ``OptimizedModule``, ``is_dynamo_supported`` and the object
``torch.compiler.set_stance`` returns."""

from __future__ import annotations

from .._compile import set_stance
from ..compiler import OptimizedModule

__all__ = ["OptimizedModule", "is_dynamo_supported", "set_stance"]


def is_dynamo_supported() -> bool:
    """True: ``torch.compile`` can be called on this platform (here it runs the model eagerly)."""
    return True
