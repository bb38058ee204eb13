"""``functorch.experimental.control_flow``: ``cond`` (``torch.cond``) and ``map``, run eagerly."""

from ..._higher_order_ops.control_flow import cond
from ..._higher_order_ops.map import map

__all__ = ["cond", "map"]
