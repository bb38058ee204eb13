"""``torch.utils.benchmark.utils.fuzzer``: PyTorch's home of these names, which code imports them
from (``from torch.utils.benchmark.utils.fuzzer import ...``); they live in :mod:`..fuzzer`."""

from ..fuzzer import *  # noqa: F403
from ..fuzzer import __all__  # noqa: F401
