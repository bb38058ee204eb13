"""``torchvision.transforms`` (v1) and its ``functional``: see :mod:`.transforms`.
``transforms.v2`` (imported by name, as torchvision's) holds only v2's ``functional``.
Not provided: the v2 transform classes, auto-augment policies, affine/perspective transforms
(rotation is: ``RandomRotation``, ``functional.rotate``)."""

from . import functional
from .transforms import *  # noqa: F403
from .transforms import __all__ as _names

__all__ = ["functional", *_names]
