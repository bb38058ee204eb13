"""``torch.fx.passes``: analyses over graph modules (``shape_prop.ShapeProp``)."""

from . import shape_prop

__all__ = ["shape_prop"]
