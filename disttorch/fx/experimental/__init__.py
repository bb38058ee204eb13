"""``torch.fx.experimental``: graph passes beyond the stable API (``optimization``)."""

from . import optimization

__all__ = ["optimization"]
