"""``torch.testing``: :func:`assert_close` with PyTorch's tolerances and messages (and the
deprecated :func:`assert_allclose`)."""

from ._comparison import assert_allclose, assert_close

__all__ = ["assert_allclose", "assert_close"]
