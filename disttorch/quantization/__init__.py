"""``torch.quantization``: PyTorch's older name of ``torch.ao.quantization`` (the same
objects)."""

from ..ao.quantization import *  # noqa: F403
from ..ao.quantization import __all__  # noqa: F401
