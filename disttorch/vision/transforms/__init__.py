"""``torchvision.transforms`` (v1) and its ``functional``: see :mod:`.transforms`.
Not provided: the v2 API, auto-augment policies, affine/rotation/perspective transforms."""

from . import functional
from .transforms import *  # noqa: F403
from .transforms import __all__ as _names

__all__ = ["functional", *_names]
