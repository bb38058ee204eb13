"""``torch.utils.benchmark.utils.common``: PyTorch's home of these names, which code imports them
from (``from torch.utils.benchmark.utils.common import ...``); they live in :mod:`..common`."""

from ..common import *  # noqa: F403
from ..common import __all__  # noqa: F401
