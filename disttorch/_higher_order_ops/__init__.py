"""``torch._higher_order_ops``: operators that take functions (``associative_scan``)."""

from .associative_scan import associative_scan

__all__ = ["associative_scan"]
