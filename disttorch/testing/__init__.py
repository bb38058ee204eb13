"""``torch.testing``: :func:`assert_close` with PyTorch's tolerances and messages."""

from __future__ import annotations

from ._comparison import assert_close

__all__ = ["assert_close"]
