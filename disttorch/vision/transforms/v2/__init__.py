"""``torchvision.transforms.v2``: only its ``functional`` module (on plain tensor and PIL
images) is provided here, which is what libraries import (transformers' image processors);
the v2 transform classes and ``tv_tensors`` are not."""

from . import functional
from .functional import InterpolationMode

__all__ = ["InterpolationMode", "functional"]
