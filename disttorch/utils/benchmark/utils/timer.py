"""``torch.utils.benchmark.utils.timer``: PyTorch's home of these names, which code imports them
from (``from torch.utils.benchmark.utils.timer import ...``); they live in :mod:`..timer`."""

from ..timer import *  # noqa: F403
from ..timer import __all__  # noqa: F401
