"""``torch._higher_order_ops``: operators that take functions (``associative_scan``, ``cond``,
``while_loop``)."""

from .associative_scan import associative_scan
from .control_flow import cond, while_loop

__all__ = ["associative_scan", "cond", "while_loop"]
