"""``torch.utils.benchmark.utils.compare``: PyTorch's home of these names, which code imports them
from (``from torch.utils.benchmark.utils.compare import ...``); they live in :mod:`..compare`."""

from ..compare import *  # noqa: F403
from ..compare import __all__  # noqa: F401
