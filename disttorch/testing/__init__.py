"""``torch.testing``: :func:`assert_close` with PyTorch's tolerances and messages (and the
deprecated :func:`assert_allclose`), and :func:`make_tensor`."""

from ._comparison import assert_allclose, assert_close
from ._creation import make_tensor

__all__ = ["assert_allclose", "assert_close", "make_tensor"]
