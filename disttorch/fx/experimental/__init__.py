"""``torch.fx.experimental``: graph passes beyond the stable API (``optimization``), and
``symbolic_shapes``' errors."""

from . import optimization, symbolic_shapes

__all__ = ["optimization", "symbolic_shapes"]
