"""``torch.utils.benchmark.utils``: the submodules PyTorch keeps its benchmark classes in
(``common``, ``compare``, ``fuzzer``, ``timer``), as aliases of this package's modules."""

from . import common, compare, fuzzer, timer

__all__ = ["common", "compare", "fuzzer", "timer"]
